// Streams of flagos devices, as c10::Stream values, events, and the waits
// the backend inserts between them (docs/streams.md).
//
// Every device has a default stream (id 0) created on that device the first
// time it is needed, and up to kMaxStreamsPerDevice - 1 more streams made by
// new_stream(); once they all exist, new_stream() hands them out again in
// turn (as CUDA's stream pool does), so creating streams in a loop works.
// Each thread has a current stream per device (the default until changed),
// so a kernel launched for device d takes d's current stream whatever device
// happens to be current.
//
// Streams are asynchronous: work queued on a stream runs after the call that
// queued it has returned. The backend orders it with the waits below; every
// one can be switched off for negative-control tests
// (torch_fl._C._set_stream_waits_enabled).
#pragma once

#include <c10/core/Stream.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "flagos/acl_api.h"

namespace flagos {

constexpr int kMaxStreamsPerDevice = 32;

c10::Stream default_stream(c10::DeviceIndex device);
c10::Stream current_stream(c10::DeviceIndex device);
// Makes `stream` current for its device on this thread; returns the previous one.
c10::Stream exchange_stream(c10::Stream stream);
c10::Stream new_stream(c10::DeviceIndex device);

// The runtime handle behind a stream; created on its device on first use.
aclrtStream acl_stream(c10::Stream stream);

// The id of the backend's stream behind a runtime handle of `device`, -1
// for a handle the backend did not create (the profiler's stream tracks).
c10::StreamId stream_id_of(c10::DeviceIndex device, aclrtStream handle);

// Waits for everything queued on `stream`; raises the runtime's error for
// work that failed on it (ACL_ERROR_RT_AICORE_EXCEPTION), as torch.cuda
// reports device-side errors at the next synchronization.
void synchronize_stream(c10::Stream stream);
// Whether everything queued on `stream` has run.
bool query_stream(c10::Stream stream);

// ---- events ---------------------------------------------------------------

// Runtime events for the backend's own ordering, from a per-device pool
// (created on that device). A wait takes the record of the moment it is
// queued, so an event may go back to the pool as soon as it has been
// recorded and waited for.
aclrtEvent acquire_event(c10::DeviceIndex device);
void release_event(c10::DeviceIndex device, aclrtEvent event);
// Records `event` on `stream` (making the stream's device current for the
// call); waits for it on `stream` (idem); whether its record has completed;
// blocks the host until it has (leaving the stream's errors to the stream).
void record_event(aclrtEvent event, c10::Stream stream);
void stream_wait_event(c10::Stream stream, aclrtEvent event);
bool event_complete(aclrtEvent event);
void synchronize_event(aclrtEvent event);

// Pool events recorded for a freed block, with their devices.
using BlockEvents = std::vector<std::pair<c10::DeviceIndex, aclrtEvent>>;
// Whether every one of them has completed, for a caching allocator deciding
// whether a freed block may be reused. Never throws (allocators call it from
// deleters): a failed query warns, naming `what`, and counts as complete.
bool all_complete(const BlockEvents& events, const char* what) noexcept;

// `waiter` runs nothing queued after this call before everything queued so
// far on `producer` has run: an event recorded on `producer`, waited for on
// `waiter` (nothing when they are the same stream).
void wait_stream(c10::Stream waiter, c10::Stream producer);
// The host waits for everything queued so far on `stream`, through an event:
// unlike synchronize_stream it leaves the stream's errors to the stream.
void wait_on_host(c10::Stream stream);

// ---- the backend's waits -----------------------------------------------------

// One kind of wait the backend inserts (docs/streams.md lists what each
// protects and the test that fails without it).
enum class StreamWait : uint8_t {
  kHostRead,      // a host read of device memory (to CPU, .item()) waits for the stream
  kHostWrite,     // a blocking host-to-device copy waits for the work queued on the destination's stream
  kPeerSource,    // a cross-device copy waits for the source's stream
  kPeerRelease,   // the source's stream waits for the cross-device copy before going on
  kBlockReuse,    // a freed block used by other streams (record_stream) waits for their events
  kPinnedReuse,   // a freed pinned block used by a non-blocking copy waits for the copy's event
  kRelease,       // memory goes back to the runtime (aclrtFree) after the streams that used it
};
constexpr int kStreamWaitKinds = 7;

// The wait's name in torch_fl._C._set_stream_waits_enabled ("host_read", ...).
const char* stream_wait_name(StreamWait kind);
// Diagnostic switches, for negative-control tests only.
void set_stream_wait_enabled(StreamWait kind, bool enabled);
bool stream_wait_enabled(StreamWait kind);

}  // namespace flagos
