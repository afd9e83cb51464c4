// PyTorch's device guard for PrivateUse1 (c10::DeviceGuard, torch.flagos.device,
// torch.accelerator) on top of the thread's cached current device.
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "runtime/acl_check.h"
#include "runtime/device.h"
#include "runtime/stream.h"

namespace flagos {
namespace {

struct FlagosGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  static constexpr c10::DeviceType kType = c10::DeviceType::PrivateUse1;

  c10::DeviceType type() const override { return kType; }

  c10::Device exchangeDevice(c10::Device device) const override {
    TORCH_INTERNAL_ASSERT(device.type() == kType);
    return flagos_device(flagos::exchange_device(device.index()));
  }
  c10::Device getDevice() const override { return flagos_device(current_device()); }
  void setDevice(c10::Device device) const override {
    TORCH_INTERNAL_ASSERT(device.type() == kType);
    set_device(device.index());
  }
  void uncheckedSetDevice(c10::Device device) const noexcept override {
    try {
      set_device(device.index());
    } catch (const std::exception& e) {
      TORCH_WARN("flagos: restoring the current device failed: ", e.what());
    }
  }

  c10::Stream getStream(c10::Device device) const override {
    return current_stream(device.index());
  }
  c10::Stream getDefaultStream(c10::Device device) const override {
    return default_stream(device.index());
  }
  c10::Stream getNewStream(c10::Device device, int /*priority*/) const override {
    return new_stream(device.index());
  }
  c10::Stream exchangeStream(c10::Stream stream) const override {
    return flagos::exchange_stream(stream);
  }
  void synchronizeStream(const c10::Stream& stream) const override {
    flagos::synchronize_stream(stream);
  }
  bool queryStream(const c10::Stream& /*stream*/) const override {
    // Simulated streams run their work when it is queued.
    return true;
  }

  c10::DeviceIndex deviceCount() const noexcept override {
    try {
      return device_count();
    } catch (...) {
      return 0;
    }
  }
  void synchronizeDevice(const c10::DeviceIndex device) const override {
    synchronize_device(device);
  }

  // Events are runtime events created on the recording stream's device.
  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device,
              const c10::EventFlag /*flag*/) const override {
    TORCH_CHECK(device == -1 || device == stream.device_index(),
                "flagos: an event of flagos:", static_cast<int>(device),
                " cannot be recorded on a stream of flagos:",
                static_cast<int>(stream.device_index()));
    const c10::DeviceIndex previous = flagos::exchange_device(stream.device_index());
    if (*event == nullptr) {
      FLAGOS_ACL_CHECK(aclrtCreateEvent(event));
    }
    FLAGOS_ACL_CHECK(aclrtRecordEvent(*event, acl_stream(stream)));
    set_device(previous);
  }
  // Like a record, a wait is queued on the stream: its device is made
  // current for the call (c10::ivalue::Future blocks the current stream of
  // each of its devices, whichever device is current).
  void block(void* event, const c10::Stream& stream) const override {
    if (event != nullptr) {
      const c10::DeviceIndex previous = flagos::exchange_device(stream.device_index());
      const aclError status = aclrtStreamWaitEvent(acl_stream(stream), event);
      set_device(previous);
      FLAGOS_ACL_CHECK(status);
    }
  }
  bool queryEvent(void* /*event*/) const override { return true; }
  void synchronizeEvent(void* event) const override {
    if (event != nullptr) {
      FLAGOS_ACL_CHECK(aclrtSynchronizeEvent(event));
    }
  }
  void destroyEvent(void* event, const c10::DeviceIndex /*device*/) const noexcept override {
    if (event != nullptr) {
      aclrtDestroyEvent(event);
    }
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, FlagosGuardImpl);

}  // namespace
}  // namespace flagos
