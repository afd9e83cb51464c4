// Events: each belongs to the device that was current when it was created.
// A record marks a point of its stream's queue (stream_queue.h) and completes,
// with a timestamp, when the stream's worker gets there; a stream that waits
// for an event does not run past the wait before the event's point has
// completed, whatever device the event was recorded on. Handles are never
// reused: a destroyed event keeps its object, marked dead, so a stale handle
// is always recognised (ACL_ERROR_RT_INVALID_HANDLE).
#include <memory>

#include "stream_queue.h"

namespace fsim {
namespace {


// aclrtCreateEvent's flags: CANN's RT_EVENT_DEFAULT (DDSYNC | TIME_LINE | STREAM_MARK).
constexpr uint32_t kDefaultEventFlags = 0x4 | ACL_EVENT_TIME_LINE | ACL_EVENT_CAPTURE_STREAM_PROGRESS;
// The flags aclrtCreateEventWithFlag accepts (CANN's RT_EVENT_FLAG_MAX).
constexpr uint32_t kEventFlagMask = 0x3F;
// Flags with which an event can be waited for (the rest are timeline-only).
constexpr uint32_t kWaitableFlags = ACL_EVENT_SYNC | 0x4 | ACL_EVENT_EXTERNAL | ACL_EVENT_IPC;

// Requires the mutex. The live event behind a handle, or nullptr.
Event* liveEvent(Handles& h, aclrtEvent event) {
  auto it = h.events.find(event);
  return it != h.events.end() && it->second->alive ? it->second.get() : nullptr;
}

bool complete(const Event& e) { return !e.recorded || e.stream->completed >= e.point; }

aclError staleEvent(const char* fn, aclrtEvent event) {
  return fail(ACL_ERROR_RT_INVALID_HANDLE, fn, ": event ", event, " is not a live event (destroyed or never created)");
}

// Requires the mutex, which it may release while the stream's queue is full.
// The common checks of a record and a wait: a live event and stream, and an
// event the host may use (`deviceOnly` completes the refusal's message).
aclError hostEventOnStream(const char* fn, std::unique_lock<std::mutex>& lock, Handles& h, aclrtEvent event,
                           aclrtStream stream, const char* deviceOnly, Event** found) {
  awaitRoom(lock, h, stream);
  Event* e = liveEvent(h, event);
  if (e == nullptr) return staleEvent(fn, event);
  if (stream != nullptr && liveStream(h, stream) == nullptr) return staleStream(fn, stream);
  if (e->flags == ACL_EVENT_DEVICE_USE_ONLY)
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": event ", event, " was created with ACL_EVENT_DEVICE_USE_ONLY and ",
                deviceOnly);
  *found = e;
  return ACL_SUCCESS;
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

}  // namespace
}  // namespace fsim

using namespace fsim;

extern "C" {

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

// Needs no current device. A pending record still completes (waits that
// were queued for it keep their point).
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
// compared with it, as in CANN's open code): the event marks the stream's
// current end, and completes when the stream gets there.
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  const char* fn = "aclrtRecordEvent";
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": event is nullptr");
  Handles& h = handles();
  std::unique_lock lock(h.mutex);
  Event* e = nullptr;
  if (aclError err = hostEventOnStream(fn, lock, h, event, stream, "cannot be recorded from the host", &e)) return err;
  Stream* s = nullptr;
  if (aclError err = streamOfCurrentDevice(fn, h, stream, &s)) return err;
  if (!streamMode(fn)) return ACL_ERROR_RT_PARAM_INVALID;
  e->recorded = true;
  e->stream = s;
  e->serial++;
  e->stamped = false;
  Item item;
  item.kind = ItemKind::kRecord;
  item.event = e;
  item.recordSerial = e->serial;
  push(h, s, std::move(item));
  e->point = s->enqueued;
  e->clock = s->clock;
  releaseAndWake(lock, s);
  return ACL_SUCCESS;
}

// The stream (of the current device) waits for the event's latest record at
// the time of this call, which may be on any device.
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
  const char* fn = "aclrtStreamWaitEvent";
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": event is nullptr");
  Handles& h = handles();
  std::unique_lock lock(h.mutex);
  Event* e = nullptr;
  if (aclError err = hostEventOnStream(fn, lock, h, event, stream, "can be waited for on the device only", &e))
    return err;
  if ((e->flags & kWaitableFlags) == 0)
    return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn, ": event ", event, " has flags ", e->flags,
                ", without ACL_EVENT_SYNC: it cannot be waited for");
  Stream* s = nullptr;
  if (aclError err = streamOfCurrentDevice(fn, h, stream, &s)) return err;
  if (!e->recorded && (e->flags & (ACL_EVENT_SYNC | ACL_EVENT_EXTERNAL)) == 0)
    return fail(ACL_ERROR_RT_PARAM_INVALID, fn, ": event ", event,
                " has never been recorded (call aclrtRecordEvent first)");
  if (!streamMode(fn)) return ACL_ERROR_RT_PARAM_INVALID;
  if (!e->recorded) return ACL_SUCCESS;  // a sync event never recorded: nothing to wait for
  Item item;
  item.kind = ItemKind::kWait;
  item.target = e->stream;
  item.targetPoint = e->point;
  push(h, s, std::move(item));
  s->clock.join(e->clock);
  releaseAndWake(lock, s);
  return ACL_SUCCESS;
}

// Any device's event, no current device needed; a never-recorded event
// returns at once. Failures of the work waited for stay with its stream.
aclError aclrtSynchronizeEvent(aclrtEvent event) {
  const char* fn = "aclrtSynchronizeEvent";
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": event is nullptr");
  Handles& h = handles();
  std::unique_lock lock(h.mutex);
  Event* e = liveEvent(h, event);
  if (e == nullptr) return staleEvent(fn, event);
  if (e->flags == ACL_EVENT_EXTERNAL)
    return fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, fn, ": event ", event,
                " was created with ACL_EVENT_EXTERNAL and cannot be synchronized");
  if (!e->recorded) return ACL_SUCCESS;
  const Clock clock = e->clock;
  waitFor(lock, e->stream, e->point);
  hostObserved(clock);
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
  if (complete(*e)) {
    if (e->recorded) hostObserved(e->clock);
    *status = ACL_EVENT_STATUS_COMPLETE;
  } else {
    *status = ACL_EVENT_STATUS_NOT_READY;
  }
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
  if (!start->stamped || !end->stamped)
    return fail(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, fn, ": ", !start->stamped ? "startEvent" : "endEvent",
                " has not completed yet (synchronize it first)");
  *ms = static_cast<float>((static_cast<double>(end->timestampNs) - static_cast<double>(start->timestampNs)) / 1e6);
  return ACL_SUCCESS;
}

}  // extern "C"
