#include "runtime/stream.h"

#include <array>
#include <atomic>
#include <mutex>
#include <vector>

#include "runtime/acl_check.h"
#include "runtime/device.h"

namespace flagos {
namespace {

struct DeviceStreams {
  // Slot 0 is the default stream. Slots are filled once and never change,
  // so the launch path reads them without a lock.
  std::array<std::atomic<aclrtStream>, kMaxStreamsPerDevice> handles{};
  int created = 1;  // slots in use, guarded by `mutex`
  int next_reused = 0;  // once all are in use: the next one new_stream hands out again, minus 1
  std::mutex mutex;
};

std::array<DeviceStreams, kMaxDevices>& all_streams() {
  static std::array<DeviceStreams, kMaxDevices> streams;
  return streams;
}

thread_local std::array<c10::StreamId, kMaxDevices> tls_current_ids{};

c10::Stream make_stream(c10::DeviceIndex device, c10::StreamId id) {
  return c10::Stream(c10::Stream::UNSAFE, flagos_device(device), id);
}

// Makes a device current for a scope (no runtime call when it already is).
class OnDevice {
 public:
  explicit OnDevice(c10::DeviceIndex device) : previous_(exchange_device(device)) {}
  ~OnDevice() {
    try {
      set_device(previous_);
    } catch (const std::exception& e) {
      TORCH_WARN("flagos: restoring flagos:", static_cast<int>(previous_), " failed: ", e.what());
    }
  }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;

 private:
  c10::DeviceIndex previous_;
};

// Creates a runtime stream owned by `device`: a stream belongs to the device
// that is current when it is created.
aclrtStream create_on(c10::DeviceIndex device) {
  const OnDevice on(device);
  aclrtStream handle = nullptr;
  const aclError status = aclrtCreateStream(&handle);
  TORCH_CHECK(status == ACL_SUCCESS, "flagos: creating a stream on flagos:",
              static_cast<int>(device), " failed with ACL error ", status, ": ",
              recent_error_message());
  return handle;
}

struct EventPool {
  std::mutex mutex;
  std::vector<aclrtEvent> free;
};

std::array<EventPool, kMaxDevices>& event_pools() {
  static auto* pools = new std::array<EventPool, kMaxDevices>();  // leaked: deleters run during exit
  return *pools;
}

// Each wait is on unless a negative-control test switched it off.
std::array<std::atomic<bool>, kStreamWaitKinds> wait_switches_off{};

std::array<std::atomic<bool>, kStreamWaitKinds>& wait_switches() { return wait_switches_off; }

}  // namespace

c10::Stream default_stream(c10::DeviceIndex device) {
  check_device_index(device);
  return make_stream(device, 0);
}

c10::Stream current_stream(c10::DeviceIndex device) {
  return make_stream(device, tls_current_ids[device]);
}

c10::Stream exchange_stream(c10::Stream stream) {
  const c10::DeviceIndex device = stream.device_index();
  check_device_index(device);
  TORCH_CHECK(stream.id() >= 0 && stream.id() < kMaxStreamsPerDevice,
              "flagos: unknown stream id ", stream.id());
  if (stream.id() != 0) {
    acl_stream(stream);  // raises for a stream that was never created
  }
  const c10::Stream previous = current_stream(device);
  tls_current_ids[device] = stream.id();
  return previous;
}

c10::Stream new_stream(c10::DeviceIndex device) {
  check_device_index(device);
  DeviceStreams& streams = all_streams()[device];
  std::lock_guard<std::mutex> lock(streams.mutex);
  if (streams.created == kMaxStreamsPerDevice) {
    // The pool is full: hand out its streams in turn, as CUDA's stream pool does.
    const int id = 1 + streams.next_reused;
    streams.next_reused = (streams.next_reused + 1) % (kMaxStreamsPerDevice - 1);
    return make_stream(device, id);
  }
  const int id = streams.created;
  streams.handles[id].store(create_on(device));
  streams.created++;
  return make_stream(device, id);
}

aclrtStream acl_stream(c10::Stream stream) {
  DeviceStreams& streams = all_streams()[stream.device_index()];
  aclrtStream handle = streams.handles[stream.id()].load(std::memory_order_acquire);
  if (handle != nullptr) {
    return handle;
  }
  TORCH_CHECK(stream.id() == 0, "flagos: stream ", stream.id(), " of flagos:",
              static_cast<int>(stream.device_index()), " was never created");
  std::lock_guard<std::mutex> lock(streams.mutex);
  handle = streams.handles[0].load();
  if (handle == nullptr) {
    handle = create_on(stream.device_index());
    streams.handles[0].store(handle, std::memory_order_release);
  }
  return handle;
}

c10::StreamId stream_id_of(c10::DeviceIndex device, aclrtStream handle) {
  if (handle == nullptr || device < 0 || device >= kMaxDevices) return -1;
  const DeviceStreams& streams = all_streams()[device];
  for (int id = 0; id < kMaxStreamsPerDevice; ++id) {
    if (streams.handles[id].load(std::memory_order_acquire) == handle) return id;
  }
  return -1;
}

void synchronize_stream(c10::Stream stream) {
  FLAGOS_ACL_CHECK(aclrtSynchronizeStream(acl_stream(stream)));
}

bool query_stream(c10::Stream stream) {
  aclrtStreamStatus status = ACL_STREAM_STATUS_RESERVED;
  FLAGOS_ACL_CHECK(aclrtStreamQuery(acl_stream(stream), &status));
  return status == ACL_STREAM_STATUS_COMPLETE;
}

// ---- events ---------------------------------------------------------------

aclrtEvent acquire_event(c10::DeviceIndex device) {
  EventPool& pool = event_pools()[device];
  {
    std::lock_guard<std::mutex> lock(pool.mutex);
    if (!pool.free.empty()) {
      aclrtEvent event = pool.free.back();
      pool.free.pop_back();
      return event;
    }
  }
  const OnDevice on(device);
  aclrtEvent event = nullptr;
  FLAGOS_ACL_CHECK(aclrtCreateEvent(&event));
  return event;
}

void release_event(c10::DeviceIndex device, aclrtEvent event) {
  EventPool& pool = event_pools()[device];
  std::lock_guard<std::mutex> lock(pool.mutex);
  pool.free.push_back(event);
}

void record_event(aclrtEvent event, c10::Stream stream) {
  const OnDevice on(stream.device_index());
  FLAGOS_ACL_CHECK(aclrtRecordEvent(event, acl_stream(stream)));
}

void stream_wait_event(c10::Stream stream, aclrtEvent event) {
  const OnDevice on(stream.device_index());
  FLAGOS_ACL_CHECK(aclrtStreamWaitEvent(acl_stream(stream), event));
}

bool event_complete(aclrtEvent event) {
  aclrtEventStatus status = ACL_EVENT_STATUS_RESERVED;
  FLAGOS_ACL_CHECK(aclrtQueryEvent(event, &status));
  return status == ACL_EVENT_STATUS_COMPLETE;
}

void synchronize_event(aclrtEvent event) { FLAGOS_ACL_CHECK(aclrtSynchronizeEvent(event)); }

bool all_complete(const BlockEvents& events, const char* what) noexcept {
  for (const auto& [device, event] : events) {
    try {
      if (!event_complete(event)) return false;
    } catch (const std::exception& e) {
      TORCH_WARN("flagos: querying ", what, " failed: ", e.what());
    }
  }
  return true;
}

void wait_stream(c10::Stream waiter, c10::Stream producer) {
  if (waiter == producer) {
    return;
  }
  const c10::DeviceIndex device = producer.device_index();
  aclrtEvent event = acquire_event(device);
  try {
    record_event(event, producer);
    stream_wait_event(waiter, event);
  } catch (...) {
    release_event(device, event);
    throw;
  }
  release_event(device, event);
}

void wait_on_host(c10::Stream stream) {
  const c10::DeviceIndex device = stream.device_index();
  aclrtEvent event = acquire_event(device);
  try {
    record_event(event, stream);
    synchronize_event(event);
  } catch (...) {
    release_event(device, event);
    throw;
  }
  release_event(device, event);
}

// ---- the backend's waits -----------------------------------------------------

const char* stream_wait_name(StreamWait kind) {
  switch (kind) {
    case StreamWait::kHostRead: return "host_read";
    case StreamWait::kHostWrite: return "host_write";
    case StreamWait::kPeerSource: return "peer_source";
    case StreamWait::kPeerRelease: return "peer_release";
    case StreamWait::kBlockReuse: return "block_reuse";
    case StreamWait::kPinnedReuse: return "pinned_reuse";
    case StreamWait::kRelease: return "release";
  }
  return "unknown";
}

void set_stream_wait_enabled(StreamWait kind, bool enabled) {
  wait_switches()[static_cast<size_t>(kind)].store(!enabled);
}

bool stream_wait_enabled(StreamWait kind) {
  return !wait_switches()[static_cast<size_t>(kind)].load(std::memory_order_relaxed);
}

}  // namespace flagos
