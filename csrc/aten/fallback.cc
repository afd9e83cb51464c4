#include "aten/fallback.h"

#include "aten/dtype_fallback.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/core/op_registration/adaption.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/_copy_from_and_resize.h>
#include <ATen/ops/_neg_view.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace flagos {
namespace {

std::atomic<bool> strict_mode{[] {
  const char* value = std::getenv("FLAGOS_STRICT");
  return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
}()};

std::mutex counts_mutex;
std::map<std::string, uint64_t> counts;

// The fallback moves every argument to the CPU, which would silently accept
// tensors of two flagos devices; a kernel of ours would raise, and so does
// CUDA. Check as a kernel would.
std::optional<c10::Device> check_one_flagos_device(const c10::OperatorHandle& op, const torch::jit::Stack& stack,
                                                   const std::string& op_name) {
  const size_t num_args = op.schema().arguments().size();
  std::optional<c10::Device> common;
  auto visit = [&](const at::Tensor& tensor, const std::string& arg) {
    if (tensor.defined() && tensor.is_privateuseone()) {
      c10::impl::check_and_update_common_device(common, tensor, op_name.c_str(), arg.c_str());
    }
  };
  for (size_t i = 0; i < num_args; ++i) {
    const c10::IValue& value = stack[stack.size() - num_args + i];
    const std::string& arg = op.schema().arguments()[i].name();
    if (value.isTensor()) {
      visit(value.toTensor(), arg);
    } else if (value.isTensorList()) {
      for (const at::Tensor& tensor : value.toTensorVector()) visit(tensor, arg);
    } else if (value.isOptionalTensorList()) {
      for (const std::optional<at::Tensor>& tensor : value.toOptionalTensorList().vec()) {
        if (tensor.has_value()) visit(*tensor, arg);
      }
    }
  }
  // An out= tensor (any argument the op writes) must be on the op's device
  // too, as a kernel's check (and CUDA) requires: the fallback would write a
  // CPU out= tensor through its CPU copy and hide the mistake.
  if (!common.has_value()) return common;
  for (size_t i = 0; i < num_args; ++i) {
    const c10::Argument& argument = op.schema().arguments()[i];
    const c10::IValue& value = stack[stack.size() - num_args + i];
    if (argument.alias_info() == nullptr || !argument.alias_info()->isWrite() || !value.isTensor()) continue;
    const at::Tensor& tensor = value.toTensor();
    if (tensor.defined() && !tensor.is_privateuseone()) {
      c10::impl::check_and_update_common_device(common, tensor, op_name.c_str(), argument.name().c_str());
    }
  }
  return common;
}

// ATen's CPU fallback puts new results on the device of the first tensor
// argument, which can be a CPU number wrapped as a 0-dim tensor (1 - x is
// sub(<cpu 0-dim>, x)): a result that aliases no argument belongs on the
// op's flagos device, as a kernel would have made it.
void results_to_device(const c10::OperatorHandle& op, torch::jit::Stack* stack,
                       const std::optional<c10::Device>& device) {
  if (!device.has_value()) return;
  const auto& returns = op.schema().returns();
  const size_t num_returns = returns.size();
  for (size_t i = 0; i < num_returns; ++i) {
    c10::IValue& value = (*stack)[stack->size() - num_returns + i];
    if (returns[i].alias_info() != nullptr) continue;
    if (value.isTensor()) {
      const at::Tensor& tensor = value.toTensor();
      if (tensor.defined() && tensor.is_cpu()) value = tensor.to(*device);
    } else if (value.isTensorList()) {
      std::vector<at::Tensor> tensors = value.toTensorVector();
      bool moved = false;
      for (at::Tensor& tensor : tensors) {
        if (tensor.defined() && tensor.is_cpu()) {
          tensor = tensor.to(*device);
          moved = true;
        }
      }
      if (moved) value = c10::IValue(tensors);
    }
  }
}

// ATen's CPU fallback copies each argument to the CPU on its own. Two
// arguments that share memory on the device (an out= tensor that overlaps
// an input) no longer do on the CPU, and an expanded out= tensor becomes a
// dense one: the CPU kernel cannot refuse them as it does on the CPU, and
// the result is written back into memory its parts share. So when an op
// writes a tensor that overlaps itself or shares its storage with another
// argument, every argument goes to the CPU as a view of a copy of its whole
// storage (one copy per storage): the CPU kernel sees the device's layout.
bool writes_shared_memory(const c10::FunctionSchema& schema, const torch::jit::Stack& stack) {
  const size_t num_args = schema.arguments().size();
  std::vector<std::pair<size_t, at::Tensor>> tensors;  // (argument, tensor) on flagos
  for (size_t i = 0; i < num_args; ++i) {
    const c10::IValue& value = stack[stack.size() - num_args + i];
    auto add = [&](const at::Tensor& t) {
      if (t.defined() && t.is_privateuseone() && t.has_storage()) tensors.emplace_back(i, t);
    };
    if (value.isTensor()) {
      add(value.toTensor());
    } else if (value.isTensorList()) {
      for (const at::Tensor& t : value.toTensorVector()) add(t);
    }
  }
  for (const auto& [index, written] : tensors) {
    const c10::AliasInfo* alias = schema.arguments()[index].alias_info();
    if (alias == nullptr || !alias->isWrite()) continue;
    if (at::has_internal_overlap(written) == at::MemOverlap::Yes) return true;
    for (const auto& [other_index, other] : tensors) {
      if (other_index != index && other.storage().is_alias_of(written.storage())) return true;
    }
  }
  return false;
}

// Runs `op` on the CPU with every flagos argument a view of a CPU copy of
// its storage (see writes_shared_memory), copies the written storages back
// and returns the written arguments themselves for the results that alias
// them; other results stay on the CPU (results_to_device moves them).
void run_on_cpu_with_shared_memory(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const size_t num_args = schema.arguments().size();
  const size_t base = stack->size() - num_args;
  // Some of ATen's CPU kernels (avg_pool3d, narrow_copy) write an expanded
  // out= tensor as if it were dense: each copy gets room behind it for the
  // densest tensor on it, so such a write stays inside the copy; only the
  // storage's own bytes go back.
  std::map<const c10::StorageImpl*, int64_t> room;
  auto note_room = [&](const at::Tensor& t) {
    if (!t.defined() || !t.is_privateuseone() || !t.has_storage()) return;
    int64_t& bytes = room[t.storage().unsafeGetStorageImpl()];
    bytes = std::max(bytes, static_cast<int64_t>((t.storage_offset() + t.numel()) * t.element_size()));
  };
  for (size_t i = 0; i < num_args; ++i) {
    const c10::IValue& value = (*stack)[base + i];
    if (value.isTensor()) {
      note_room(value.toTensor());
    } else if (value.isTensorList()) {
      for (const at::Tensor& t : value.toTensorVector()) note_room(t);
    }
  }
  std::map<const c10::StorageImpl*, std::pair<at::Tensor, at::Tensor>> storages;  // -> (device bytes, CPU bytes)
  auto on_cpu = [&](const at::Tensor& t) -> at::Tensor {
    if (!t.defined() || !t.is_privateuseone() || !t.has_storage()) return t;
    auto found = storages.find(t.storage().unsafeGetStorageImpl());
    if (found == storages.end()) {
      const int64_t nbytes = static_cast<int64_t>(t.storage().nbytes());
      at::Tensor device_bytes = at::empty({0}, t.options().dtype(at::kByte)).set_(t.storage(), 0, {nbytes}, {1});
      const int64_t size = std::max(nbytes, room[t.storage().unsafeGetStorageImpl()]);
      at::Tensor cpu_bytes = at::zeros({size}, at::TensorOptions().dtype(at::kByte));
      cpu_bytes.narrow(0, 0, nbytes).copy_(device_bytes);
      found = storages.emplace(t.storage().unsafeGetStorageImpl(), std::make_pair(device_bytes, cpu_bytes)).first;
    }
    at::Tensor view = at::empty({0}, t.options().device(at::kCPU))
                          .set_(found->second.second.storage(), t.storage_offset(), t.sizes(), t.strides());
    if (t.is_conj()) view = view.conj();
    if (t.is_neg()) view = at::_neg_view(view);
    return view;
  };
  std::vector<c10::IValue> originals(stack->begin() + base, stack->end());
  std::vector<std::pair<at::Tensor, at::Tensor>> written;  // (flagos tensor, its CPU view)
  for (size_t i = 0; i < num_args; ++i) {
    c10::IValue& value = (*stack)[base + i];
    const c10::AliasInfo* alias = schema.arguments()[i].alias_info();
    const bool writes = alias != nullptr && alias->isWrite();
    if (value.isTensor()) {
      const at::Tensor original = value.toTensor();
      at::Tensor view = on_cpu(original);
      if (writes && original.defined() && original.is_privateuseone()) written.emplace_back(original, view);
      value = view;
    } else if (value.isTensorList()) {
      std::vector<at::Tensor> list = value.toTensorVector();
      for (at::Tensor& t : list) {
        at::Tensor view = on_cpu(t);
        if (writes && t.defined() && t.is_privateuseone()) written.emplace_back(t, view);
        t = view;
      }
      value = c10::IValue(list);
    }
  }
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
  // Written storages go back whole; a written tensor the op resized (its
  // view no longer on the copy) is resized and copied on its own.
  std::set<const c10::StorageImpl*> copied_back;
  for (const auto& [original, view] : written) {
    auto found = storages.find(original.storage().unsafeGetStorageImpl());
    const bool kept = found != storages.end() && view.storage().is_alias_of(found->second.second.storage()) &&
                      view.sizes().equals(original.sizes());
    if (!kept) {
      at::_copy_from_and_resize(view, original);
    } else if (copied_back.insert(found->first).second) {
      found->second.first.copy_(found->second.second.narrow(0, 0, found->second.first.numel()));
    }
  }
  const auto& returns = schema.returns();
  const size_t first_return = stack->size() - returns.size();
  for (size_t r = 0; r < returns.size(); ++r) {
    const c10::AliasInfo* alias = returns[r].alias_info();
    if (alias == nullptr) continue;
    for (size_t i = 0; i < num_args; ++i) {
      const c10::AliasInfo* arg_alias = schema.arguments()[i].alias_info();
      if (arg_alias != nullptr && arg_alias->beforeSets() == alias->beforeSets()) {
        (*stack)[first_return + r] = originals[i];
        break;
      }
    }
  }
}

void run_on_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  if (writes_shared_memory(op.schema(), *stack)) {
    run_on_cpu_with_shared_memory(op, stack);
  } else {
    at::native::cpu_fallback(op, stack);
  }
}

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::OperatorName& name = op.schema().operator_name();
  const std::string op_name =
      name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
  const std::optional<c10::Device> device = check_one_flagos_device(op, *stack, op_name);
  TORCH_CHECK(!strict_mode.load(), "flagos: ", op_name,
              " has no flagos kernel, and strict mode (FLAGOS_STRICT=1) forbids the CPU "
              "fallback");
  // An op with no CPU kernel (a CUDA-only fused kernel, say) cannot run
  // there either: say so, rather than the dispatcher's "could not run ...
  // with arguments from the 'CPU' backend" about tensors the caller put on
  // flagos.
  TORCH_CHECK_NOT_IMPLEMENTED(op.hasComputedKernelForDispatchKey(c10::DispatchKey::CPU), "flagos: ", op_name,
                              " has no flagos kernel and no CPU kernel for the CPU fallback to run");
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(counts_mutex);
    first = counts.find(op_name) == counts.end();
    ++counts[op_name];
  }
  if (first) {
    TORCH_WARN("flagos: ", op_name, " has no flagos kernel; it runs on the CPU (warned once per op)");
  }
  run_on_cpu(op, stack);
  results_to_device(op, stack, device);
}

std::string name_of(const c10::OperatorHandle& op) {
  const c10::OperatorName& name = op.schema().operator_name();
  return name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}

}  // namespace

namespace detail {

DtypeFallbackReason& dtype_fallback_reason() {
  thread_local DtypeFallbackReason reason;
  return reason;
}

const c10::OperatorHandle& aten_op_handle(const char* name_and_overload) {
  const std::string text(name_and_overload);
  const size_t dot = text.find('.');
  const std::string name = "aten::" + text.substr(0, dot);
  const std::string overload = dot == std::string::npos ? "" : text.substr(dot + 1);
  // The dispatcher keeps an operator's handle alive for the process.
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<c10::OperatorHandle>> handles;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = handles[text];
  if (!slot) {
    slot = std::make_unique<c10::OperatorHandle>(
        c10::Dispatcher::singleton().findSchemaOrThrow(name.c_str(), overload.c_str()));
  }
  return *slot;
}

}  // namespace detail

void note_dtype_fallback(const std::string& op_name, const DtypeUnsupported* reason) {
  const std::string dtype = reason != nullptr ? reason->tag() : "?";
  const std::string api = reason != nullptr ? reason->api() : "its ACLNN operator";
  TORCH_CHECK(!strict_mode.load(), "flagos: ", op_name, ": ", api, " does not take ", dtype,
              ", and strict mode (FLAGOS_STRICT=1) forbids the CPU fallback for that dtype (",
              reason != nullptr ? reason->what_without_backtrace() : "", ")");
  const std::string key = op_name + " [" + dtype + "]";
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(counts_mutex);
    first = counts.find(key) == counts.end();
    ++counts[key];
  }
  if (first) {
    TORCH_WARN("flagos: ", op_name, ": ", api, " does not take ", dtype, "; ", op_name,
               " runs on the CPU for ", dtype, " (warned once per op and dtype)");
  }
}

void dtype_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  note_dtype_fallback(name_of(op), detail::dtype_fallback_reason().error);
  // (the kernel checked its devices before it launched)
  std::optional<c10::Device> device;
  {
    const size_t num_args = op.schema().arguments().size();
    for (size_t i = 0; i < num_args && !device.has_value(); ++i) {
      const c10::IValue& value = (*stack)[stack->size() - num_args + i];
      if (value.isTensor() && value.toTensor().defined() && value.toTensor().is_privateuseone()) {
        device = value.toTensor().device();
      } else if (value.isTensorList()) {
        for (const at::Tensor& tensor : value.toTensorVector()) {
          if (tensor.defined() && tensor.is_privateuseone()) {
            device = tensor.device();
            break;
          }
        }
      }
    }
  }
  // A backend hook (convolution_overrideable) has no CPU kernel: run the op
  // it stands for, which has the same schema, on the CPU instead.
  const c10::OperatorName& name = op.schema().operator_name();
  const std::string suffix = "_overrideable";
  if (name.name.size() > suffix.size() && name.name.compare(name.name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    const std::optional<c10::OperatorHandle> base = c10::Dispatcher::singleton().findOp(
        c10::OperatorName(name.name.substr(0, name.name.size() - suffix.size()), name.overload_name));
    if (base.has_value()) {
      run_on_cpu(*base, stack);
      results_to_device(*base, stack, device);
      return;
    }
  }
  run_on_cpu(op, stack);
  results_to_device(op, stack, device);
}

std::map<std::string, uint64_t> fallback_counts() {
  std::lock_guard<std::mutex> lock(counts_mutex);
  return counts;
}

void reset_fallback_counts() {
  std::lock_guard<std::mutex> lock(counts_mutex);
  counts.clear();
}

void set_strict(bool value) { strict_mode.store(value); }
bool strict() { return strict_mode.load(); }

}  // namespace flagos
