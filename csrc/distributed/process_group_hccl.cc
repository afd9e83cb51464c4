// torch.distributed's "hccl" backend for flagos tensors: see the header.
#include "distributed/process_group_hccl.h"

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>
#include <c10/core/Event.h>
#include <c10/util/Exception.h>

#include <cstdlib>
#include <string>

#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/stream.h"

namespace flagos {
namespace {

const char* result_name(HcclResult r) {
  switch (r) {
    case HCCL_SUCCESS: return "HCCL_SUCCESS";
    case HCCL_E_PARA: return "HCCL_E_PARA";
    case HCCL_E_PTR: return "HCCL_E_PTR";
    case HCCL_E_MEMORY: return "HCCL_E_MEMORY";
    case HCCL_E_INTERNAL: return "HCCL_E_INTERNAL";
    case HCCL_E_NOT_SUPPORT: return "HCCL_E_NOT_SUPPORT";
    case HCCL_E_TIMEOUT: return "HCCL_E_TIMEOUT";
    case HCCL_E_TCP_CONNECT: return "HCCL_E_TCP_CONNECT";
    case HCCL_E_RUNTIME: return "HCCL_E_RUNTIME";
    case HCCL_E_REMOTE: return "HCCL_E_REMOTE";
    default: return "HCCL error";
  }
}

// Raises DistBackendError (torch.distributed.DistBackendError in Python),
// naming the collective, the device and HCCL's own explanation.
void check_hccl(HcclResult result, const char* op, const char* api, c10::DeviceIndex device) {
  if (result == HCCL_SUCCESS) return;
  const char* detail = aclGetRecentErrMsg();
  C10_THROW_ERROR(DistBackendError,
                  c10::str("flagos hccl ", op, " on flagos:", static_cast<int>(device), ": ", api, " returned ", result_name(result),
                           " (", static_cast<int>(result), ")", detail != nullptr && *detail ? ": " : "",
                           detail != nullptr ? detail : ""));
}

HcclDataType hccl_dtype(const char* op, at::ScalarType type, bool reduces) {
  switch (type) {
    case at::kByte: return HCCL_DATA_TYPE_UINT8;
    case at::kChar: return HCCL_DATA_TYPE_INT8;
    case at::kShort: return HCCL_DATA_TYPE_INT16;
    case at::kInt: return HCCL_DATA_TYPE_INT32;
    case at::kLong: return HCCL_DATA_TYPE_INT64;
    case at::kHalf: return HCCL_DATA_TYPE_FP16;
    case at::kBFloat16: return HCCL_DATA_TYPE_BFP16;
    case at::kFloat: return HCCL_DATA_TYPE_FP32;
    case at::kDouble: return HCCL_DATA_TYPE_FP64;
    case at::kBool:
      if (!reduces) return HCCL_DATA_TYPE_UINT8;  // moved, never combined
      [[fallthrough]];
    default:
      TORCH_CHECK_TYPE(false, "flagos hccl ", op, ": dtype ", type, " is not supported",
                       reduces ? " by reductions" : "");
  }
}

HcclReduceOp hccl_op(const char* op, const c10d::ReduceOp& reduce, at::ScalarType type) {
  switch (reduce.op_) {
    case c10d::ReduceOp::SUM: return HCCL_REDUCE_SUM;
    case c10d::ReduceOp::AVG:
      TORCH_CHECK(at::isFloatingType(type), "flagos hccl ", op, ": ReduceOp.AVG needs a floating-point tensor, got ",
                  type);
      return HCCL_REDUCE_SUM;  // then divided by the world size on the launch device
    case c10d::ReduceOp::PREMUL_SUM:
      TORCH_CHECK(at::isFloatingType(type), "flagos hccl ", op, ": ReduceOp.PREMUL_SUM needs a floating-point tensor, got ",
                  type);
      return HCCL_REDUCE_SUM;  // of the inputs scaled by premul_factor first
    case c10d::ReduceOp::PRODUCT: return HCCL_REDUCE_PROD;
    case c10d::ReduceOp::MIN: return HCCL_REDUCE_MIN;
    case c10d::ReduceOp::MAX: return HCCL_REDUCE_MAX;
    default:
      TORCH_CHECK(false, "flagos hccl ", op, ": reduce op ", static_cast<int>(reduce.op_),
                  " is not supported (SUM, AVG, PREMUL_SUM, PRODUCT, MIN, MAX are)");
  }
}

// `input` times PREMUL_SUM's factor (a new tensor on the launch device), or
// `input` itself for every other reduce op. HCCL has no pre-multiplied sum:
// the scaling is a kernel before the SUM.
at::Tensor premul(const c10d::ReduceOp& reduce, const at::Tensor& input) {
  if (reduce.op_ != c10d::ReduceOp::PREMUL_SUM) return input;
  const auto* factor = dynamic_cast<const c10d::PreMulSumSupplement*>(reduce.supplement_.get());
  TORCH_CHECK(factor != nullptr, "flagos hccl: ReduceOp.PREMUL_SUM without a factor");
  if (factor->tensor_factor.defined()) return input.mul(factor->tensor_factor.to(input.device()));
  return input.mul(factor->double_factor);
}

// The one device of a collective's tensors. Every tensor must be a dense,
// contiguous flagos tensor on that device; tensors spanning devices are an
// error naming the op and the devices, as on CUDA.
c10::DeviceIndex collective_device(const char* op, std::initializer_list<at::TensorList> groups) {
  c10::DeviceIndex device = -1;
  for (at::TensorList group : groups) {
    for (const at::Tensor& t : group) {
      TORCH_CHECK(t.defined() && t.device().is_privateuseone(), "flagos hccl ", op,
                  ": every tensor must be on a flagos device, got one on ", t.defined() ? t.device().str() : "(none)");
      TORCH_CHECK(t.layout() == at::kStrided && t.is_contiguous(), "flagos hccl ", op,
                  ": tensors must be dense and contiguous");
      if (device < 0) {
        device = t.device().index();
      } else {
        TORCH_CHECK(t.device().index() == device, "flagos hccl ", op, ": tensors on flagos:", static_cast<int>(device), " and ",
                    t.device(), "; all tensors of a collective must be on one device");
      }
    }
  }
  TORCH_CHECK(device >= 0, "flagos hccl ", op, ": no tensor given");
  return device;
}

at::Tensor one_tensor(const char* op, const std::vector<at::Tensor>& tensors) {
  TORCH_CHECK(tensors.size() == 1, "flagos hccl ", op, ": takes one tensor per process (one device per process), got ",
              tensors.size());
  return tensors[0];
}

// The root's list of gather outputs or scatter inputs (`which`): world_size
// tensors of `like`'s size and dtype. Other ranks pass none.
std::vector<at::Tensor> root_list(const char* op, const char* which, bool root, int64_t root_rank, int size,
                                  const std::vector<std::vector<at::Tensor>>& lists, const at::Tensor& like) {
  if (!root) {
    TORCH_CHECK(lists.empty() || (lists.size() == 1 && lists[0].empty()), "flagos hccl ", op, ": only the root (rank ",
                root_rank, ") takes ", which, " tensors");
    return {};
  }
  TORCH_CHECK(lists.size() == 1 && lists[0].size() == static_cast<size_t>(size), "flagos hccl ", op,
              ": the root expects one list of world_size (", size, ") ", which, " tensors");
  for (const at::Tensor& t : lists[0])
    TORCH_CHECK(t.numel() == like.numel() && t.scalar_type() == like.scalar_type(), "flagos hccl ", op, ": every ",
                which, " must have ", like.numel(), " elements of ", like.scalar_type());
  return lists[0];
}

// Completes on the launch device's stream: an event recorded after the
// collective on the stream it was queued on.
class HcclWork : public c10d::Work {
 public:
  HcclWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs, c10::Stream stream)
      : c10d::Work(rank, type), outputs_(std::move(outputs)), stream_(stream),
        event_(c10::DeviceType::PrivateUse1) {
    event_.record(stream_);
    future_ = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()),
                                                       std::vector<c10::Device>{stream_.device()});
    future_->markCompleted(c10::IValue(outputs_));
  }

  bool isCompleted() override { return event_.query(); }
  bool isSuccess() const override { return true; }
  std::vector<at::Tensor> result() override { return outputs_; }
  void synchronize() override { event_.synchronize(); }
  bool wait(std::chrono::milliseconds /*timeout*/) override {
    event_.synchronize();
    return true;
  }
  void blockCurrentStream() override {
    const LaunchGuard guard(LaunchDevice{stream_.device_index()});
    event_.block(current_stream(stream_.device_index()));
  }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 private:
  std::vector<at::Tensor> outputs_;
  c10::Stream stream_;
  c10::Event event_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

// Guards on `device` like a kernel launch, then runs `call(comm, stream,
// device)` on that device's communicator and current stream.
template <class Call>
c10::intrusive_ptr<c10d::Work> launch(ProcessGroupHCCL& group, c10d::OpType type, c10::DeviceIndex device,
                                      std::vector<at::Tensor> outputs, Call&& call) {
  const LaunchGuard guard(LaunchDevice{device});
  const c10::DeviceIndex on = guard.device();
  HcclComm comm = group.comm(on);
  const c10::Stream stream = current_stream(on);
  call(comm, acl_stream(stream), on);
  group.record_issued(outputs);
  return c10::make_intrusive<HcclWork>(group.getRank(), type, std::move(outputs), stream);
}

// The user's HCCL_EXEC_TIMEOUT, if it was set before the first group.
bool user_exec_timeout() {
  static const bool set = std::getenv("HCCL_EXEC_TIMEOUT") != nullptr;
  return set;
}

}  // namespace

ProcessGroupHCCL::ProcessGroupHCCL(c10::intrusive_ptr<c10d::Store> store, int rank, int size,
                                   std::chrono::milliseconds timeout)
    : c10d::Backend(rank, size), store_(std::move(store)), timeout_(timeout) {
  user_exec_timeout();
}

ProcessGroupHCCL::~ProcessGroupHCCL() {
  for (auto& [device, comm] : comms_) HcclCommDestroy(comm);
}

HcclComm ProcessGroupHCCL::comm(c10::DeviceIndex device) {
  std::lock_guard lock(mutex_);
  last_device_ = device;
  auto it = comms_.find(device);
  if (it != comms_.end()) return it->second;
  // The group's timeout bounds every wait of the communicator, unless the
  // user set CANN's HCCL_EXEC_TIMEOUT.
  if (!user_exec_timeout()) {
    const double seconds = std::max<double>(1.0, static_cast<double>(timeout_.count()) / 1000.0);
    setenv("HCCL_EXEC_TIMEOUT", std::to_string(seconds).c_str(), 1);
  }
  const std::string key = c10::str("flagos_hccl/root_info/", comms_created_++);
  HcclRootInfo info{};
  if (getRank() == 0) {
    check_hccl(HcclGetRootInfo(&info), "communicator setup", "HcclGetRootInfo", device);
    store_->set(key, std::vector<uint8_t>(info.internal, info.internal + sizeof(info.internal)));
  } else {
    std::vector<uint8_t> bytes = store_->get(key);
    TORCH_CHECK(bytes.size() == sizeof(info.internal), "flagos hccl: the root info in the store has ", bytes.size(),
                " bytes, not ", sizeof(info.internal));
    std::copy(bytes.begin(), bytes.end(), info.internal);
  }
  HcclComm comm = nullptr;
  check_hccl(HcclCommInitRootInfo(static_cast<uint32_t>(getSize()), &info, static_cast<uint32_t>(getRank()), &comm),
             "communicator setup", "HcclCommInitRootInfo", device);
  comms_.emplace(device, comm);
  return comm;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::broadcast(std::vector<at::Tensor>& tensors,
                                                           const c10d::BroadcastOptions& opts) {
  at::Tensor t = one_tensor("broadcast", tensors);
  const c10::DeviceIndex device = collective_device("broadcast", {tensors});
  const HcclDataType type = hccl_dtype("broadcast", t.scalar_type(), false);
  return launch(*this, c10d::OpType::BROADCAST, device, tensors, [&](HcclComm comm, aclrtStream stream, auto on) {
    check_hccl(HcclBroadcast(t.data_ptr(), t.numel(), type, static_cast<uint32_t>(opts.rootRank), comm, stream),
               "broadcast", "HcclBroadcast", on);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::allreduce(std::vector<at::Tensor>& tensors,
                                                           const c10d::AllreduceOptions& opts) {
  at::Tensor t = one_tensor("allreduce", tensors);
  const c10::DeviceIndex device = collective_device("allreduce", {tensors});
  const HcclDataType type = hccl_dtype("allreduce", t.scalar_type(), true);
  const HcclReduceOp op = hccl_op("allreduce", opts.reduceOp, t.scalar_type());
  return launch(*this, c10d::OpType::ALLREDUCE, device, tensors, [&](HcclComm comm, aclrtStream stream, auto on) {
    const at::Tensor in = premul(opts.reduceOp, t);
    check_hccl(HcclAllReduce(in.data_ptr(), t.data_ptr(), t.numel(), type, op, comm, stream), "allreduce",
               "HcclAllReduce", on);
    if (opts.reduceOp == c10d::ReduceOp::AVG) t.div_(getSize());
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                 const c10d::AllgatherOptions& /*opts*/) {
  const c10::DeviceIndex device = collective_device("allgather_into_tensor", {input, output});
  TORCH_CHECK(output.numel() == input.numel() * getSize() && output.scalar_type() == input.scalar_type(),
              "flagos hccl allgather_into_tensor: the output must hold world_size (", getSize(), ") x ",
              input.numel(), " elements of ", input.scalar_type());
  const HcclDataType type = hccl_dtype("allgather_into_tensor", input.scalar_type(), false);
  return launch(*this, c10d::OpType::_ALLGATHER_BASE, device, {output},
                [&](HcclComm comm, aclrtStream stream, auto on) {
                  check_hccl(HcclAllGather(input.data_ptr(), output.data_ptr(), input.numel(), type, comm, stream),
                             "allgather_into_tensor", "HcclAllGather", on);
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                           std::vector<at::Tensor>& inputs,
                                                           const c10d::AllgatherOptions& /*opts*/) {
  at::Tensor input = one_tensor("allgather", inputs);
  TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == static_cast<size_t>(getSize()),
              "flagos hccl allgather: expects one list of world_size (", getSize(), ") output tensors");
  std::vector<at::Tensor>& list = outputs[0];
  const c10::DeviceIndex device = collective_device("allgather", {inputs, list});
  for (const at::Tensor& o : list)
    TORCH_CHECK(o.sizes() == input.sizes() && o.scalar_type() == input.scalar_type(),
                "flagos hccl allgather: every output must have the input's shape and dtype");
  const HcclDataType type = hccl_dtype("allgather", input.scalar_type(), false);
  return launch(*this, c10d::OpType::ALLGATHER, device, list, [&](HcclComm comm, aclrtStream stream, auto on) {
    at::Tensor flat = at::empty({getSize() * input.numel()}, input.options());
    check_hccl(HcclAllGather(input.data_ptr(), flat.data_ptr(), input.numel(), type, comm, stream), "allgather",
               "HcclAllGather", on);
    for (int r = 0; r < getSize(); ++r) list[r].copy_(flat.narrow(0, r * input.numel(), input.numel()).view_as(input));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                      const c10d::ReduceScatterOptions& opts) {
  const c10::DeviceIndex device = collective_device("reduce_scatter_tensor", {input, output});
  TORCH_CHECK(input.numel() == output.numel() * getSize() && output.scalar_type() == input.scalar_type(),
              "flagos hccl reduce_scatter_tensor: the input must hold world_size (", getSize(), ") x ", output.numel(),
              " elements of ", output.scalar_type());
  const HcclDataType type = hccl_dtype("reduce_scatter_tensor", input.scalar_type(), true);
  const HcclReduceOp op = hccl_op("reduce_scatter_tensor", opts.reduceOp, input.scalar_type());
  return launch(*this, c10d::OpType::_REDUCE_SCATTER_BASE, device, {output},
                [&](HcclComm comm, aclrtStream stream, auto on) {
                  const at::Tensor in = premul(opts.reduceOp, input);
                  check_hccl(HcclReduceScatter(in.data_ptr(), output.data_ptr(), output.numel(), type, op, comm,
                                               stream),
                             "reduce_scatter_tensor", "HcclReduceScatter", on);
                  if (opts.reduceOp == c10d::ReduceOp::AVG) output.div_(getSize());
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                                const c10d::ReduceScatterOptions& opts) {
  at::Tensor output = one_tensor("reduce_scatter", outputs);
  TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == static_cast<size_t>(getSize()),
              "flagos hccl reduce_scatter: expects one list of world_size (", getSize(), ") input tensors");
  const c10::DeviceIndex device = collective_device("reduce_scatter", {outputs, inputs[0]});
  for (const at::Tensor& i : inputs[0])
    TORCH_CHECK(i.sizes() == output.sizes() && i.scalar_type() == output.scalar_type(),
                "flagos hccl reduce_scatter: every input must have the output's shape and dtype");
  const HcclDataType type = hccl_dtype("reduce_scatter", output.scalar_type(), true);
  const HcclReduceOp op = hccl_op("reduce_scatter", opts.reduceOp, output.scalar_type());
  return launch(*this, c10d::OpType::REDUCE_SCATTER, device, outputs, [&](HcclComm comm, aclrtStream stream, auto on) {
    std::vector<at::Tensor> flat_inputs;
    for (const at::Tensor& i : inputs[0]) flat_inputs.push_back(i.reshape({-1}));
    at::Tensor flat = premul(opts.reduceOp, at::cat(flat_inputs));
    check_hccl(HcclReduceScatter(flat.data_ptr(), output.data_ptr(), output.numel(), type, op, comm, stream),
               "reduce_scatter", "HcclReduceScatter", on);
    if (opts.reduceOp == c10d::ReduceOp::AVG) output.div_(getSize());
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                               std::vector<int64_t>& outputSplitSizes,
                                                               std::vector<int64_t>& inputSplitSizes,
                                                               const c10d::AllToAllOptions& /*opts*/) {
  const c10::DeviceIndex device = collective_device("all_to_all_single", {input, output});
  TORCH_CHECK(input.scalar_type() == output.scalar_type(), "flagos hccl all_to_all_single: input (",
              input.scalar_type(), ") and output (", output.scalar_type(), ") dtypes differ");
  const HcclDataType type = hccl_dtype("all_to_all_single", input.scalar_type(), false);
  // Split sizes count rows (dim 0); HCCL counts elements. No splits means
  // equal parts for every rank.
  auto elements = [&](const std::vector<int64_t>& splits, const at::Tensor& t, const char* which) {
    const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
    const int64_t per_row = rows == 0 ? 0 : t.numel() / rows;
    std::vector<uint64_t> counts(getSize()), displs(getSize());
    if (splits.empty()) {
      TORCH_CHECK(rows % getSize() == 0, "flagos hccl all_to_all_single: the ", which, " has ", rows,
                  " rows, not divisible by world_size (", getSize(), "); pass split sizes");
      std::fill(counts.begin(), counts.end(), static_cast<uint64_t>(rows / getSize() * per_row));
    } else {
      TORCH_CHECK(splits.size() == static_cast<size_t>(getSize()), "flagos hccl all_to_all_single: ", which,
                  " split sizes has ", splits.size(), " entries for world_size ", getSize());
      int64_t total = 0;
      for (size_t r = 0; r < splits.size(); ++r) {
        TORCH_CHECK(splits[r] >= 0, "flagos hccl all_to_all_single: negative ", which, " split size");
        counts[r] = static_cast<uint64_t>(splits[r] * per_row);
        total += splits[r];
      }
      TORCH_CHECK(total == rows, "flagos hccl all_to_all_single: ", which, " split sizes add up to ", total,
                  " rows but the tensor has ", rows);
    }
    for (size_t r = 1; r < counts.size(); ++r) displs[r] = displs[r - 1] + counts[r - 1];
    return std::make_pair(counts, displs);
  };
  auto [send_counts, send_displs] = elements(inputSplitSizes, input, "input");
  auto [recv_counts, recv_displs] = elements(outputSplitSizes, output, "output");
  return launch(*this, c10d::OpType::ALLTOALL_BASE, device, {output}, [&](HcclComm comm, aclrtStream stream, auto on) {
    check_hccl(HcclAlltoAllV(input.data_ptr(), send_counts.data(), send_displs.data(), type, output.data_ptr(),
                             recv_counts.data(), recv_displs.data(), type, comm, stream),
               "all_to_all_single", "HcclAlltoAllV", on);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::alltoall(std::vector<at::Tensor>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::AllToAllOptions& /*opts*/) {
  TORCH_CHECK(outputs.size() == static_cast<size_t>(getSize()) && inputs.size() == outputs.size(),
              "flagos hccl all_to_all: expects world_size (", getSize(), ") input and output tensors");
  const c10::DeviceIndex device = collective_device("all_to_all", {inputs, outputs});
  for (size_t i = 0; i < inputs.size(); ++i)
    TORCH_CHECK(inputs[i].sizes() == inputs[0].sizes() && outputs[i].sizes() == inputs[0].sizes() &&
                    inputs[i].scalar_type() == inputs[0].scalar_type() &&
                    outputs[i].scalar_type() == inputs[0].scalar_type(),
                "flagos hccl all_to_all: only tensors of one shape and dtype are supported");
  const HcclDataType type = hccl_dtype("all_to_all", inputs[0].scalar_type(), false);
  return launch(*this, c10d::OpType::ALLTOALL, device, outputs, [&](HcclComm comm, aclrtStream stream, auto on) {
    std::vector<at::Tensor> flat_inputs;
    for (const at::Tensor& i : inputs) flat_inputs.push_back(i.reshape({-1}));
    at::Tensor flat_in = at::cat(flat_inputs);
    at::Tensor flat_out = at::empty_like(flat_in);
    const uint64_t count = inputs[0].numel();
    check_hccl(HcclAlltoAll(flat_in.data_ptr(), count, type, flat_out.data_ptr(), count, type, comm, stream),
               "all_to_all", "HcclAlltoAll", on);
    for (size_t r = 0; r < outputs.size(); ++r)
      outputs[r].copy_(flat_out.narrow(0, r * count, count).view_as(outputs[r]));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::send(std::vector<at::Tensor>& tensors, int dstRank, int /*tag*/) {
  at::Tensor t = one_tensor("send", tensors);
  const c10::DeviceIndex device = collective_device("send", {tensors});
  const HcclDataType type = hccl_dtype("send", t.scalar_type(), false);
  return launch(*this, c10d::OpType::SEND, device, tensors, [&](HcclComm comm, aclrtStream stream, auto on) {
    check_hccl(HcclSend(t.data_ptr(), t.numel(), type, static_cast<uint32_t>(dstRank), comm, stream), "send",
               "HcclSend", on);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::recv(std::vector<at::Tensor>& tensors, int srcRank, int /*tag*/) {
  at::Tensor t = one_tensor("recv", tensors);
  const c10::DeviceIndex device = collective_device("recv", {tensors});
  const HcclDataType type = hccl_dtype("recv", t.scalar_type(), false);
  return launch(*this, c10d::OpType::RECV, device, tensors, [&](HcclComm comm, aclrtStream stream, auto on) {
    check_hccl(HcclRecv(t.data_ptr(), t.numel(), type, static_cast<uint32_t>(srcRank), comm, stream), "recv",
               "HcclRecv", on);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::reduce(std::vector<at::Tensor>& tensors,
                                                        const c10d::ReduceOptions& opts) {
  at::Tensor t = one_tensor("reduce", tensors);
  const c10::DeviceIndex device = collective_device("reduce", {tensors});
  const HcclDataType type = hccl_dtype("reduce", t.scalar_type(), true);
  const HcclReduceOp op = hccl_op("reduce", opts.reduceOp, t.scalar_type());
  const bool root = opts.rootRank == getRank();
  return launch(*this, c10d::OpType::REDUCE, device, tensors, [&](HcclComm comm, aclrtStream stream, auto on) {
    // Only the root's tensor changes, as with NCCL: the others keep their input.
    const at::Tensor in = premul(opts.reduceOp, t);
    const at::Tensor out = root ? t : at::empty_like(t);
    check_hccl(HcclReduce(in.data_ptr(), out.data_ptr(), t.numel(), type, op, static_cast<uint32_t>(opts.rootRank),
                          comm, stream),
               "reduce", "HcclReduce", on);
    if (root && opts.reduceOp == c10d::ReduceOp::AVG) t.div_(getSize());
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                        std::vector<at::Tensor>& inputs,
                                                        const c10d::GatherOptions& opts) {
  at::Tensor input = one_tensor("gather", inputs);
  const bool root = opts.rootRank == getRank();
  std::vector<at::Tensor> gathered = root_list("gather", "output", root, opts.rootRank, getSize(), outputs, input);
  const c10::DeviceIndex device = collective_device("gather", {inputs, gathered});
  const HcclDataType type = hccl_dtype("gather", input.scalar_type(), false);
  return launch(*this, c10d::OpType::GATHER, device, gathered, [&](HcclComm comm, aclrtStream stream, auto on) {
    // HCCL has no gather: an all-to-all in which every rank sends its input
    // to the root only.
    const uint64_t n = static_cast<uint64_t>(input.numel());
    std::vector<uint64_t> send_counts(getSize(), 0), send_displs(getSize(), 0);
    std::vector<uint64_t> recv_counts(getSize(), root ? n : 0), recv_displs(getSize(), 0);
    send_counts[opts.rootRank] = n;
    for (int r = 0; r < getSize(); ++r) recv_displs[r] = root ? r * n : 0;
    at::Tensor flat = at::empty({root ? getSize() * input.numel() : 0}, input.options());
    check_hccl(HcclAlltoAllV(input.data_ptr(), send_counts.data(), send_displs.data(), type, flat.data_ptr(),
                             recv_counts.data(), recv_displs.data(), type, comm, stream),
               "gather", "HcclAlltoAllV", on);
    for (int r = 0; r < static_cast<int>(gathered.size()); ++r)
      gathered[r].copy_(flat.narrow(0, r * input.numel(), input.numel()).view_as(gathered[r]));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::scatter(std::vector<at::Tensor>& outputs,
                                                         std::vector<std::vector<at::Tensor>>& inputs,
                                                         const c10d::ScatterOptions& opts) {
  at::Tensor output = one_tensor("scatter", outputs);
  const bool root = opts.rootRank == getRank();
  std::vector<at::Tensor> parts = root_list("scatter", "input", root, opts.rootRank, getSize(), inputs, output);
  const c10::DeviceIndex device = collective_device("scatter", {outputs, parts});
  const HcclDataType type = hccl_dtype("scatter", output.scalar_type(), false);
  return launch(*this, c10d::OpType::SCATTER, device, outputs, [&](HcclComm comm, aclrtStream stream, auto on) {
    std::vector<at::Tensor> flat_parts;
    for (const at::Tensor& i : parts) flat_parts.push_back(i.reshape({-1}));
    // Only the root's send buffer is read; the others pass their output.
    at::Tensor flat = root ? at::cat(flat_parts) : output;
    check_hccl(HcclScatter(flat.data_ptr(), output.data_ptr(), output.numel(), type,
                           static_cast<uint32_t>(opts.rootRank), comm, stream),
               "scatter", "HcclScatter", on);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                     const c10d::AllreduceCoalescedOptions& opts) {
  const c10::DeviceIndex device = collective_device("allreduce_coalesced", {tensors});
  c10d::AllreduceOptions one;
  one.reduceOp = opts.reduceOp;
  one.timeout = opts.timeout;
  for (const at::Tensor& t : tensors) {
    std::vector<at::Tensor> single{t};
    allreduce(single, one);
  }
  return launch(*this, c10d::OpType::COALESCED, device, tensors, [](HcclComm, aclrtStream, auto) {});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                                 std::vector<at::Tensor>& inputs,
                                                                                 const c10d::AllgatherOptions& opts) {
  TORCH_CHECK(outputs.size() == inputs.size(), "flagos hccl allgather_into_tensor_coalesced: ", outputs.size(),
              " outputs for ", inputs.size(), " inputs");
  const c10::DeviceIndex device = collective_device("allgather_into_tensor_coalesced", {inputs, outputs});
  for (size_t i = 0; i < inputs.size(); ++i) _allgather_base(outputs[i], inputs[i], opts);
  return launch(*this, c10d::OpType::COALESCED, device, outputs, [](HcclComm, aclrtStream, auto) {});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs, const c10d::ReduceScatterOptions& opts) {
  TORCH_CHECK(outputs.size() == inputs.size(), "flagos hccl reduce_scatter_tensor_coalesced: ", outputs.size(),
              " outputs for ", inputs.size(), " inputs");
  const c10::DeviceIndex device = collective_device("reduce_scatter_tensor_coalesced", {inputs, outputs});
  for (size_t i = 0; i < inputs.size(); ++i) _reduce_scatter_base(outputs[i], inputs[i], opts);
  return launch(*this, c10d::OpType::COALESCED, device, outputs, [](HcclComm, aclrtStream, auto) {});
}

void ProcessGroupHCCL::startCoalescing() {
  std::lock_guard lock(mutex_);
  TORCH_CHECK(!coalescing_, "flagos hccl: startCoalescing called twice without endCoalescing");
  coalescing_ = true;
  coalesced_outputs_.clear();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::endCoalescing() {
  std::vector<at::Tensor> outputs;
  c10::DeviceIndex device = -1;
  {
    std::lock_guard lock(mutex_);
    TORCH_CHECK(coalescing_, "flagos hccl: endCoalescing without startCoalescing");
    coalescing_ = false;
    outputs.swap(coalesced_outputs_);
    device = last_device_;
  }
  if (device < 0) device = current_device();
  // Completes after the last collective issued in between (same stream).
  return launch(*this, c10d::OpType::COALESCED, device, std::move(outputs), [](HcclComm, aclrtStream, auto) {});
}

void ProcessGroupHCCL::record_issued(const std::vector<at::Tensor>& outputs) {
  std::lock_guard lock(mutex_);
  if (coalescing_) coalesced_outputs_.insert(coalesced_outputs_.end(), outputs.begin(), outputs.end());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::barrier(const c10d::BarrierOptions& opts) {
  // The device the caller names (device_ids), else the device of the
  // group's last collective, else opts.device (torch.distributed fills it
  // with the current device), else the current device: with one device per
  // process and flagos:0 current everywhere, the group's own device is the
  // one a barrier should use.
  c10::DeviceIndex device = -1;
  if (!opts.device_ids.empty()) device = static_cast<c10::DeviceIndex>(opts.device_ids[0]);
  if (device < 0) {
    std::lock_guard lock(mutex_);
    device = last_device_;
  }
  if (device < 0 && opts.device.has_value() && opts.device->is_privateuseone() && opts.device->has_index())
    device = opts.device->index();
  if (device < 0) device = current_device();
  return launch(*this, c10d::OpType::BARRIER, device, {}, [&](HcclComm comm, aclrtStream stream, auto on) {
    check_hccl(HcclBarrier(comm, stream), "barrier", "HcclBarrier", on);
  });
}

}  // namespace flagos
