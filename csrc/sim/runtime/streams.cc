// Streams and events. Each stream and event belongs to the device that was
// current when it was created, which is exactly what launch validation and
// CANN's "stream of the current context" rule (ACL_ERROR_RT_STREAM_CONTEXT)
// check.
//
// Streams are synchronous for now: work runs when it is enqueued. The
// bookkeeping is that of an asynchronous stream all the same: a stream counts
// the work enqueued and completed, an event records the stream's position
// (its completion point) and the time that point completed, so that queries,
// waits and elapsed times only need a worker behind them to become real.
//
// Handles are never reused: a destroyed stream or event (or a stream of a
// device torn down by a reset) keeps its object, marked dead, so a stale
// handle is always recognised (ACL_ERROR_RT_INVALID_HANDLE, as CANN's handle
// guard reports).
#include <chrono>
#include <memory>
#include <unordered_map>

#include "runtime.h"

namespace fsim {
namespace {

struct Stream {
  int device = -1;
  bool alive = true;
  uint64_t enqueued = 0;   // work items submitted
  uint64_t completed = 0;  // work items finished (== enqueued while streams are synchronous)
};

struct Event {
  int device = -1;
  uint32_t flags = 0;
  bool alive = true;
  bool recorded = false;
  const Stream* stream = nullptr;  // where it was last recorded
  uint64_t point = 0;              // the stream's enqueued count at that record
  uint64_t timestampNs = 0;        // when the point completed
};

// aclrtCreateEvent's flags: CANN's RT_EVENT_DEFAULT (DDSYNC | TIME_LINE | STREAM_MARK).
constexpr uint32_t kDefaultEventFlags = 0x4 | ACL_EVENT_TIME_LINE | ACL_EVENT_CAPTURE_STREAM_PROGRESS;
// The flags aclrtCreateEventWithFlag accepts (CANN's RT_EVENT_FLAG_MAX).
constexpr uint32_t kEventFlagMask = 0x3F;
// Flags with which an event can be waited for (the rest are timeline-only).
constexpr uint32_t kWaitableFlags = ACL_EVENT_SYNC | 0x4 | ACL_EVENT_EXTERNAL | ACL_EVENT_IPC;

struct Handles {
  std::mutex mutex;
  // Every stream and event ever created, by handle; dead ones stay.
  std::unordered_map<const void*, std::unique_ptr<Stream>> streams;
  std::unordered_map<const void*, std::unique_ptr<Event>> events;
  // Each device's default stream (the nullptr handle); replaced after a reset.
  std::array<Stream*, kMaxDevices> defaults{};
  std::vector<std::unique_ptr<Stream>> defaultStreams;  // owns them, dead ones included
};

Handles& handles() {
  static Handles* h = new Handles;  // leaked: threads may use handles during exit
  return *h;
}

uint64_t nowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Requires the mutex. The live stream behind a non-null handle, or nullptr.
Stream* liveStream(Handles& h, aclrtStream stream) {
  auto it = h.streams.find(stream);
  return it != h.streams.end() && it->second->alive ? it->second.get() : nullptr;
}

// Requires the mutex. A device's default stream.
Stream* defaultStream(Handles& h, int device) {
  if (h.defaults[device] == nullptr) {
    h.defaultStreams.push_back(std::make_unique<Stream>());
    h.defaults[device] = h.defaultStreams.back().get();
    h.defaults[device]->device = device;
  }
  return h.defaults[device];
}

// Requires the mutex. The live event behind a handle, or nullptr.
Event* liveEvent(Handles& h, aclrtEvent event) {
  auto it = h.events.find(event);
  return it != h.events.end() && it->second->alive ? it->second.get() : nullptr;
}

bool complete(const Event& e) { return e.stream == nullptr || e.stream->completed >= e.point; }

aclError staleStream(const char* fn, aclrtStream stream) {
  return fail(ACL_ERROR_RT_INVALID_HANDLE, fn, ": stream ", stream,
              " is not a live stream (destroyed, its device was reset, or never created)");
}

aclError staleEvent(const char* fn, aclrtEvent event) {
  return fail(ACL_ERROR_RT_INVALID_HANDLE, fn, ": event ", event, " is not a live event (destroyed or never created)");
}

aclError createEvent(const char* fn, aclrtEvent* event, uint32_t flags) {
  int device = -1;
  if (aclError e = requireCurrentDevice(fn, &device)) return e;
  auto ev = std::make_unique<Event>();
  ev->device = device;
  ev->flags = flags;
  *event = ev.get();
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  h.events.emplace(ev.get(), std::move(ev));
  return ACL_SUCCESS;
}

// Resolves the stream of a call that queues work on it: a stale handle, no
// current device, or a stream of another device than the current one fail.
// Requires the mutex.
aclError streamOfCurrentDevice(const char* fn, Handles& h, aclrtStream stream, Stream** out) {
  Stream* s = stream != nullptr ? liveStream(h, stream) : nullptr;
  if (stream != nullptr && s == nullptr) return staleStream(fn, stream);
  int current = -1;
  if (aclError e = requireCurrentDevice(fn, &current)) return e;
  if (s == nullptr) s = defaultStream(h, current);
  if (s->device != current)
    return fail(ACL_ERROR_RT_STREAM_CONTEXT, fn, ": stream ", stream, " belongs to device ", s->device,
                " but the current device is ", current);
  *out = s;
  return ACL_SUCCESS;
}

}  // namespace

std::optional<int> streamDevice(aclrtStream stream) {
  if (stream == nullptr) return currentDevice();
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  Stream* s = liveStream(h, stream);
  if (s == nullptr) return std::nullopt;
  return s->device;
}

void enqueue(aclrtStream stream, const std::function<void()>& work) {
  Stream* s = nullptr;
  {
    Handles& h = handles();
    std::lock_guard lock(h.mutex);
    s = stream != nullptr ? liveStream(h, stream) : nullptr;
    const int current = currentDevice();
    if (s == nullptr && stream == nullptr && current >= 0) s = defaultStream(h, current);
    if (s != nullptr) s->enqueued++;
  }
  work();
  if (s != nullptr) {
    Handles& h = handles();
    std::lock_guard lock(h.mutex);
    s->completed++;
  }
}

void releaseDeviceStreams(int device) {
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  for (auto& [handle, s] : h.streams)
    if (s->device == device) s->alive = false;
  if (h.defaults[device] != nullptr) {
    h.defaults[device]->alive = false;
    h.defaults[device] = nullptr;
  }
}

}  // namespace fsim

using namespace fsim;

extern "C" {

aclError aclrtCreateStream(aclrtStream* stream) {
  const char* fn = "aclrtCreateStream";
  if (stream == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": stream is nullptr");
  int device = -1;
  if (aclError e = requireCurrentDevice(fn, &device)) return e;
  auto s = std::make_unique<Stream>();
  s->device = device;
  *stream = s.get();
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  h.streams.emplace(s.get(), std::move(s));
  return ACL_SUCCESS;
}

// Only a stream of the current device can be destroyed. Its work is complete
// (streams are synchronous), so there is nothing to wait for.
aclError aclrtDestroyStream(aclrtStream stream) {
  const char* fn = "aclrtDestroyStream";
  if (stream == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": the default stream (nullptr) cannot be destroyed");
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  Stream* s = nullptr;
  if (aclError e = streamOfCurrentDevice(fn, h, stream, &s)) return e;
  s->alive = false;
  return ACL_SUCCESS;
}

// Any device's stream: CANN switches to the stream's device for the wait,
// but the calling thread needs a current device all the same.
aclError aclrtSynchronizeStream(aclrtStream stream) {
  const char* fn = "aclrtSynchronizeStream";
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  if (stream != nullptr && liveStream(h, stream) == nullptr) return staleStream(fn, stream);
  int device = -1;
  return requireCurrentDevice(fn, &device);  // then completed == enqueued: nothing to wait for
}

aclError aclrtCreateEvent(aclrtEvent* event) {
  const char* fn = "aclrtCreateEvent";
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": event is nullptr");
  return createEvent(fn, event, kDefaultEventFlags);
}

// flag: an OR of ACL_EVENT_SYNC, ACL_EVENT_CAPTURE_STREAM_PROGRESS, 0x4 and
// ACL_EVENT_TIME_LINE, or ACL_EVENT_DEVICE_USE_ONLY or ACL_EVENT_EXTERNAL
// alone (ACL_EVENT_IPC needs aclrtCreateEventExWithFlag).
aclError aclrtCreateEventWithFlag(aclrtEvent* event, uint32_t flag) {
  const char* fn = "aclrtCreateEventWithFlag";
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": event is nullptr");
  if ((flag & kEventFlagMask) == 0 || flag > kEventFlagMask)
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": flag ", flag,
                " is not an OR of ACL_EVENT_SYNC, ACL_EVENT_CAPTURE_STREAM_PROGRESS, 0x4 and ACL_EVENT_TIME_LINE, "
                "nor ACL_EVENT_DEVICE_USE_ONLY or ACL_EVENT_EXTERNAL alone");
  for (uint32_t alone : {ACL_EVENT_DEVICE_USE_ONLY, ACL_EVENT_EXTERNAL}) {
    if ((flag & alone) != 0 && flag != alone)
      return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": flag ", flag, " combines ",
                  alone == ACL_EVENT_EXTERNAL ? "ACL_EVENT_EXTERNAL" : "ACL_EVENT_DEVICE_USE_ONLY",
                  ", which must be used alone, with other flags");
  }
  return createEvent(fn, event, flag);
}

// Needs no current device.
aclError aclrtDestroyEvent(aclrtEvent event) {
  const char* fn = "aclrtDestroyEvent";
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": event is nullptr");
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  Event* e = liveEvent(h, event);
  if (e == nullptr) return staleEvent(fn, event);
  e->alive = false;
  return ACL_SUCCESS;
}

// Records on a stream of the current device (the event's own device is not
// compared with it, as in CANN's open code).
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  const char* fn = "aclrtRecordEvent";
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": event is nullptr");
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  Event* e = liveEvent(h, event);
  if (e == nullptr) return staleEvent(fn, event);
  if (stream != nullptr && liveStream(h, stream) == nullptr) return staleStream(fn, stream);
  if (e->flags == ACL_EVENT_DEVICE_USE_ONLY)
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": event ", event,
                " was created with ACL_EVENT_DEVICE_USE_ONLY and cannot be recorded from the host");
  Stream* s = nullptr;
  if (aclError err = streamOfCurrentDevice(fn, h, stream, &s)) return err;
  e->recorded = true;
  e->stream = s;
  e->point = s->enqueued;
  e->timestampNs = nowNs();  // the point is already complete: the stream is synchronous
  return ACL_SUCCESS;
}

// The stream (of the current device) waits for the event, which may have
// been recorded on any device.
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
  const char* fn = "aclrtStreamWaitEvent";
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": event is nullptr");
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  Event* e = liveEvent(h, event);
  if (e == nullptr) return staleEvent(fn, event);
  if (stream != nullptr && liveStream(h, stream) == nullptr) return staleStream(fn, stream);
  if (e->flags == ACL_EVENT_DEVICE_USE_ONLY)
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": event ", event,
                " was created with ACL_EVENT_DEVICE_USE_ONLY and can be waited for on the device only");
  if ((e->flags & kWaitableFlags) == 0)
    return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn, ": event ", event, " has flags ", e->flags,
                ", without ACL_EVENT_SYNC: it cannot be waited for");
  Stream* s = nullptr;
  if (aclError err = streamOfCurrentDevice(fn, h, stream, &s)) return err;
  if (!e->recorded && (e->flags & (ACL_EVENT_SYNC | ACL_EVENT_EXTERNAL)) == 0)
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": event ", event,
                " has never been recorded (call aclrtRecordEvent first)");
  return ACL_SUCCESS;  // the recorded point is complete: nothing to wait for
}

// Any device's event; a never-recorded event returns at once.
aclError aclrtSynchronizeEvent(aclrtEvent event) {
  const char* fn = "aclrtSynchronizeEvent";
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": event is nullptr");
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  Event* e = liveEvent(h, event);
  if (e == nullptr) return staleEvent(fn, event);
  if (e->flags == ACL_EVENT_EXTERNAL)
    return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn, ": event ", event,
                " was created with ACL_EVENT_EXTERNAL and cannot be synchronized");
  return ACL_SUCCESS;
}

// NOT_READY only while a recorded point is pending; a never-recorded event
// is COMPLETE.
aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus* status) {
  const char* fn = "aclrtQueryEvent";
  if (event == nullptr || status == nullptr)
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": ", event == nullptr ? "event" : "status", " is nullptr");
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  Event* e = liveEvent(h, event);
  if (e == nullptr) return staleEvent(fn, event);
  if (e->flags == ACL_EVENT_EXTERNAL)
    return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn, ": event ", event,
                " was created with ACL_EVENT_EXTERNAL and cannot be queried");
  *status = e->recorded && !complete(*e) ? ACL_EVENT_STATUS_NOT_READY : ACL_EVENT_STATUS_COMPLETE;
  return ACL_SUCCESS;
}

// Milliseconds from startEvent's completion to endEvent's.
aclError aclrtEventElapsedTime(float* ms, aclrtEvent startEvent, aclrtEvent endEvent) {
  const char* fn = "aclrtEventElapsedTime";
  if (ms == nullptr || startEvent == nullptr || endEvent == nullptr)
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": ",
                ms == nullptr ? "ms" : startEvent == nullptr ? "startEvent" : "endEvent", " is nullptr");
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  Event* start = liveEvent(h, startEvent);
  if (start == nullptr) return staleEvent(fn, startEvent);
  Event* end = liveEvent(h, endEvent);
  if (end == nullptr) return staleEvent(fn, endEvent);
  if (start->flags == ACL_EVENT_EXTERNAL || end->flags == ACL_EVENT_EXTERNAL)
    return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn, ": events created with ACL_EVENT_EXTERNAL have no time");
  if (!start->recorded || !end->recorded)
    return fail(ACL_ERROR_RT_INTERNAL_ERROR, fn, ": ", !start->recorded ? "startEvent " : "endEvent ",
                !start->recorded ? startEvent : endEvent, " has never been recorded");
  if (!complete(*start) || !complete(*end))
    return fail(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, fn, ": ", !complete(*start) ? "startEvent" : "endEvent",
                " has not completed yet");
  *ms = static_cast<float>((static_cast<double>(end->timestampNs) - static_cast<double>(start->timestampNs)) / 1e6);
  return ACL_SUCCESS;
}

int32_t fsimStreamDevice(void* stream) {
  std::optional<int> d = streamDevice(stream);
  if (!d) {
    setError(cat("fsimStreamDevice: stream ", stream, " is not a live stream"));
    return -1;
  }
  return *d;
}

}  // extern "C"
