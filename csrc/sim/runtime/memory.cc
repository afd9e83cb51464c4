// Simulated device memory: a registry of mmap'ed allocations that remembers
// each one's device, copies checked against what the pointers really are,
// peer access, and protect mode (FLAGOS_SIM_PROTECT=1: device memory stays
// PROT_NONE except inside the runtime's own operations).
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "runtime.h"

namespace fsim {
namespace {

struct Allocation {
  size_t size = 0;    // requested
  size_t mapped = 0;  // rounded up to pages
  int device = -1;
  uint64_t id = 0;
  int grants = 0;  // open AccessGrant scopes
};

struct Registry {
  std::mutex mutex;
  std::map<uintptr_t, Allocation> allocs;  // by base address
  uint64_t nextId = 1;
  std::array<uint64_t, kMaxDevices> liveCount{};
  std::array<uint64_t, kMaxDevices> liveBytes{};
  std::atomic<bool> protect{false};  // FLAGOS_SIM_PROTECT, as seen by aclrtMalloc

  // Requires the mutex.
  std::map<uintptr_t, Allocation>::iterator find(uintptr_t p) {
    auto it = allocs.upper_bound(p);
    if (it == allocs.begin()) return allocs.end();
    --it;
    return p - it->first < it->second.size ? it : allocs.end();
  }
};

Registry& registry() {
  static Registry* r = new Registry;  // leaked: threads may free during exit
  return *r;
}

// Peer access is per unordered device pair.
std::array<std::atomic<bool>, kMaxDevices * kMaxDevices> gPeer{};

const char* kindName(aclrtMemcpyKind kind) {
  switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST: return "ACL_MEMCPY_HOST_TO_HOST";
    case ACL_MEMCPY_HOST_TO_DEVICE: return "ACL_MEMCPY_HOST_TO_DEVICE";
    case ACL_MEMCPY_DEVICE_TO_HOST: return "ACL_MEMCPY_DEVICE_TO_HOST";
    case ACL_MEMCPY_DEVICE_TO_DEVICE: return "ACL_MEMCPY_DEVICE_TO_DEVICE";
  }
  return "an unknown aclrtMemcpyKind";
}

std::string where(const std::optional<AllocInfo>& a) {
  return a ? cat("device memory (device ", a->device, ")") : std::string("host memory");
}

// Checks one side of a copy: that it is device memory exactly when `kind`
// says so, and that `count` bytes from `p` stay inside its allocation.
aclError checkSide(const char* fn, const char* side, const void* p, size_t count, aclrtMemcpyKind kind,
                   bool wantDevice, const std::optional<AllocInfo>& a) {
  if (wantDevice != a.has_value())
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": kind ", kindName(kind), " needs ", side, " to be ",
                wantDevice ? "device" : "host", " memory, but ", p, " is ", where(a));
  if (a && !a->contains(reinterpret_cast<uintptr_t>(p), count))
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": ", count, " bytes at ", side, " ", p,
                " overrun its allocation of ", a->size, " bytes at ", reinterpret_cast<void*>(a->base));
  return ACL_SUCCESS;
}

aclError copy(const char* fn, void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
              std::optional<aclrtStream> stream) {
  if (dst == nullptr || src == nullptr)
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": ", dst == nullptr ? "dst" : "src", " is nullptr");
  if (kind < ACL_MEMCPY_HOST_TO_HOST || kind > ACL_MEMCPY_DEVICE_TO_DEVICE)
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": kind ", static_cast<int>(kind), " is not an aclrtMemcpyKind");
  if (count > destMax)
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": count ", count, " exceeds destMax ", destMax);
  std::optional<AllocInfo> d = findAlloc(dst);
  std::optional<AllocInfo> s = findAlloc(src);
  bool dstDevice = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  bool srcDevice = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  if (aclError e = checkSide(fn, "dst", dst, count, kind, dstDevice, d)) return e;
  if (aclError e = checkSide(fn, "src", src, count, kind, srcDevice, s)) return e;
  bool crossDevice = d && s && d->device != s->device;
  if (crossDevice && !peerEnabled(s->device, d->device))
    return fail(ACL_ERROR_RT_FAILURE, fn, ": device-to-device copy from device ", s->device, " to device ",
                d->device, " needs peer access between devices ", s->device, " and ", d->device,
                " (aclrtDeviceEnablePeerAccess)");
  if (stream) {
    std::optional<int> sd = streamDevice(*stream);
    if (!sd) return fail(ACL_ERROR_INVALID_PARAM, fn, ": stream ", *stream, " is not a live stream");
    if (*sd < 0)
      return fail(ACL_ERROR_RT_CONTEXT_NULL, fn,
                  ": the default stream needs a current device (call aclrtSetDevice first)");
    if ((d || s) && !(d && d->device == *sd) && !(s && s->device == *sd)) {
      std::string sides = d && s ? cat("dst on device ", d->device, " and src on device ", s->device)
                          : d    ? cat("dst on device ", d->device)
                                 : cat("src on device ", s->device);
      return fail(ACL_ERROR_INVALID_PARAM, fn, ": the stream belongs to device ", *sd, " but the copy has ", sides);
    }
  }
  AccessGrant grant;
  if (d) grant.add(*d);
  if (s) grant.add(*s);
  std::memmove(dst, src, count);
  if (crossDevice) counters().peerCopies++;
  return ACL_SUCCESS;
}

}  // namespace

std::optional<AllocInfo> findAlloc(const void* p) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.find(reinterpret_cast<uintptr_t>(p));
  if (it == r.allocs.end()) return std::nullopt;
  return AllocInfo{it->first, it->second.size, it->second.device, it->second.id};
}

void AccessGrant::add(const AllocInfo& alloc) {
  Registry& r = registry();
  if (!r.protect) return;
  std::lock_guard lock(r.mutex);
  auto it = r.allocs.find(alloc.base);
  if (it == r.allocs.end() || it->second.id != alloc.id) return;  // freed meanwhile
  if (it->second.grants++ == 0)
    mprotect(reinterpret_cast<void*>(alloc.base), it->second.mapped, PROT_READ | PROT_WRITE);
  granted_.emplace_back(alloc.base, alloc.id);
}

AccessGrant::~AccessGrant() {
  if (granted_.empty()) return;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (auto [base, id] : granted_) {
    auto it = r.allocs.find(base);
    if (it == r.allocs.end() || it->second.id != id) continue;
    if (--it->second.grants == 0) mprotect(reinterpret_cast<void*>(base), it->second.mapped, PROT_NONE);
  }
}

bool peerEnabled(int a, int b) { return gPeer[a * kMaxDevices + b].load(); }

void liveMemory(std::array<uint64_t, kMaxDevices>& count, std::array<uint64_t, kMaxDevices>& bytes) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  count = r.liveCount;
  bytes = r.liveBytes;
}

}  // namespace fsim

using namespace fsim;

extern "C" {

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
  const char* fn = "aclrtMalloc";
  if (devPtr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": devPtr is nullptr");
  if (size == 0) return fail(ACL_ERROR_INVALID_PARAM, fn, ": size is 0");
  if (policy < ACL_MEM_MALLOC_HUGE_FIRST || policy > ACL_MEM_MALLOC_NORMAL_ONLY)
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": policy ", static_cast<int>(policy), " is not an aclrtMemMallocPolicy");
  int device = -1;
  if (aclError e = requireCurrentDevice(fn, &device)) return e;
  std::optional<bool> protect = protectMode(fn);
  if (!protect) return ACL_ERROR_INVALID_PARAM;
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (size > SIZE_MAX - page) return fail(ACL_ERROR_BAD_ALLOC, fn, ": cannot allocate ", size, " bytes");
  size_t mapped = (size + page - 1) / page * page;
  void* p = mmap(nullptr, mapped, *protect ? PROT_NONE : PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return fail(ACL_ERROR_BAD_ALLOC, fn, ": cannot allocate ", size, " bytes on device ", device);
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.protect = *protect;
  r.allocs[reinterpret_cast<uintptr_t>(p)] = Allocation{size, mapped, device, r.nextId++, 0};
  r.liveCount[device]++;
  r.liveBytes[device] += size;
  *devPtr = p;
  return ACL_SUCCESS;
}

aclError aclrtFree(void* devPtr) {
  const char* fn = "aclrtFree";
  if (devPtr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": devPtr is nullptr");
  Registry& r = registry();
  Allocation a;
  {
    std::lock_guard lock(r.mutex);
    auto it = r.find(reinterpret_cast<uintptr_t>(devPtr));
    if (it == r.allocs.end())
      return fail(ACL_ERROR_INVALID_PARAM, fn, ": ", devPtr, " is not device memory allocated by aclrtMalloc");
    if (it->first != reinterpret_cast<uintptr_t>(devPtr))
      return fail(ACL_ERROR_INVALID_PARAM, fn, ": ", devPtr, " points inside the allocation at ",
                  reinterpret_cast<void*>(it->first), ", not at its start");
    a = it->second;
    r.allocs.erase(it);
    r.liveCount[a.device]--;
    r.liveBytes[a.device] -= a.size;
  }
  munmap(devPtr, a.mapped);
  return ACL_SUCCESS;
}

aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
  const char* fn = "aclrtMemset";
  if (devPtr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": devPtr is nullptr");
  if (count > maxCount) return fail(ACL_ERROR_INVALID_PARAM, fn, ": count ", count, " exceeds maxCount ", maxCount);
  std::optional<AllocInfo> a = findAlloc(devPtr);
  if (!a) return fail(ACL_ERROR_INVALID_PARAM, fn, ": ", devPtr, " is not device memory");
  if (!a->contains(reinterpret_cast<uintptr_t>(devPtr), count))
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": ", count, " bytes at ", devPtr, " overrun its allocation of ",
                a->size, " bytes");
  AccessGrant grant;
  grant.add(*a);
  std::memset(devPtr, value, count);
  return ACL_SUCCESS;
}

aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
  return copy("aclrtMemcpy", dst, destMax, src, count, kind, std::nullopt);
}

// Streams run work at enqueue time, so an async copy is complete on return.
aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream) {
  return copy("aclrtMemcpyAsync", dst, destMax, src, count, kind, stream);
}

aclError aclrtDeviceCanAccessPeer(int32_t* canAccessPeer, int32_t deviceId, int32_t peerDeviceId) {
  const char* fn = "aclrtDeviceCanAccessPeer";
  if (canAccessPeer == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": canAccessPeer is nullptr");
  if (aclError e = checkDevice(fn, deviceId)) return e;
  if (aclError e = checkDevice(fn, peerDeviceId)) return e;
  *canAccessPeer = deviceId != peerDeviceId ? 1 : 0;
  return ACL_SUCCESS;
}

aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags) {
  const char* fn = "aclrtDeviceEnablePeerAccess";
  int current = -1;
  if (aclError e = requireCurrentDevice(fn, &current)) return e;
  if (aclError e = checkDevice(fn, peerDeviceId)) return e;
  if (peerDeviceId == current)
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": peer device ", peerDeviceId, " is the current device");
  if (flags != 0) return fail(ACL_ERROR_INVALID_PARAM, fn, ": flags must be 0, got ", flags);
  gPeer[current * kMaxDevices + peerDeviceId] = true;
  gPeer[peerDeviceId * kMaxDevices + current] = true;
  return ACL_SUCCESS;
}

aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId) {
  const char* fn = "aclrtDeviceDisablePeerAccess";
  int current = -1;
  if (aclError e = requireCurrentDevice(fn, &current)) return e;
  if (aclError e = checkDevice(fn, peerDeviceId)) return e;
  if (!peerEnabled(current, peerDeviceId))
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": peer access between devices ", current, " and ", peerDeviceId,
                " is not enabled");
  gPeer[current * kMaxDevices + peerDeviceId] = false;
  gPeer[peerDeviceId * kMaxDevices + current] = false;
  return ACL_SUCCESS;
}

int32_t fsimPointerDevice(const void* ptr) {
  std::optional<AllocInfo> a = findAlloc(ptr);
  return a ? a->device : -1;
}

}  // extern "C"
