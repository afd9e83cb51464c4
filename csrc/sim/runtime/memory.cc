// Simulated memory: a registry of mmap'ed device allocations that remembers
// each one's device, pinned host memory (aclrtMallocHost) told apart from
// pageable host memory, and protect mode (FLAGOS_SIM_PROTECT=1: device memory
// stays PROT_NONE except inside the runtime's own operations, which run on
// the streams' worker threads for queued work). Copies and memsets, which
// check their pointers against this registry, are in copies.cc.
//
// aclrtFree is immediate (CANN: no implicit synchronization); memory that
// queued work still uses stays mapped until that work has run, and the free
// is reported as a hazard. Where CANN's closed driver decides (bad frees),
// the simulator rejects with ACL_ERROR_RT_PARAM_INVALID, the code CANN maps
// the driver's "invalid value" to (docs/cann-fidelity.md, section 4).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "runtime.h"

namespace fsim {
namespace {

// CANN (910B) rounds every aclrtMalloc up to 32 bytes and pads it with 32
// more: what an allocation takes from the device's memory.
constexpr size_t kAllocAlign = 32;
constexpr size_t kAllocPadding = 32;

size_t devicePortion(size_t size) { return (size + kAllocAlign - 1) / kAllocAlign * kAllocAlign + kAllocPadding; }

struct Allocation {
  size_t size = 0;    // requested
  size_t mapped = 0;  // rounded up to pages
  int device = -1;    // -1: pinned host memory
  uint64_t id = 0;
  int grants = 0;     // open AccessGrant scopes
  int uses = 0;       // queued tasks that touch it and have not run yet
  bool freed = false; // freed while in use: unmapped after its last task
};

struct Registry {
  std::mutex mutex;
  std::map<uintptr_t, Allocation> allocs;  // device memory, by base address
  std::map<uintptr_t, Allocation> pinned;  // aclrtMallocHost blocks, by base address
  uint64_t nextId = 1;
  std::array<uint64_t, kMaxDevices> liveCount{};
  std::array<uint64_t, kMaxDevices> liveBytes{};
  std::array<uint64_t, kMaxDevices> usedBytes{};  // devicePortion of each live allocation
  uint64_t pinnedCount = 0;
  uint64_t pinnedBytes = 0;
  std::atomic<bool> protect{false};  // FLAGOS_SIM_PROTECT, as seen by aclrtMalloc

  // The live block of `map` holding address `p` (blocks freed while in use
  // are not live). Requires the mutex.
  static std::map<uintptr_t, Allocation>::iterator find(std::map<uintptr_t, Allocation>& map, uintptr_t p) {
    auto it = map.upper_bound(p);
    if (it == map.begin()) return map.end();
    --it;
    return p - it->first < it->second.size && !it->second.freed ? it : map.end();
  }
  // The block (live or freed while in use) with this base and id.
  // Requires the mutex.
  std::map<uintptr_t, Allocation>* mapOf(const AllocInfo& a) { return a.device < 0 ? &pinned : &allocs; }
};

Registry& registry() {
  static Registry* r = new Registry;  // leaked: threads may free during exit
  return *r;
}

// Releases a block's memory for good: unmaps it and forgets its history.
void unmap(uintptr_t base, const Allocation& a) {
  munmap(reinterpret_cast<void*>(base), a.mapped);
  forgetAllocation(a.id);
}

}  // namespace

AllocLookup::AllocLookup() : lock_(lockSoon(registry().mutex)) {}

std::optional<AllocInfo> AllocLookup::find(const void* p) const {
  Registry& r = registry();
  auto it = Registry::find(r.allocs, reinterpret_cast<uintptr_t>(p));
  if (it == r.allocs.end()) return std::nullopt;
  return AllocInfo{it->first, it->second.size, it->second.device, it->second.id};
}

std::optional<AllocInfo> findAlloc(const void* p) { return AllocLookup().find(p); }

std::optional<AllocInfo> findPinned(const void* p) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = Registry::find(r.pinned, reinterpret_cast<uintptr_t>(p));
  if (it == r.pinned.end()) return std::nullopt;
  return AllocInfo{it->first, it->second.size, -1, it->second.id};
}

void retainMemory(const std::vector<Access>& accesses) {
  if (accesses.empty()) return;
  Registry& r = registry();
  std::unique_lock lock = lockSoon(r.mutex);
  for (const Access& a : accesses) {
    auto& map = *r.mapOf(a.alloc);
    auto it = map.find(a.alloc.base);
    if (it != map.end() && it->second.id == a.alloc.id) it->second.uses++;
  }
}

void releaseMemory(const std::vector<Access>& accesses) {
  if (accesses.empty()) return;
  Registry& r = registry();
  std::vector<std::pair<uintptr_t, Allocation>> dead;
  {
    std::unique_lock lock = lockSoon(r.mutex);
    for (const Access& a : accesses) {
      auto& map = *r.mapOf(a.alloc);
      auto it = map.find(a.alloc.base);
      if (it == map.end() || it->second.id != a.alloc.id) continue;
      if (--it->second.uses == 0 && it->second.freed) {
        dead.emplace_back(it->first, it->second);
        map.erase(it);
      }
    }
  }
  for (const auto& [base, a] : dead) unmap(base, a);
}

void AccessGrant::add(const AllocInfo& alloc) {
  Registry& r = registry();
  if (!r.protect) return;
  std::lock_guard lock(r.mutex);
  auto it = r.allocs.find(alloc.base);
  if (it == r.allocs.end() || it->second.id != alloc.id) return;  // unmapped meanwhile
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

void liveMemory(std::array<uint64_t, kMaxDevices>& count, std::array<uint64_t, kMaxDevices>& bytes) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  count = r.liveCount;
  bytes = r.liveBytes;
}

void livePinnedMemory(uint64_t& count, uint64_t& bytes) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  count = r.pinnedCount;
  bytes = r.pinnedBytes;
}

}  // namespace fsim

using namespace fsim;

extern "C" {

// Any policy value is accepted, as in CANN (unknown ones mean the default).
// Pointers are page aligned (CANN documents 64 bytes).
aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy /*policy*/) {
  const char* fn = "aclrtMalloc";
  if (devPtr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": devPtr is nullptr");
  if (size == 0) return fail(ACL_ERROR_INVALID_PARAM, fn, ": size is 0");
  if (size > SIZE_MAX - kAllocAlign - kAllocPadding)
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": size ", size, " overflows when rounded up");
  int device = -1;
  if (aclError e = requireCurrentDevice(fn, &device)) return e;
  std::optional<bool> protect = protectMode(fn);
  if (!protect) return ACL_ERROR_INVALID_PARAM;
  std::optional<uint64_t> total = deviceMemory(fn);
  if (!total) return ACL_ERROR_INVALID_PARAM;
  const size_t portion = devicePortion(size);
  Registry& r = registry();
  {
    std::lock_guard lock(r.mutex);
    const uint64_t free = *total - std::min<uint64_t>(r.usedBytes[device], *total);
    if (portion > free)
      return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, ": out of memory on device ", device, ": ", size,
                  " bytes requested (", portion, " with the runtime's rounding), ", free, " of ", *total,
                  " bytes free");
    r.usedBytes[device] += portion;  // reserved before mapping, so concurrent calls cannot overdraw
  }
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t mapped = (size + page - 1) / page * page;
  void* p = mmap(nullptr, mapped, *protect ? PROT_NONE : PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  std::lock_guard lock(r.mutex);
  if (p == MAP_FAILED) {
    r.usedBytes[device] -= portion;
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, ": the host cannot map ", size, " bytes for device ", device);
  }
  r.protect = *protect;
  r.allocs[reinterpret_cast<uintptr_t>(p)] = Allocation{size, mapped, device, r.nextId++, 0};
  r.liveCount[device]++;
  r.liveBytes[device] += size;
  layoutChanged();
  *devPtr = p;
  return ACL_SUCCESS;
}

// Needs no current device, and frees memory of any device, at once (CANN
// does not synchronize): memory that queued work still uses is reported as
// a hazard and stays mapped until that work has run.
aclError aclrtFree(void* devPtr) {
  const char* fn = "aclrtFree";
  if (devPtr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": devPtr is nullptr");
  const auto addr = reinterpret_cast<uintptr_t>(devPtr);
  Registry& r = registry();
  Allocation a;
  AllocInfo info;
  {
    std::lock_guard lock(r.mutex);
    auto it = Registry::find(r.allocs, addr);
    if (it == r.allocs.end()) {
      if (Registry::find(r.pinned, addr) != r.pinned.end())
        return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": ", devPtr,
                    " is pinned host memory from aclrtMallocHost; free it with aclrtFreeHost");
      return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": ", devPtr,
                  " is not device memory allocated by aclrtMalloc (or it was freed already)");
    }
    if (it->first != addr)
      return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": ", devPtr, " points inside the allocation at ",
                  reinterpret_cast<void*>(it->first), ", not at its start");
    a = it->second;
    info = AllocInfo{it->first, a.size, a.device, a.id};
  }
  hostAccesses({{info, true}}, "aclrtFree");
  {
    std::lock_guard lock(r.mutex);
    auto it = r.allocs.find(addr);
    if (it == r.allocs.end() || it->second.id != a.id || it->second.freed)
      return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": ", devPtr, " was freed already");
    r.liveCount[a.device]--;
    r.liveBytes[a.device] -= a.size;
    r.usedBytes[a.device] -= devicePortion(a.size);
    if (it->second.uses > 0) {
      it->second.freed = true;  // unmapped by the last task that uses it
      layoutChanged();
      return ACL_SUCCESS;
    }
    r.allocs.erase(it);
    layoutChanged();
  }
  unmap(addr, a);
  return ACL_SUCCESS;
}

// Page-locked host memory: host memory the runtime knows, which copies treat
// as a known host location. Needs a current device, like CANN's.
aclError aclrtMallocHost(void** hostPtr, size_t size) {
  const char* fn = "aclrtMallocHost";
  if (hostPtr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": hostPtr is nullptr");
  if (size == 0) return fail(ACL_ERROR_INVALID_PARAM, fn, ": size is 0");
  int device = -1;
  if (aclError e = requireCurrentDevice(fn, &device)) return e;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (size > SIZE_MAX - page)
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, ": cannot allocate ", size, " bytes of pinned host memory");
  const size_t mapped = (size + page - 1) / page * page;
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, fn, ": cannot allocate ", size, " bytes of pinned host memory");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.pinned[reinterpret_cast<uintptr_t>(p)] = Allocation{size, mapped, -1, r.nextId++, 0};
  r.pinnedCount++;
  r.pinnedBytes += size;
  *hostPtr = p;
  return ACL_SUCCESS;
}

// Needs no current device. A device pointer is rejected by CANN's runtime;
// anything else that is not a pinned block by the closed driver. Like
// aclrtFree, a block that queued work still uses is reported as a hazard
// and stays mapped until that work has run.
aclError aclrtFreeHost(void* hostPtr) {
  const char* fn = "aclrtFreeHost";
  if (hostPtr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": hostPtr is nullptr");
  const auto addr = reinterpret_cast<uintptr_t>(hostPtr);
  Registry& r = registry();
  Allocation a;
  AllocInfo info;
  {
    std::lock_guard lock(r.mutex);
    auto it = Registry::find(r.pinned, addr);
    if (it == r.pinned.end()) {
      if (Registry::find(r.allocs, addr) != r.allocs.end())
        return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": ", hostPtr,
                    " is device memory from aclrtMalloc; free it with aclrtFree");
      return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": ", hostPtr,
                  " is not pinned host memory allocated by aclrtMallocHost (or it was freed already)");
    }
    if (it->first != addr)
      return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": ", hostPtr, " points inside the pinned block at ",
                  reinterpret_cast<void*>(it->first), ", not at its start");
    a = it->second;
    info = AllocInfo{it->first, a.size, -1, a.id};
  }
  hostAccesses({{info, true}}, "aclrtFreeHost");
  {
    std::lock_guard lock(r.mutex);
    auto it = r.pinned.find(addr);
    if (it == r.pinned.end() || it->second.id != a.id || it->second.freed)
      return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": ", hostPtr, " was freed already");
    r.pinnedCount--;
    r.pinnedBytes -= a.size;
    if (it->second.uses > 0) {
      it->second.freed = true;
      return ACL_SUCCESS;
    }
    r.pinned.erase(it);
  }
  unmap(addr, a);
  return ACL_SUCCESS;
}

// Every aclrtMemAttr reports the one memory of the simulated device.
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* free, size_t* total) {
  const char* fn = "aclrtGetMemInfo";
  if (free == nullptr || total == nullptr)
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": ", free == nullptr ? "free" : "total", " is nullptr");
  if (attr < ACL_DDR_MEM || attr > ACL_MEM_P2P_HUGE1G)
    return fail(ACL_ERROR_RT_INVALID_MEMORY_TYPE, fn, ": attr ", static_cast<int>(attr),
                " is not an aclrtMemAttr (0..17)");
  int device = -1;
  if (aclError e = requireCurrentDevice(fn, &device)) return e;
  std::optional<uint64_t> bytes = deviceMemory(fn);
  if (!bytes) return ACL_ERROR_INVALID_PARAM;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  *total = *bytes;
  *free = *bytes - std::min<uint64_t>(r.usedBytes[device], *bytes);
  return ACL_SUCCESS;
}

int32_t fsimPointerDevice(const void* ptr) {
  std::optional<AllocInfo> a = findAlloc(ptr);
  return a ? a->device : -1;
}

}  // extern "C"