// The calling thread's current flagos device.
//
// The runtime's current device is per host thread and switching it costs a
// runtime call, so the backend caches it in a thread-local and calls
// aclrtSetDevice only when it really changes. Everything in the backend
// reads and changes the current device through these functions, so the cache
// never goes stale.
#pragma once

#include <c10/core/Device.h>

namespace flagos {

// The most devices a process can see (the simulator allows 1..16).
constexpr int kMaxDevices = 16;

// The number of devices the runtime reports; raises a clear error when the
// runtime cannot report one (e.g. an invalid FLAGOS_SIM_DEVICES).
c10::DeviceIndex device_count();

// Raises c10::IndexError unless 0 <= index < device_count().
void check_device_index(c10::DeviceIndex index);

namespace detail {
// -1 until the thread first asks; then the runtime's current device.
extern thread_local c10::DeviceIndex tls_current_device;
c10::DeviceIndex init_current_device();
// True in a child process forked after its parent made a device current.
extern bool forked_child;
[[noreturn]] void fail_in_forked_child();
}  // namespace detail

// Raises in a child forked after the parent used a flagos device: the
// runtime's threads (stream workers) and locks do not survive fork(), so
// the child would wait forever for work nobody runs. As with CUDA, such a
// child must not use the device ('spawn' start method instead).
inline void check_not_forked() {
  if (detail::forked_child) [[unlikely]]
    detail::fail_in_forked_child();
}

inline c10::DeviceIndex current_device() {
  const c10::DeviceIndex cached = detail::tls_current_device;
  return cached >= 0 ? cached : detail::init_current_device();
}

// Makes `index` current; no runtime call when it already is.
void set_device(c10::DeviceIndex index);

// Makes `index` current and returns the previous current device.
c10::DeviceIndex exchange_device(c10::DeviceIndex index);

// Waits for all work queued on `index`; leaves the current device as it was.
void synchronize_device(c10::DeviceIndex index);

// Waits for the work queued on every device this process used, ignoring
// errors. For process exit only (it leaves the last device current).
void synchronize_devices_at_exit() noexcept;

inline c10::Device flagos_device(c10::DeviceIndex index) {
  return c10::Device(c10::DeviceType::PrivateUse1, index);
}

}  // namespace flagos
