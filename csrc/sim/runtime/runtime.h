// Declarations shared by the runtime's own source files.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "flagos/acl_api.h"
#include "flagos_sim.h"
#include "sim_internal.h"

namespace fsim {

inline constexpr int kMaxDevices = 16;

// Sets the error message and returns `status`, for one-line failures.
template <class... Args>
int fail(int status, const Args&... args) {
  setError(cat(args...));
  return status;
}

// ---- configuration (environment, read once) -----------------------------

// FLAGOS_SIM_DEVICES; -1 (and the error message, prefixed with `fn`) when
// the variable is invalid.
int deviceCount(const char* fn);
// ACL_SUCCESS if `id` is a valid device, else the error (message set):
// ACL_ERROR_RT_INVALID_DEVICEID, or ACL_ERROR_RT_NO_DEVICE when
// FLAGOS_SIM_DEVICES is invalid.
aclError checkDevice(const char* fn, int32_t id);
// The calling thread's current device, -1 if it has none: it never called
// aclrtSetDevice, or its device was torn down by a reset since.
int currentDevice();
// The current device in *device, or ACL_ERROR_RT_CONTEXT_NULL (message set).
aclError requireCurrentDevice(const char* fn, int* device);
// FLAGOS_SIM_PROTECT: false/true, or nullopt (message set) when invalid.
std::optional<bool> protectMode(const char* fn);
// FLAGOS_SIM_DEVICE_MEMORY: the bytes of memory of each device, or nullopt
// (message set) when invalid.
std::optional<uint64_t> deviceMemory(const char* fn);
// The mismatch mode, or nullopt (message set) when FLAGOS_SIM_ON_MISMATCH
// is invalid and fsimSetMismatchMode was not called.
std::optional<fsimMismatchMode> mismatchMode(const char* op);

// ---- memory ---------------------------------------------------------------

struct AllocInfo {
  uintptr_t base = 0;
  size_t size = 0;  // as requested from aclrtMalloc
  int device = -1;
  uint64_t id = 0;  // unique per allocation, so a stale grant never hits a reused address
  bool contains(uintptr_t p, size_t bytes) const { return p >= base && p - base <= size && bytes <= size - (p - base); }
};
// The allocation holding address `p` (any interior address), if any.
std::optional<AllocInfo> findAlloc(const void* p);

// Scoped read/write access to device allocations for the runtime's own
// work (copies, memset, kernels). With FLAGOS_SIM_PROTECT=1 device memory is
// PROT_NONE outside such scopes; grants are refcounted per allocation, so
// concurrent scopes on one allocation do not revoke each other's access.
class AccessGrant {
 public:
  AccessGrant() = default;
  AccessGrant(const AccessGrant&) = delete;
  AccessGrant& operator=(const AccessGrant&) = delete;
  ~AccessGrant();
  void add(const AllocInfo& alloc);

 private:
  std::vector<std::pair<uintptr_t, uint64_t>> granted_;  // (base, id)
};

bool peerEnabled(int a, int b);

// Live allocation count and bytes per device (index < kMaxDevices), as
// requested from aclrtMalloc.
void liveMemory(std::array<uint64_t, kMaxDevices>& count, std::array<uint64_t, kMaxDevices>& bytes);
// Live aclrtMallocHost blocks and their requested bytes.
void livePinnedMemory(uint64_t& count, uint64_t& bytes);

// ---- streams --------------------------------------------------------------

// The device of a stream handle: nullptr means the current device's default
// stream (-1 if the thread has no current device). nullopt for a handle that
// is not a live stream (destroyed, torn down by a reset, or never created).
std::optional<int> streamDevice(aclrtStream stream);
// Runs `work` on an already validated stream. Streams are synchronous for
// now: the work runs before this returns, and the stream's completion point
// advances with it.
void enqueue(aclrtStream stream, const std::function<void()>& work);
// Tears down a device's streams when a reset releases the device: their
// handles become stale (ACL_ERROR_RT_INVALID_HANDLE).
void releaseDeviceStreams(int device);

// ---- counters ---------------------------------------------------------------

struct Counters {
  std::atomic<uint64_t> setDeviceCalls{0};
  std::array<std::atomic<uint64_t>, kMaxDevices> launches{};
  std::atomic<uint64_t> rejectedLaunches{0};
  std::atomic<uint64_t> mismatchedLaunches{0};
  std::atomic<uint64_t> peerCopies{0};
  std::atomic<int64_t> liveExecutors{0};
  std::atomic<int64_t> liveArguments{0};  // aclCreate* objects not yet destroyed
  std::mutex opMutex;
  std::map<std::string, uint64_t, std::less<>> opLaunches;
};
Counters& counters();

}  // namespace fsim
