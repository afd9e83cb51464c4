// PyTorch's device guard for PrivateUse1 (c10::DeviceGuard, torch.flagos.device,
// torch.accelerator) on top of the thread's cached current device.
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <c10/core/DeviceCapability.h>

#include "runtime/acl_check.h"
#include "runtime/allocator.h"
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

  // A device without an index (torch.Stream(device="flagos")) is the current device.
  static c10::DeviceIndex index_of(c10::Device device) {
    if (!device.has_index()) {
      return current_device();
    }
    check_device_index(device.index());
    return device.index();
  }

  c10::Stream getStream(c10::Device device) const override {
    return current_stream(index_of(device));
  }
  c10::Stream getDefaultStream(c10::Device device) const override {
    return default_stream(index_of(device));
  }
  // Stream priorities are not modelled: every stream has the default one.
  c10::Stream getNewStream(c10::Device device, int /*priority*/) const override {
    return new_stream(index_of(device));
  }
  c10::Stream exchangeStream(c10::Stream stream) const override {
    return flagos::exchange_stream(stream);
  }
  void synchronizeStream(const c10::Stream& stream) const override {
    flagos::synchronize_stream(stream);
  }
  bool queryStream(const c10::Stream& stream) const override { return flagos::query_stream(stream); }

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

  // The dtypes ACLNN has (to_acl_dtype), for torch.accelerator.get_device_capability.
  c10::DeviceCapability getDeviceCapability(c10::Device device) const override {
    check_device_index(device.index());
    c10::DeviceCapability capability;
    capability.capability_data.capability_bits = 0;
    auto& types = capability.capability_data.supported_scalar_types;
    types.has_Float = types.has_Half = types.has_BFloat16 = types.has_Double = 1;
    types.has_Char = types.has_Short = types.has_Int = types.has_Long = 1;
    types.has_Byte = types.has_UInt16 = types.has_UInt32 = types.has_UInt64 = 1;
    types.has_Bool = types.has_ComplexFloat = types.has_ComplexDouble = 1;
    return capability;
  }

  // Events are runtime events created on the recording stream's device: with
  // a timeline (aclrtCreateEvent) when timing is asked for
  // (torch.Event(enable_timing=True): BACKEND_DEFAULT), else a plain
  // synchronization event (ACL_EVENT_SYNC).
  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device,
              const c10::EventFlag flag) const override {
    TORCH_CHECK(device == -1 || device == stream.device_index(),
                "flagos: an event of flagos:", static_cast<int>(device),
                " cannot be recorded on a stream of flagos:",
                static_cast<int>(stream.device_index()));
    const c10::DeviceIndex previous = flagos::exchange_device(stream.device_index());
    try {
      if (*event == nullptr) {
        if (flag == c10::EventFlag::BACKEND_DEFAULT) {
          FLAGOS_ACL_CHECK(aclrtCreateEvent(event));
        } else {
          FLAGOS_ACL_CHECK(aclrtCreateEventWithFlag(event, ACL_EVENT_SYNC));
        }
      }
      FLAGOS_ACL_CHECK(aclrtRecordEvent(*event, acl_stream(stream)));
    } catch (...) {
      set_device(previous);
      throw;
    }
    set_device(previous);
  }
  // A wait is queued on the stream, with the stream's device current (c10's
  // Future blocks the current stream of each of its devices, whichever is current).
  void block(void* event, const c10::Stream& stream) const override {
    if (event != nullptr) {
      stream_wait_event(stream, event);
    }
  }
  bool queryEvent(void* event) const override { return event == nullptr || event_complete(event); }
  void synchronizeEvent(void* event) const override {
    if (event != nullptr) {
      FLAGOS_ACL_CHECK(aclrtSynchronizeEvent(event));
    }
  }
  double elapsedTime(void* start, void* end, const c10::DeviceIndex /*device*/) const override {
    float ms = 0;
    FLAGOS_ACL_CHECK(aclrtEventElapsedTime(&ms, start, end));
    return static_cast<double>(ms);
  }
  void destroyEvent(void* event, const c10::DeviceIndex /*device*/) const noexcept override {
    if (event != nullptr) {
      aclrtDestroyEvent(event);
    }
  }

  // Tensor storages used on another stream than their own (autograd,
  // Tensor.record_stream): the allocator holds them back when freed.
  void recordDataPtrOnStream(const c10::DataPtr& data, const c10::Stream& stream) const override {
    record_stream(data, stream);
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, FlagosGuardImpl);

}  // namespace
}  // namespace flagos
