// Declarations shared by the runtime's own source files.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flagos/acl_api.h"
#include "flagos_sim.h"
#include "sim_internal.h"

namespace fsim {

inline constexpr int kMaxDevices = 16;

// Takes `mutex`, retrying for about a microsecond before it blocks. The host
// and a stream's worker take the same locks for a few hundred nanoseconds at
// a time; a thread that blocks makes the holder pay a futex wake (a system
// call, more than the wait) when it unlocks. For the locks of every launch.
inline std::unique_lock<std::mutex> lockSoon(std::mutex& mutex) {
  std::unique_lock<std::mutex> lock(mutex, std::try_to_lock);
  for (int i = 0; i < 128 && !lock.owns_lock(); ++i) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
    lock.try_lock();
  }
  if (!lock.owns_lock()) lock.lock();
  return lock;
}

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
// The pinned host block (aclrtMallocHost) holding address `p`, if any (device -1).
std::optional<AllocInfo> findPinned(const void* p);

// findAlloc for several addresses under one hold of the registry's lock (a
// launch looks up each of its arguments).
class AllocLookup {
 public:
  AllocLookup();
  std::optional<AllocInfo> find(const void* p) const;

 private:
  std::unique_lock<std::mutex> lock_;
};

// Whether aclTensors are live (created and not yet destroyed, with these
// serials), under one hold of the live set's lock.
class TensorLookup {
 public:
  TensorLookup();
  bool live(const aclTensor* tensor, uint64_t serial) const;

 private:
  std::unique_lock<std::mutex> lock_;
};

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

// ---- ordering and hazards (hazards.cc) ---------------------------------------
//
// A happens-before tracker, as race detectors (and torch.cuda's sanitizer)
// keep one: every stream and the host are timelines; each has a vector
// clock of how far it has seen every other timeline. Work queued on a stream
// comes after everything the host did before queuing it; a stream that waits
// for an event comes after what the event's record covers; a host that
// synchronizes (a stream, the device, an event, or an event or stream query
// that answers "complete") comes after what it waited for. Two accesses to
// one allocation, at least one a write, that no such chain orders are a
// hazard: counted and described (fsimHazardReport), whatever the worker
// threads' timing, so the report is deterministic.

using Timeline = uint32_t;
inline constexpr Timeline kHostTimeline = 0;

struct Clock {
  std::vector<uint64_t> v;  // by timeline; missing entries are 0
  uint64_t at(Timeline t) const { return t < v.size() ? v[t] : 0; }
  void set(Timeline t, uint64_t epoch) {
    if (t >= v.size()) v.resize(t + 1, 0);
    v[t] = epoch;
  }
  void join(const Clock& other) {
    if (other.v.size() > v.size()) v.resize(other.v.size(), 0);
    for (size_t i = 0; i < other.v.size(); ++i) v[i] = std::max(v[i], other.v[i]);
  }
};

// One allocation a piece of work reads or writes.
struct Access {
  AllocInfo alloc;    // device memory or a pinned block (device -1)
  bool write = false;
};

// A new timeline (a stream), named for hazard reports.
Timeline newTimeline(std::string name);
// Work queued at `position` of timeline t, whose clock is `clock`: joins
// the host's clock into `clock` (the work comes after what the host did),
// sets the position, and checks and records the work's accesses; `what` is a
// string literal (the call). One lock for all of it: every launch queues.
void queuedAt(Timeline t, Clock& clock, uint64_t position, const std::vector<Access>& accesses, const char* what);
// The host observing that everything `clock` covers has completed.
void hostObserved(const Clock& clock);
// Accesses the host makes itself (synchronous copies and memsets, frees).
void hostAccesses(const std::vector<Access>& accesses, const char* what);
// An allocation that no longer exists: its accesses are forgotten.
void forgetAllocation(uint64_t id);
uint64_t hazardCount();
void resetHazards();

// ---- what a launch's check depends on ---------------------------------------
// Counts the changes that can alter the outcome of a launch's check for the
// same executor, addresses, workspace, stream and current device: device
// memory allocated or freed, an aclTensor destroyed, a stream destroyed. A
// repeatable executor relaunched while the count is unchanged reuses its
// last clean check (executor.cc). Call layoutChanged() after the change is
// made, so that a check that reads the count first never outlives it.
uint64_t layoutGeneration();
void layoutChanged();

// ---- memory that queued work still uses ------------------------------------
// Every queued task holds its allocations until it has run, so that freeing
// them meanwhile (a hazard, which the tracker reports) never unmaps memory a
// worker is about to touch: the unmap waits for the last task.
void retainMemory(const std::vector<Access>& accesses);
void releaseMemory(const std::vector<Access>& accesses);

// ---- streams --------------------------------------------------------------

// CANN's submission-queue depth per stream on Ascend 910B/910_93 (rtsqDepth
// in hicann/runtime src/runtime/config/910_B_93/dev_info_reg.cc): the most
// positions a stream's queue holds.
inline constexpr size_t kQueueDepth = 2048;

// The device of a stream handle: nullptr means the current device's default
// stream (-1 if the thread has no current device). nullopt for a handle that
// is not a live stream (destroyed, torn down by a reset, or never created).
std::optional<int> streamDevice(aclrtStream stream);

// What a stream runs: the memory it touches, and the work itself, which
// returns an error message (empty on success). A failure is reported by the
// next synchronization of the stream. Immutable once queued: the queue
// shares it, so that a launch's snapshot can be reused by the next launch
// once no queued work holds it (executor.cc), without a heap allocation.
struct Work {
  std::vector<Access> accesses;
  virtual ~Work() = default;
  virtual std::string run() const = 0;
};

struct Task {
  const char* what = "";  // a string literal: the runtime call or operator
  std::shared_ptr<const Work> work;
  // Set when queued while launches are recorded (fsimRecordLaunches).
  bool recorded = false;
  uint64_t correlation = 0;
  aclrtStream stream = nullptr;
};

// A task of a runtime call (a copy, a memset) that runs `run`.
Task callTask(const char* what, std::vector<Access> accesses, std::function<std::string()> run);

// Queues `task` on an already validated stream (nullptr: the current
// device's default stream). The stream's worker thread runs it after
// everything queued before it on that stream.
void enqueue(aclrtStream stream, Task task);
// Waits for everything queued so far on a live stream (any device), as
// aclrtSynchronizeStream does, and returns (and clears) the stream's pending
// error, with the message set. For runtime calls that synchronize a stream
// implicitly (an async copy of pageable memory).
aclError synchronizeStream(const char* fn, aclrtStream stream);
// The stream mode, or nullopt (message set) when FLAGOS_SIM_STREAMS is
// invalid and fsimSetStreamMode was not called.
std::optional<fsimStreamMode> streamMode(const char* fn);
// Waits for the work of a device's streams, then tears them down when a
// reset releases the device: their handles become stale
// (ACL_ERROR_RT_INVALID_HANDLE).
void releaseDeviceStreams(int device);

// ---- launch records (records.cc) ---------------------------------------------

// Whether work queued now is recorded: one relaxed load.
bool recordingLaunches();
// Marks `task`, about to be queued on `stream`, for recording, with the
// calling thread's correlation id.
void markRecorded(Task& task, aclrtStream stream);
// Keeps the record of a marked task that ran on `device` from startNs to endNs.
void addRecord(const Task& task, int device, int64_t startNs, int64_t endNs);
// CLOCK_REALTIME in nanoseconds, the clock of the records.
int64_t realtimeNs();

// ---- counters ---------------------------------------------------------------

// Whether kernels that fail when they run write NaN instead (fsimSetLenient).
bool lenientKernels();

struct Counters {
  std::atomic<uint64_t> setDeviceCalls{0};
  std::array<std::atomic<uint64_t>, kMaxDevices> launches{};
  std::atomic<uint64_t> rejectedLaunches{0};
  std::atomic<uint64_t> mismatchedLaunches{0};
  std::atomic<uint64_t> peerCopies{0};
  std::atomic<uint64_t> failedTasks{0};  // queued work that failed when it ran
  std::atomic<uint64_t> lenientKernelErrors{0};  // kernels that failed and wrote NaN (fsimSetLenient)
  std::atomic<int64_t> liveExecutors{0};
  std::atomic<int64_t> liveArguments{0};  // aclCreate* objects not yet destroyed
  // The launch count of an operator (or collective), by name: a stable
  // counter, so that an executor looks it up once, at phase 1.
  std::atomic<uint64_t>& opLaunches(std::string_view op);
  std::mutex opMutex;
  std::map<std::string, std::atomic<uint64_t>, std::less<>> opCounts;  // zeroed, never erased, by a reset
};
Counters& counters();

}  // namespace fsim
