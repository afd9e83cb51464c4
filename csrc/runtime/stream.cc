#include "runtime/stream.h"

#include <array>
#include <atomic>
#include <mutex>

#include "runtime/acl_check.h"
#include "runtime/device.h"

namespace flagos {
namespace {

struct DeviceStreams {
  // Slot 0 is the default stream. Slots are filled once and never change,
  // so the launch path reads them without a lock.
  std::array<std::atomic<aclrtStream>, kMaxStreamsPerDevice> handles{};
  int created = 1;  // slots in use, guarded by `mutex`
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

// Creates a runtime stream owned by `device`: a stream belongs to the device
// that is current when it is created.
aclrtStream create_on(c10::DeviceIndex device) {
  const c10::DeviceIndex previous = exchange_device(device);
  aclrtStream handle = nullptr;
  const aclError status = aclrtCreateStream(&handle);
  set_device(previous);
  TORCH_CHECK(status == ACL_SUCCESS, "flagos: creating a stream on flagos:",
              static_cast<int>(device), " failed with ACL error ", status, ": ",
              recent_error_message());
  return handle;
}

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
  const c10::Stream previous = current_stream(device);
  tls_current_ids[device] = stream.id();
  return previous;
}

c10::Stream new_stream(c10::DeviceIndex device) {
  check_device_index(device);
  DeviceStreams& streams = all_streams()[device];
  std::lock_guard<std::mutex> lock(streams.mutex);
  TORCH_CHECK(streams.created < kMaxStreamsPerDevice, "flagos: flagos:", static_cast<int>(device),
              " already has ", kMaxStreamsPerDevice, " streams");
  const int id = streams.created++;
  streams.handles[id].store(create_on(device));
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

void synchronize_stream(c10::Stream stream) {
  FLAGOS_ACL_CHECK(aclrtSynchronizeStream(acl_stream(stream)));
}

}  // namespace flagos
