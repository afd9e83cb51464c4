// PrivateUse1 hooks: what torch.accelerator and generators ask the backend.
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/ops/empty.h>
#include <c10/core/Storage.h>
#include <c10/util/Exception.h>

#include <array>
#include <cstring>
#include <mutex>

#include "runtime/acl_check.h"
#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/generator.h"
#include "runtime/host_allocator.h"
#include "runtime/stream.h"

namespace flagos {

// ---- the per-device generator --------------------------------------------

FlagosGeneratorImpl::FlagosGeneratorImpl(c10::DeviceIndex device, uint64_t seed)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, device),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      seed_(seed) {}

uint64_t FlagosGeneratorImpl::seed() {
  const uint64_t random = c10::detail::getNonDeterministicRandom();
  set_current_seed(random);
  return random;
}

void FlagosGeneratorImpl::set_state(const c10::TensorImpl& new_state) {
  TORCH_CHECK(new_state.dtype() == caffe2::TypeMeta::Make<uint8_t>() && new_state.numel() == 16,
              "flagos: a generator state is a uint8 tensor of 16 bytes (seed, offset)");
  uint64_t values[2];
  std::memcpy(values, new_state.data(), sizeof(values));
  seed_ = values[0];
  offset_ = values[1];
}

c10::intrusive_ptr<c10::TensorImpl> FlagosGeneratorImpl::get_state() const {
  at::Tensor state = at::empty({16}, at::TensorOptions().dtype(at::kByte).device(at::kCPU));
  const uint64_t values[2] = {seed_, offset_};
  std::memcpy(state.mutable_data_ptr(), values, sizeof(values));
  return state.getIntrusivePtr();
}

FlagosGeneratorImpl* FlagosGeneratorImpl::clone_impl() const {
  auto* copy = new FlagosGeneratorImpl(device().index(), seed_);
  copy->offset_ = offset_;
  return copy;
}

const at::Generator& default_generator(c10::DeviceIndex device) {
  static std::array<at::Generator, kMaxDevices> generators;
  static std::once_flag once;
  std::call_once(once, [] {
    for (c10::DeviceIndex d = 0; d < device_count(); ++d) {
      generators[d] = at::make_generator<FlagosGeneratorImpl>(d, c10::default_rng_seed_val);
    }
  });
  const c10::DeviceIndex index = device < 0 ? current_device() : device;
  check_device_index(index);
  return generators[index];
}

namespace {

// torch.Generator(device="flagos:1"): a fresh generator of that device.
at::Generator make_flagos_generator(c10::DeviceIndex device) {
  const c10::DeviceIndex index = device < 0 ? current_device() : device;
  check_device_index(index);
  return at::make_generator<FlagosGeneratorImpl>(index, c10::default_rng_seed_val);
}

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

  // Pinned host memory (tensor.pin_memory(), pin_memory=True, is_pinned()).
  at::Allocator* getPinnedMemoryAllocator() const override { return pinned_allocator(); }
  bool isPinnedPtr(const void* data) const override { return is_pinned(data); }

  at::Device getDeviceFromPtr(void* data) const override {
    const auto device = device_of_pointer(data);
    TORCH_CHECK(device.has_value(), "flagos: ", data, " is not flagos device memory");
    return flagos_device(*device);
  }

  // One (seed, offset) generator per device (runtime/generator.h): random
  // kernels pass both to the ACLNN operator of their tensor's device.
  const at::Generator& getDefaultGenerator(c10::DeviceIndex device) const override {
    return default_generator(device);
  }

  at::Generator getNewGenerator(c10::DeviceIndex device) const override {
    return make_flagos_generator(device);
  }

  // The copy of the old contents is queued on the device's current stream:
  // after the work queued there on the old storage, before the work queued
  // later on the new one; the old block goes back to that stream's pool.
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t new_bytes) const override {
    c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
    const c10::DeviceIndex device = impl->device().index();
    c10::DataPtr fresh = allocate_on(device, new_bytes);
    const size_t keep = std::min(new_bytes, impl->nbytes());
    if (keep > 0) {
      const c10::DeviceIndex previous = flagos::exchange_device(device);
      const aclError status = aclrtMemcpyAsync(fresh.get(), new_bytes, impl->data(), keep,
                                               ACL_MEMCPY_DEVICE_TO_DEVICE, acl_stream(current_stream(device)));
      set_device(previous);
      TORCH_CHECK(status == ACL_SUCCESS, "flagos: resizing a storage on flagos:", static_cast<int>(device),
                  " failed with ACL error ", status, ": ", recent_error_message());
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
