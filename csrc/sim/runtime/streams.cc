// Streams and events. The simulator executes every piece of work
// synchronously when it is enqueued (copies, memsets, kernel launches), so
// streams never hold pending work and synchronization only validates. The
// bookkeeping is real, though: each stream and event belongs to the device
// that was current when it was created, and handles are validated, because
// which device a stream belongs to is exactly what launch validation checks.
#include <memory>
#include <unordered_map>

#include "runtime.h"

namespace fsim {
namespace {

struct Stream {
  int device;
};
struct Event {
  int device;
};

struct Handles {
  std::mutex mutex;
  std::unordered_map<const void*, std::unique_ptr<Stream>> streams;  // by handle
  std::unordered_map<const void*, std::unique_ptr<Event>> events;
};

Handles& handles() {
  static Handles* h = new Handles;  // leaked: threads may use handles during exit
  return *h;
}

std::optional<int> eventDevice(aclrtEvent event) {
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  auto it = h.events.find(event);
  if (it == h.events.end()) return std::nullopt;
  return it->second->device;
}

// Resolves a stream argument for `fn`: its device, or an error status.
aclError resolveStream(const char* fn, aclrtStream stream, int* device) {
  std::optional<int> d = streamDevice(stream);
  if (!d) return fail(ACL_ERROR_INVALID_PARAM, fn, ": stream ", stream, " is not a live stream");
  if (*d < 0) return requireCurrentDevice(fn, device);
  *device = *d;
  return ACL_SUCCESS;
}

aclError resolveEvent(const char* fn, aclrtEvent event, int* device) {
  std::optional<int> d = eventDevice(event);
  if (!d) return fail(ACL_ERROR_INVALID_PARAM, fn, ": event ", event, " is not a live event");
  *device = *d;
  return ACL_SUCCESS;
}

}  // namespace

std::optional<int> streamDevice(aclrtStream stream) {
  if (stream == nullptr) return currentDevice();
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  auto it = h.streams.find(stream);
  if (it == h.streams.end()) return std::nullopt;
  return it->second->device;
}

}  // namespace fsim

using namespace fsim;

extern "C" {

aclError aclrtCreateStream(aclrtStream* stream) {
  const char* fn = "aclrtCreateStream";
  if (stream == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": stream is nullptr");
  int device = -1;
  if (aclError e = requireCurrentDevice(fn, &device)) return e;
  auto s = std::make_unique<Stream>(device);
  *stream = s.get();
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  h.streams.emplace(s.get(), std::move(s));
  return ACL_SUCCESS;
}

aclError aclrtDestroyStream(aclrtStream stream) {
  const char* fn = "aclrtDestroyStream";
  if (stream == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": the default stream (nullptr) cannot be destroyed");
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  auto it = h.streams.find(stream);
  if (it == h.streams.end()) return fail(ACL_ERROR_INVALID_PARAM, fn, ": stream ", stream, " is not a live stream");
  h.streams.erase(it);
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
  int device = -1;
  return resolveStream("aclrtSynchronizeStream", stream, &device);
}

aclError aclrtCreateEvent(aclrtEvent* event) {
  const char* fn = "aclrtCreateEvent";
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, fn, ": event is nullptr");
  int device = -1;
  if (aclError e = requireCurrentDevice(fn, &device)) return e;
  auto ev = std::make_unique<Event>(device);
  *event = ev.get();
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  h.events.emplace(ev.get(), std::move(ev));
  return ACL_SUCCESS;
}

aclError aclrtDestroyEvent(aclrtEvent event) {
  const char* fn = "aclrtDestroyEvent";
  Handles& h = handles();
  std::lock_guard lock(h.mutex);
  auto it = h.events.find(event);
  if (it == h.events.end()) return fail(ACL_ERROR_INVALID_PARAM, fn, ": event ", event, " is not a live event");
  h.events.erase(it);
  return ACL_SUCCESS;
}

// An event records on a stream of its own device (the rule torch's Event
// enforces too); waiting may cross devices.
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  const char* fn = "aclrtRecordEvent";
  int eventDev = -1, streamDev = -1;
  if (aclError e = resolveEvent(fn, event, &eventDev)) return e;
  if (aclError e = resolveStream(fn, stream, &streamDev)) return e;
  if (eventDev != streamDev)
    return fail(ACL_ERROR_INVALID_PARAM, fn, ": event ", event, " belongs to device ", eventDev, " but stream ",
                stream, " belongs to device ", streamDev);
  return ACL_SUCCESS;
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
  const char* fn = "aclrtStreamWaitEvent";
  int eventDev = -1, streamDev = -1;
  if (aclError e = resolveStream(fn, stream, &streamDev)) return e;
  return resolveEvent(fn, event, &eventDev);
}

aclError aclrtSynchronizeEvent(aclrtEvent event) {
  int device = -1;
  return resolveEvent("aclrtSynchronizeEvent", event, &device);
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
