// Simulated memory: a registry of mmap'ed device allocations that remembers
// each one's device, pinned host memory (aclrtMallocHost) told apart from
// pageable host memory, copies checked against what the pointers really are,
// peer access, and protect mode (FLAGOS_SIM_PROTECT=1: device memory stays
// PROT_NONE except inside the runtime's own operations, which run on the
// streams' worker threads for queued work).
//
// Synchronous copies and memsets (aclrtMemcpy, aclrtMemset) act at once,
// without waiting for work queued on any stream: CANN's documentation says
// so ("no implicit device or stream synchronization"). A program that reads
// device memory a queued kernel writes must synchronize first; the hazard
// tracker reports it when it does not. aclrtMemcpyAsync and aclrtMemsetAsync
// queue their work on the stream, except that an async copy between device
// and pageable host memory synchronizes the stream and copies at once, as
// CANN's runtime does. aclrtFree is immediate too (CANN: no implicit
// synchronization); memory that queued work still uses stays mapped until
// that work has run, and the free is reported as a hazard.
//
// Where CANN's open code decides, the checks and codes are CANN's. Where
// CANN's closed driver decides (bad frees, a sync copy whose kind does not
// match its pointers, copies between devices without peer access, memset
// bounds), the simulator rejects with ACL_ERROR_RT_PARAM_INVALID, the code
// CANN maps the driver's "invalid value" to (docs/cann-fidelity.md, section 4).
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

// Peer access is per unordered device pair.
std::array<std::atomic<bool>, kMaxDevices * kMaxDevices> gPeer{};

// What a pointer is, for copies and memset.
enum class Place { Pageable, Pinned, Device };

struct Endpoint {
  Place place = Place::Pageable;
  AllocInfo alloc;  // the block (device or pinned); empty for pageable memory

  bool device() const { return place == Place::Device; }
  bool host() const { return place != Place::Device; }
};

Endpoint locate(const void* p) {
  Registry& r = registry();
  const auto addr = reinterpret_cast<uintptr_t>(p);
  std::lock_guard lock(r.mutex);
  auto it = Registry::find(r.allocs, addr);
  if (it != r.allocs.end())
    return {Place::Device, AllocInfo{it->first, it->second.size, it->second.device, it->second.id}};
  it = Registry::find(r.pinned, addr);
  if (it != r.pinned.end()) return {Place::Pinned, AllocInfo{it->first, it->second.size, -1, it->second.id}};
  return {};
}

std::string describe(const Endpoint& e) {
  switch (e.place) {
    case Place::Device: return cat("device memory (device ", e.alloc.device, ")");
    case Place::Pinned: return "pinned host memory";
    case Place::Pageable: break;
  }
  return "pageable host memory";
}

const char* kindName(aclrtMemcpyKind kind) {
  switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST: return "ACL_MEMCPY_HOST_TO_HOST";
    case ACL_MEMCPY_HOST_TO_DEVICE: return "ACL_MEMCPY_HOST_TO_DEVICE";
    case ACL_MEMCPY_DEVICE_TO_HOST: return "ACL_MEMCPY_DEVICE_TO_HOST";
    case ACL_MEMCPY_DEVICE_TO_DEVICE: return "ACL_MEMCPY_DEVICE_TO_DEVICE";
    case ACL_MEMCPY_DEFAULT: return "ACL_MEMCPY_DEFAULT";
    case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: return "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE";
    case ACL_MEMCPY_INNER_DEVICE_TO_DEVICE: return "ACL_MEMCPY_INNER_DEVICE_TO_DEVICE";
    case ACL_MEMCPY_INTER_DEVICE_TO_DEVICE: return "ACL_MEMCPY_INTER_DEVICE_TO_DEVICE";
  }
  return "an unknown aclrtMemcpyKind";
}

// The direction of a copy: whether each side is device memory.
struct Direction {
  bool srcDevice = false;
  bool dstDevice = false;
  bool operator==(const Direction&) const = default;
};

constexpr Direction kH2H{false, false}, kH2D{false, true}, kD2H{true, false}, kD2D{true, true};

// The kinds the copies accept (CANN's ACL layer rejects 6, 7 and anything
// else with ACL_ERROR_INVALID_PARAM before the runtime sees them).
aclError checkKind(const char* fn, aclrtMemcpyKind kind) {
  if (kind < ACL_MEMCPY_HOST_TO_HOST || kind > ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE)
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": kind ", static_cast<int>(kind), " (", kindName(kind),
                ") is not a kind aclrtMemcpy accepts (ACL_MEMCPY_HOST_TO_HOST..ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE)");
  return ACL_SUCCESS;
}

// The direction an explicit kind names (HOST_TO_BUF_TO_DEVICE is a
// host-to-device copy); ACL_MEMCPY_DEFAULT has none.
std::optional<Direction> kindDirection(aclrtMemcpyKind kind) {
  switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST: return kH2H;
    case ACL_MEMCPY_HOST_TO_DEVICE:
    case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: return kH2D;
    case ACL_MEMCPY_DEVICE_TO_HOST: return kD2H;
    case ACL_MEMCPY_DEVICE_TO_DEVICE: return kD2D;
    default: return std::nullopt;
  }
}

// The simulated driver's checks, shared by every copy: that the direction
// the copy runs in matches the pointers, that each side stays inside its
// block, and that a copy between two devices has peer access.
aclError checkTransfer(const char* fn, aclrtMemcpyKind kind, Direction dir, void* dst, const Endpoint& d,
                       const void* src, const Endpoint& s, size_t count) {
  const struct {
    const char* name;
    const void* p;
    const Endpoint& e;
    bool wantDevice;
  } sides[] = {{"dst", dst, d, dir.dstDevice}, {"src", src, s, dir.srcDevice}};
  for (const auto& side : sides) {
    if (side.wantDevice != side.e.device())
      return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": kind ", kindName(kind), " needs ", side.name, " to be ",
                  side.wantDevice ? "device" : "host", " memory, but ", side.p, " is ", describe(side.e));
  }
  for (const auto& side : sides) {
    if (side.e.place != Place::Pageable && !side.e.alloc.contains(reinterpret_cast<uintptr_t>(side.p), count))
      return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": ", count, " bytes at ", side.name, " ", side.p,
                  " overrun its allocation of ", side.e.alloc.size, " bytes at ",
                  reinterpret_cast<void*>(side.e.alloc.base));
  }
  if (d.device() && s.device() && d.alloc.device != s.alloc.device && !peerEnabled(s.alloc.device, d.alloc.device))
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": device-to-device copy from device ", s.alloc.device,
                " to device ", d.alloc.device, " needs peer access between devices ", s.alloc.device, " and ",
                d.alloc.device, " (aclrtDeviceEnablePeerAccess)");
  return ACL_SUCCESS;
}

void transfer(void* dst, const Endpoint& d, const void* src, const Endpoint& s, size_t count) {
  AccessGrant grant;
  if (d.device()) grant.add(d.alloc);
  if (s.device()) grant.add(s.alloc);
  std::memmove(dst, src, count);
  if (d.device() && s.device() && d.alloc.device != s.alloc.device) counters().peerCopies++;
}

// What a copy reads and writes of the runtime's memory (pageable memory is
// the program's own business).
std::vector<Access> copyAccesses(const Endpoint& d, const Endpoint& s) {
  std::vector<Access> accesses;
  accesses.reserve(2);
  if (d.place != Place::Pageable) accesses.push_back({d.alloc, true});
  if (s.place != Place::Pageable && !(d.place != Place::Pageable && d.alloc.id == s.alloc.id))
    accesses.push_back({s.alloc, false});
  return accesses;
}

// Releases a block's memory for good: unmaps it and forgets its history.
void unmap(uintptr_t base, const Allocation& a) {
  munmap(reinterpret_cast<void*>(base), a.mapped);
  forgetAllocation(a.id);
}

// aclrtMemcpyAsync's location rule (CANN's runtime, with a driver that
// reports user memory attributes): when both sides are runtime memory
// (device or pinned) the kind is corrected to the real direction; when a side
// is pageable host memory the kind must be one the pair allows, and DEFAULT
// picks the pair's default.
aclError asyncDirection(const char* fn, aclrtMemcpyKind kind, const void* dst, const Endpoint& d, const void* src,
                        const Endpoint& s, Direction* dir) {
  const Direction real{s.device(), d.device()};
  if (kind == ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE || (d.place != Place::Pageable && s.place != Place::Pageable)) {
    *dir = kind == ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE ? kH2D : real;
    return ACL_SUCCESS;
  }
  // (allowed kinds, default) per pair with a pageable side.
  std::vector<Direction> allowed;
  Direction fallback;
  if (s.place == Place::Pageable && d.place == Place::Pageable) {
    allowed = {kH2H, kH2D, kD2H, kD2D}, fallback = kH2H;
  } else if (s.place == Place::Pageable) {
    allowed = d.device() ? std::vector{kH2D, kD2D} : std::vector{kH2H, kD2H};
    fallback = d.device() ? kH2D : kH2H;
  } else {
    allowed = s.device() ? std::vector{kD2H, kD2D} : std::vector{kH2H, kH2D};
    fallback = s.device() ? kD2H : kH2H;
  }
  std::optional<Direction> named = kindDirection(kind);
  if (!named) {
    *dir = fallback;
    return ACL_SUCCESS;
  }
  for (Direction a : allowed) {
    if (a == *named) {
      *dir = real;  // the copy itself goes where the pointers are
      return ACL_SUCCESS;
    }
  }
  return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": kind ", kindName(kind), " cannot copy from ", describe(s), " (",
              src, ") to ", describe(d), " (", dst, ")");
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

bool peerEnabled(int a, int b) { return gPeer[a * kMaxDevices + b].load(); }

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

// Device memory, or pinned host memory (CANN decides by the address; plain
// host memory is undefined there and rejected here).
aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
  const char* fn = "aclrtMemset";
  if (count == 0) return ACL_SUCCESS;
  if (devPtr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": devPtr is nullptr");
  int device = -1;
  if (aclError e = requireCurrentDevice(fn, &device)) return e;
  if (count > maxCount)
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": count ", count, " exceeds maxCount ", maxCount);
  const Endpoint e = locate(devPtr);
  if (e.place == Place::Pageable)
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": ", devPtr,
                " is pageable host memory, not device memory or pinned host memory of the runtime");
  if (!e.alloc.contains(reinterpret_cast<uintptr_t>(devPtr), count))
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": ", count, " bytes at ", devPtr, " overrun its allocation of ",
                e.alloc.size, " bytes");
  hostAccesses({{e.alloc, true}}, fn);
  AccessGrant grant;
  if (e.device()) grant.add(e.alloc);
  std::memset(devPtr, value, count);
  return ACL_SUCCESS;
}

// Queued on a stream of the current device; device memory or pinned host
// memory, like aclrtMemset.
aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream) {
  const char* fn = "aclrtMemsetAsync";
  if (count == 0) return ACL_SUCCESS;
  if (devPtr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": devPtr is nullptr");
  if (count > maxCount)
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": count ", count, " exceeds maxCount ", maxCount);
  if (stream != nullptr && !streamDevice(stream))
    return fail(ACL_ERROR_RT_INVALID_HANDLE, fn, ": stream ", stream, " is not a live stream");
  int current = -1;
  if (aclError e = requireCurrentDevice(fn, &current)) return e;
  const int streamDev = streamDevice(stream).value_or(-1);
  if (streamDev != current)
    return fail(ACL_ERROR_RT_STREAM_CONTEXT, fn, ": stream ", stream, " belongs to device ", streamDev,
                " but the current device is ", current);
  if (!streamMode(fn)) return ACL_ERROR_RT_PARAM_INVALID;
  const Endpoint e = locate(devPtr);
  if (e.place == Place::Pageable)
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": ", devPtr,
                " is pageable host memory, not device memory or pinned host memory of the runtime");
  if (!e.alloc.contains(reinterpret_cast<uintptr_t>(devPtr), count))
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": ", count, " bytes at ", devPtr, " overrun its allocation of ",
                e.alloc.size, " bytes");
  // The worker grants the task's accesses around the run (FLAGOS_SIM_PROTECT).
  enqueue(stream, callTask(fn, {{e.alloc, true}}, [devPtr, value, count] {
            std::memset(devPtr, value, count);
            return std::string();
          }));
  return ACL_SUCCESS;
}

aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
  const char* fn = "aclrtMemcpy";
  if (count == 0) return ACL_SUCCESS;
  if (dst == nullptr || src == nullptr)
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": ", dst == nullptr ? "dst" : "src", " is nullptr");
  if (aclError e = checkKind(fn, kind)) return e;
  if (count > destMax)
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": count ", count, " exceeds destMax ", destMax);
  if (dst == src) return ACL_SUCCESS;
  int device = -1;
  if (aclError e = requireCurrentDevice(fn, &device)) return e;
  const Endpoint d = locate(dst), s = locate(src);
  const Direction dir = kindDirection(kind).value_or(Direction{s.device(), d.device()});
  if (aclError e = checkTransfer(fn, kind, dir, dst, d, src, s, count)) return e;
  hostAccesses(copyAccesses(d, s), fn);
  transfer(dst, d, src, s, count);
  return ACL_SUCCESS;
}

// Queued on the stream when both sides are device or pinned memory. With a
// pageable host side, CANN synchronizes the stream and copies at once (the
// call returns after the copy, and reports the stream's pending error).
aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream) {
  const char* fn = "aclrtMemcpyAsync";
  if (count == 0) return ACL_SUCCESS;
  if (dst == nullptr || src == nullptr)
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": ", dst == nullptr ? "dst" : "src", " is nullptr");
  if (aclError e = checkKind(fn, kind)) return e;
  if (stream != nullptr && !streamDevice(stream))
    return fail(ACL_ERROR_RT_INVALID_HANDLE, fn, ": stream ", stream, " is not a live stream");
  if (count > destMax)
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": count ", count, " exceeds destMax ", destMax);
  int current = -1;
  if (aclError e = requireCurrentDevice(fn, &current)) return e;
  const Endpoint d = locate(dst), s = locate(src);
  Direction dir;
  if (aclError e = asyncDirection(fn, kind, dst, d, src, s, &dir)) return e;
  if (d.host() && s.host())
    return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn, ": host-to-host copies cannot be asynchronous (", dst,
                " and ", src, " are both host memory); use aclrtMemcpy");
  if (dst == src) return ACL_SUCCESS;
  const int streamDev = streamDevice(stream).value_or(-1);
  if (streamDev != current)
    return fail(ACL_ERROR_RT_STREAM_CONTEXT, fn, ": stream ", stream, " belongs to device ", streamDev,
                " but the current device is ", current);
  if (aclError e = checkTransfer(fn, kind, dir, dst, d, src, s, count)) return e;
  if (!(d.device() && d.alloc.device == streamDev) && !(s.device() && s.alloc.device == streamDev)) {
    std::string sides = d.device() && s.device() ? cat("dst on device ", d.alloc.device, " and src on device ",
                                                       s.alloc.device)
                        : d.device()             ? cat("dst on device ", d.alloc.device)
                                                 : cat("src on device ", s.alloc.device);
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": the stream belongs to device ", streamDev, " but the copy has ",
                sides);
  }
  if (!streamMode(fn)) return ACL_ERROR_RT_PARAM_INVALID;
  if (d.place == Place::Pageable || s.place == Place::Pageable) {
    if (aclError e = synchronizeStream(fn, stream)) return e;
    hostAccesses(copyAccesses(d, s), fn);
    transfer(dst, d, src, s, count);
    return ACL_SUCCESS;
  }
  enqueue(stream, callTask(fn, copyAccesses(d, s), [dst, d, src, s, count] {
            transfer(dst, d, src, s, count);
            return std::string();
          }));
  return ACL_SUCCESS;
}

aclError aclrtDeviceCanAccessPeer(int32_t* canAccessPeer, int32_t deviceId, int32_t peerDeviceId) {
  const char* fn = "aclrtDeviceCanAccessPeer";
  if (deviceId == peerDeviceId)
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": deviceId and peerDeviceId are both ", deviceId);
  if (aclError e = checkDevice(fn, peerDeviceId)) return e;
  if (aclError e = checkDevice(fn, deviceId)) return e;
  if (canAccessPeer == nullptr) return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": canAccessPeer is nullptr");
  *canAccessPeer = 1;
  return ACL_SUCCESS;
}

aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags) {
  const char* fn = "aclrtDeviceEnablePeerAccess";
  if (flags != 0) return fail(ACL_ERROR_FEATURE_UNSUPPORTED, fn, ": flags must be 0, got ", flags);
  int current = -1;
  if (aclError e = requireCurrentDevice(fn, &current)) return e;
  if (peerDeviceId == current)
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": peer device ", peerDeviceId, " is the current device");
  if (aclError e = checkDevice(fn, peerDeviceId)) return e;
  gPeer[current * kMaxDevices + peerDeviceId] = true;
  gPeer[peerDeviceId * kMaxDevices + current] = true;
  return ACL_SUCCESS;
}

aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId) {
  const char* fn = "aclrtDeviceDisablePeerAccess";
  int current = -1;
  if (aclError e = requireCurrentDevice(fn, &current)) return e;
  if (peerDeviceId == current)
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": peer device ", peerDeviceId, " is the current device");
  if (aclError e = checkDevice(fn, peerDeviceId)) return e;
  if (!peerEnabled(current, peerDeviceId))
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": peer access between devices ", current, " and ", peerDeviceId,
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
