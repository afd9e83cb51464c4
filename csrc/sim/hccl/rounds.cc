// The checks every HCCL call makes and the pieces of its rounds over shared
// memory (hccl_internal.h): validation, reductions in rank order, segments
// and the store's waits.
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <fcntl.h>

#include <optional>

#include "hccl_internal.h"

namespace fsim {
namespace {

template <class T, class Acc>
void reduceTyped(uint8_t* acc, const uint8_t* in, uint64_t count, HcclReduceOp op) {
  auto* a = reinterpret_cast<T*>(acc);
  const auto* b = reinterpret_cast<const T*>(in);
  for (uint64_t i = 0; i < count; ++i) {
    const Acc x = static_cast<Acc>(a[i]), y = static_cast<Acc>(b[i]);
    Acc r = x;
    switch (op) {
      case HCCL_REDUCE_SUM: r = x + y; break;
      case HCCL_REDUCE_PROD: r = x * y; break;
      case HCCL_REDUCE_MAX: r = std::max(x, y); break;
      case HCCL_REDUCE_MIN: r = std::min(x, y); break;
      default: break;
    }
    a[i] = static_cast<T>(r);
  }
}

// acc = acc (op) in, elementwise.
bool reduceInto(uint8_t* acc, const uint8_t* in, uint64_t count, HcclDataType t, HcclReduceOp op) {
  switch (t) {
    case HCCL_DATA_TYPE_INT8: reduceTyped<int8_t, int8_t>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_UINT8: reduceTyped<uint8_t, uint8_t>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_INT16: reduceTyped<int16_t, int16_t>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_UINT16: reduceTyped<uint16_t, uint16_t>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_INT32: reduceTyped<int32_t, int32_t>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_UINT32: reduceTyped<uint32_t, uint32_t>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_INT64: reduceTyped<int64_t, int64_t>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_UINT64: reduceTyped<uint64_t, uint64_t>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_FP16: reduceTyped<c10::Half, float>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_BFP16: reduceTyped<c10::BFloat16, float>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_FP32: reduceTyped<float, float>(acc, in, count, op); return true;
    case HCCL_DATA_TYPE_FP64: reduceTyped<double, double>(acc, in, count, op); return true;
    default: return false;
  }
}

}  // namespace

Registry& registry() {
  static Registry* r = new Registry;  // leaked: other ranks may still talk to a server during exit
  return *r;
}

HcclResult hfail(HcclResult status, const std::string& message) {
  setError(message);
  return status;
}

size_t elementSize(HcclDataType t) {
  switch (t) {
    case HCCL_DATA_TYPE_INT8: case HCCL_DATA_TYPE_UINT8: return 1;
    case HCCL_DATA_TYPE_INT16: case HCCL_DATA_TYPE_UINT16: case HCCL_DATA_TYPE_FP16: case HCCL_DATA_TYPE_BFP16: return 2;
    case HCCL_DATA_TYPE_INT32: case HCCL_DATA_TYPE_UINT32: case HCCL_DATA_TYPE_FP32: return 4;
    case HCCL_DATA_TYPE_INT64: case HCCL_DATA_TYPE_UINT64: case HCCL_DATA_TYPE_FP64: return 8;
    default: return 0;
  }
}

HcclResult validate(const char* fn, HcclComm handle, aclrtStream stream, std::initializer_list<Buffer> buffers,
                    Comm** out, std::vector<AllocInfo>& allocs) {
  Comm* comm = static_cast<Comm*>(handle);
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    if (comm == nullptr) return hfail(HCCL_E_PTR, cat(fn, ": comm is nullptr"));
    if (!r.live.contains(comm)) return hfail(HCCL_E_PARA, cat(fn, ": comm ", handle, " is not a live communicator"));
  }
  const std::string where = cat("the communicator (rank ", comm->rank, " of ", comm->size, ") belongs to device ",
                                comm->device);
  std::optional<int> streamDev = streamDevice(stream);
  if (!streamDev) return hfail(HCCL_E_PARA, cat(fn, ": stream ", stream, " is not a live stream"));
  const int current = currentDevice();
  if (current != comm->device)
    return hfail(HCCL_E_RUNTIME, cat(fn, ": the current device is ", current, " but ", where));
  if (*streamDev != comm->device)
    return hfail(HCCL_E_RUNTIME, cat(fn, ": the stream belongs to device ", *streamDev, " but ", where));
  for (const Buffer& b : buffers) {
    if (b.bytes == 0) continue;
    if (b.ptr == nullptr) return hfail(HCCL_E_PTR, cat(fn, ": ", b.name, " is nullptr"));
    std::optional<AllocInfo> a = findAlloc(b.ptr);
    if (!a) return hfail(HCCL_E_PARA, cat(fn, ": ", b.name, " (", b.ptr, ") is not device memory; ", where));
    if (a->device != comm->device)
      return hfail(HCCL_E_PARA, cat(fn, ": ", b.name, " lives on device ", a->device, " but ", where));
    if (!a->contains(reinterpret_cast<uintptr_t>(b.ptr), b.bytes))
      return hfail(HCCL_E_PARA, cat(fn, ": ", b.name, " (", b.bytes, " bytes at ", b.ptr, ") overruns its allocation of ",
                                    a->size, " bytes"));
    allocs.push_back(*a);
  }
  *out = comm;
  return HCCL_SUCCESS;
}

HcclResult rejected(HcclResult status) {
  counters().rejectedLaunches++;
  return status;
}

std::string segmentName(const std::string& id, const std::string& what) { return cat("/flagos_hccl_", id, "_", what); }

int openSegment(const std::string& name, int flags) {
  const int fd = shm_open(name.c_str(), flags, 0600);
  if (fd < 0) throw std::runtime_error(cat("shm_open(", name, "): ", std::strerror(errno)));
  return fd;
}

void waitForRanks(Comm& comm, const std::vector<std::string>& keys, const std::vector<uint32_t>& ranks,
                  const std::string& what) {
  try {
    comm.store->wait(keys, comm.timeout);
  } catch (const c10::DistStoreError& e) {
    std::string missing;
    for (size_t i = 0; i < keys.size(); ++i) {
      bool there = false;
      try {
        there = comm.store->check({keys[i]});
      } catch (const std::exception&) {
      }
      if (!there) missing += cat(missing.empty() ? "" : ", ", ranks[i]);
    }
    C10_THROW_ERROR(DistStoreError, cat(what, ": rank(s) ", missing, " never arrived: ", e.what_without_backtrace()));
  }
}

void expectBytes(const std::vector<Span>& all, uint32_t rank, size_t bytes, const std::vector<uint32_t>& from) {
  for (uint32_t r : from)
    if (all[r].bytes != bytes)
      throw std::runtime_error(cat("rank ", r, " contributed ", all[r].bytes, " bytes but rank ", rank, " expects ",
                                   bytes, " (counts or dtypes differ between ranks)"));
}

void reduceRanks(const std::vector<Span>& all, size_t offset, void* out, uint64_t count, HcclDataType type,
                 HcclReduceOp op) {
  auto* acc = static_cast<uint8_t*>(out);
  std::memcpy(acc, all[0].data + offset, count * elementSize(type));
  for (size_t r = 1; r < all.size(); ++r) reduceInto(acc, all[r].data + offset, count, type, op);
}

std::vector<uint32_t> everyRank(const Comm& comm) {
  std::vector<uint32_t> ranks(comm.size);
  for (uint32_t r = 0; r < comm.size; ++r) ranks[r] = r;
  return ranks;
}

}  // namespace fsim
