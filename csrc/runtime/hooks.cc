// PrivateUse1 hooks: what torch.accelerator and generators ask the backend.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/GeneratorForPrivateuseone.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/Storage.h>

#include <array>
#include <mutex>

#include "runtime/acl_check.h"
#include "runtime/allocator.h"
#include "runtime/device.h"

namespace flagos {
namespace {

struct FlagosHooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count() > 0; }
  bool hasPrimaryContext(c10::DeviceIndex device) const override {
    check_device_index(device);
    return true;
  }
  c10::DeviceIndex deviceCount() const override { return device_count(); }
  void setCurrentDevice(c10::DeviceIndex device) const override { set_device(device); }
  c10::DeviceIndex getCurrentDevice() const override { return current_device(); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex device) const override {
    return flagos::exchange_device(device);
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex device) const override {
    return flagos::exchange_device(device);
  }

  at::Device getDeviceFromPtr(void* data) const override {
    const auto device = device_of_pointer(data);
    TORCH_CHECK(device.has_value(), "flagos: ", data, " is not flagos device memory");
    return flagos_device(*device);
  }

  // One generator per device. Random numbers are drawn on the host with the
  // CPU engine (the simulator has no device RNG), seeded per device.
  const at::Generator& getDefaultGenerator(c10::DeviceIndex device) const override {
    static std::array<at::Generator, kMaxDevices> generators;
    static std::once_flag once;
    std::call_once(once, [] {
      for (c10::DeviceIndex d = 0; d < device_count(); ++d) {
        generators[d] = at::make_generator<at::CPUGeneratorImpl>(c10::default_rng_seed_val);
      }
    });
    const c10::DeviceIndex index = device < 0 ? current_device() : device;
    check_device_index(index);
    return generators[index];
  }

  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t new_bytes) const override {
    c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
    const c10::DeviceIndex device = impl->device().index();
    c10::DataPtr fresh = allocate_on(device, new_bytes);
    const size_t keep = std::min(new_bytes, impl->nbytes());
    if (keep > 0) {
      FLAGOS_ACL_CHECK(aclrtMemcpy(fresh.get(), new_bytes, impl->data(), keep,
                                   ACL_MEMCPY_DEVICE_TO_DEVICE));
    }
    impl->set_data_ptr_noswap(std::move(fresh));
    impl->set_nbytes(new_bytes);
  }
};

const bool registered = [] {
  static FlagosHooks hooks;
  at::RegisterPrivateUse1HooksInterface(&hooks);
  return true;
}();

}  // namespace
}  // namespace flagos
