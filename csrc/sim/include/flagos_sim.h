// The simulator's own C API: what a real CANN install does not have.
// Counters, launch-validation mode and fault injection, for tests and for
// torch_fl.sim (which loads it with ctypes). The backend calls only the
// launch records (below) and fsimDrainStreams, from its profiler plugin.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// What a phase-2 launch does when its tensors, workspace, stream and the
// calling thread's current device are not all one device.
typedef enum {
  FSIM_MISMATCH_ERROR = 0,  // reject: ACLNN_ERR_RUNTIME_ERROR + message
  FSIM_MISMATCH_NAN = 1,    // "succeed" and fill floating outputs with NaN
} fsimMismatchMode;

// Number of simulated devices (FLAGOS_SIM_DEVICES, default 4, 1..16).
// Returns -1 and sets aclGetRecentErrMsg() when the variable is invalid.
int32_t fsimDeviceCount(void);

// How streams run the work queued on them. In both modes each stream has a
// worker thread that runs its work in order, after the call that queued it
// has returned.
typedef enum {
  FSIM_STREAMS_ASYNC = 0,  // the worker runs work as soon as it can (default)
  FSIM_STREAMS_LAZY = 1,   // work runs only once something waits for it: a
                           // synchronization of its stream, device or of an
                           // event recorded after it (aclrtSynchronize*, an
                           // implicit one), or a stream waiting for such an
                           // event. Unsynchronized host access then always
                           // sees memory as it was before the work.
} fsimStreamMode;

// Overrides FLAGOS_SIM_STREAMS (an invalid value included). Switching to
// async lets held work run.
void fsimSetStreamMode(fsimStreamMode mode);
fsimStreamMode fsimGetStreamMode(void);
// Waits for the work queued on every live stream of every device (running
// it in lazy mode). Pending errors stay with their streams.
void fsimDrainStreams(void);

// Hazards: accesses to one allocation, at least one a write, by two
// timelines (streams, or the host's own synchronous copies, memsets and
// frees) that no synchronization of the program orders. Decided from the
// order of runtime calls, not from the workers' timing. The latest reports,
// one per line (at most 32), valid until the calling thread's next call;
// fsimStatsJson counts them ("hazards") and fsimResetStats clears both.
const char* fsimHazardReport(void);

void fsimSetMismatchMode(fsimMismatchMode mode);
fsimMismatchMode fsimGetMismatchMode(void);

// Lenient kernels (FLAGOS_SIM_LENIENT=1, or fsimSetLenient(1)): the
// operators compute with ATen's CPU kernels, which check their arguments;
// CANN's kernels on the device do not. In lenient mode a kernel that ATen
// refuses when it runs on the stream does not fail: its outputs get NaN
// (0xFF bytes for other dtypes), as a wrong result on hardware would, and it
// is counted ("lenient_kernel_errors" in fsimStatsJson). A check the
// backend's wrapper misses then shows as a wrong result, not as a stream
// error at the next synchronization. Phase 1 still rejects what CANN's
// phase 1 rejects.
void fsimSetLenient(int32_t on);
int32_t fsimGetLenient(void);

// Counters. A JSON object, valid until the calling thread's next call:
// {"set_device_calls": N, "launches": {"0": N, ...}, "rejected_launches": N,
//  "mismatched_launches": N,
//  "live_allocations": {"0": N, ...}, "live_bytes": {"0": N, ...},
//  "live_pinned_allocations": N, "live_pinned_bytes": N,
//  "op_launches": {"aclnnAdd": N, ...}, "peer_copies": N,
//  "live_executors": N, "live_arguments": N, "failed_tasks": N, "hazards": N,
//  "lenient_kernel_errors": N}
// Per-device maps list every device 0..N-1. set_device_calls counts every
// aclrtSetDevice call (same device and failed calls included); launches and
// op_launches count launches whose kernel ran; rejected_launches counts
// launches that returned an error from validation; mismatched_launches counts
// device mismatches in either mode; live_executors and live_arguments
// (aclCreate* objects) expose leaks, like the live_* memory counters
// (live_pinned_*: aclrtMallocHost blocks; bytes are the requested sizes).
// failed_tasks counts queued work that failed when it ran (reported by the
// next synchronization of its stream); hazards, see fsimHazardReport;
// lenient_kernel_errors, see fsimSetLenient.
const char* fsimStatsJson(void);
void fsimResetStats(void);  // zeroes event counters, not live counts

// Fault injection: the next `count` calls of operator `op` (e.g. "aclnnAdd")
// fail at `phase` (1 = GetWorkspaceSize, 2 = launch, 3 = the kernel's run on
// its stream: the launch succeeds and the next synchronization of the
// stream reports ACL_ERROR_RT_AICORE_EXCEPTION). count 0 clears.
// Also settable at load time: FLAGOS_SIM_FAULT="aclnnAdd:2[:count],..."
void fsimInjectFault(const char* op, int32_t phase, int32_t count);
void fsimClearFaults(void);

// The device that owns a device pointer (any address inside an allocation),
// or -1 for any other memory (pinned host memory included).
int32_t fsimPointerDevice(const void* ptr);
// The device a stream belongs to; nullptr means the current device's
// default stream. -1 (message set) for a handle that is not a live stream.
int32_t fsimStreamDevice(void* stream);

// ---- launch records: the device side of a profile ----------------------
// What CANN's profiling (msprof, driven by aclprofStart) reports as task
// time: which kernel or async copy ran on which device and stream, when.

typedef enum {
  FSIM_RECORD_KERNEL = 0,  // an ACLNN operator's phase 2
  FSIM_RECORD_MEMCPY = 1,  // aclrtMemcpyAsync
  FSIM_RECORD_MEMSET = 2,  // aclrtMemsetAsync
} fsimRecordKind;

typedef struct {
  const char* name;      // "aclnnAdd", "aclrtMemcpyAsync": static storage
  int32_t kind;          // fsimRecordKind
  int32_t device;
  void* stream;          // the handle it was queued on (nullptr: the default stream)
  uint64_t correlation;  // the queuing thread's innermost correlation id, 0 if none
  int64_t startNs;       // when the stream's worker ran it, in nanoseconds of
  int64_t endNs;         // CLOCK_REALTIME (the clock of PyTorch's profiler)
} fsimLaunchRecord;

// Starts (1) or stops (0) recording the work queued from now on. Starting
// drops the records nobody took. Off, a queued task costs one flag test.
void fsimRecordLaunches(int32_t on);
// The calling thread's correlation ids (CUPTI's external correlation): work
// it queues is recorded with the innermost one, if that was pushed since
// recording last started (else with 0: a profiler that stopped inside an
// op leaves its id pushed, and that id means nothing to the next one).
void fsimPushCorrelationId(uint64_t id);
void fsimPopCorrelationId(void);
// Moves up to `capacity` records of work that has run into `out`, oldest
// first, and returns their number. Work still queued is taken later.
size_t fsimTakeLaunchRecords(fsimLaunchRecord* out, size_t capacity);

#ifdef __cplusplus
}  // extern "C"
#endif
