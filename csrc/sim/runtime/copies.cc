// Simulated copies, memsets and peer access: copies checked against what the
// pointers really are (device memory of which device, pinned or pageable host
// memory, memory.cc's registry), inside their blocks, and between devices
// only with peer access.
//
// Synchronous copies and memsets (aclrtMemcpy, aclrtMemset) act at once,
// without waiting for work queued on any stream: CANN's documentation says
// so ("no implicit device or stream synchronization"). A program that reads
// device memory a queued kernel writes must synchronize first; the hazard
// tracker reports it when it does not. aclrtMemcpyAsync and aclrtMemsetAsync
// queue their work on the stream, except that an async copy between device
// and pageable host memory synchronizes the stream and copies at once, as
// CANN's runtime does.
//
// Where CANN's open code decides, the checks and codes are CANN's. Where
// CANN's closed driver decides (a sync copy whose kind does not match its
// pointers, copies between devices without peer access, memset bounds), the
// simulator rejects with ACL_ERROR_RT_PARAM_INVALID, the code CANN maps the
// driver's "invalid value" to (docs/cann-fidelity.md, section 4).
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "runtime.h"

namespace fsim {
namespace {

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
  if (std::optional<AllocInfo> a = findAlloc(p)) return {Place::Device, *a};
  if (std::optional<AllocInfo> a = findPinned(p)) return {Place::Pinned, *a};
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

bool peerEnabled(int a, int b) { return gPeer[a * kMaxDevices + b].load(); }

}  // namespace fsim

using namespace fsim;

extern "C" {

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

}  // extern "C"
