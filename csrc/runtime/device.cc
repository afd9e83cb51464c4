#include "runtime/device.h"

#include <c10/util/Exception.h>

#include <pthread.h>

#include <array>
#include <atomic>
#include <mutex>

#include "runtime/acl_check.h"

namespace flagos {

namespace detail {
thread_local c10::DeviceIndex tls_current_device = -1;
bool forked_child = false;

void fail_in_forked_child() {
  TORCH_CHECK(false, "flagos: cannot use flagos devices in a forked subprocess: the parent process used them "
              "before fork(), and the runtime's threads and state do not survive it. To use flagos with "
              "multiprocessing, use the 'spawn' start method (torch.multiprocessing.set_start_method('spawn'))");
}
}  // namespace detail

namespace {
// Devices this process has made current on some thread: the ones that can
// have work in flight at exit.
std::array<std::atomic<bool>, kMaxDevices> used_devices{};

// The one place a device becomes the runtime's current one. From the first
// call on, a forked child is marked unable to use the runtime.
void runtime_set_device(c10::DeviceIndex index) {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, [] { detail::forked_child = true; }); });
  FLAGOS_ACL_CHECK(aclrtSetDevice(index));
  used_devices[index].store(true, std::memory_order_relaxed);
}
}  // namespace

c10::DeviceIndex device_count() {
  // The count never changes in a process; ask the runtime once.
  static const c10::DeviceIndex count = [] {
    uint32_t n = 0;
    FLAGOS_ACL_CHECK(aclrtGetDeviceCount(&n));
    TORCH_CHECK(n > 0 && n <= static_cast<uint32_t>(kMaxDevices),
                "flagos: the runtime reports ", n, " devices");
    return static_cast<c10::DeviceIndex>(n);
  }();
  return count;
}

void check_device_index(c10::DeviceIndex index) {
  const auto count = device_count();
  TORCH_CHECK_INDEX(index >= 0 && index < count, "flagos device index ", static_cast<int>(index),
                    " is out of range: there are ", static_cast<int>(count),
                    " flagos devices (flagos:0..flagos:", static_cast<int>(count - 1), ")");
}

c10::DeviceIndex detail::init_current_device() {
  int32_t device = -1;
  check_not_forked();
  if (aclrtGetDevice(&device) != ACL_SUCCESS) {
    // A thread starts without a current device on CANN; like CUDA, make
    // device 0 current on first use.
    device_count();  // raises the runtime's configuration error, if any
    runtime_set_device(0);
    device = 0;
  }
  tls_current_device = static_cast<c10::DeviceIndex>(device);
  return tls_current_device;
}

void set_device(c10::DeviceIndex index) {
  check_not_forked();
  if (index == current_device()) {
    return;
  }
  check_device_index(index);
  runtime_set_device(index);
  detail::tls_current_device = index;
}

c10::DeviceIndex exchange_device(c10::DeviceIndex index) {
  const c10::DeviceIndex previous = current_device();
  set_device(index);
  return previous;
}

void synchronize_device(c10::DeviceIndex index) {
  check_device_index(index);
  const c10::DeviceIndex previous = exchange_device(index);
  const aclError status = aclrtSynchronizeDevice();
  set_device(previous);
  TORCH_CHECK(status == ACL_SUCCESS, "flagos: synchronizing flagos:", static_cast<int>(index),
              " failed with ACL error ", status, ": ", recent_error_message());
}

void synchronize_devices_at_exit() noexcept {
  if (detail::forked_child) return;  // the parent's work is not this process's
  for (size_t index = 0; index < used_devices.size(); ++index) {
    if (!used_devices[index].load(std::memory_order_relaxed)) continue;
    // Errors are dropped: nobody is left to report them to.
    if (aclrtSetDevice(static_cast<int32_t>(index)) == ACL_SUCCESS) (void)aclrtSynchronizeDevice();
  }
}

}  // namespace flagos
