#include "runtime/launch_device.h"

#include <ATen/EmptyTensor.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/op_registration/adaption.h>
#include <c10/util/Exception.h>

#include "runtime/allocator.h"

namespace flagos {

// ---- guard ---------------------------------------------------------------

std::atomic<bool> detail::guards_enabled{true};

void set_guards_enabled(bool enabled) { detail::guards_enabled.store(enabled); }

std::atomic<bool> detail::composite_guards_enabled{true};

void set_composite_guards_enabled(bool enabled) { detail::composite_guards_enabled.store(enabled); }

void LaunchGuard::restore() noexcept {
  try {
    set_device(previous_);
  } catch (const std::exception& e) {
    TORCH_WARN("flagos: restoring flagos:", static_cast<int>(previous_),
               " after a launch failed: ", e.what());
  }
}

void CompositeGuard::restore() noexcept {
  try {
    set_device(previous_);
  } catch (const std::exception& e) {
    TORCH_WARN("flagos: restoring flagos:", static_cast<int>(previous_), " after a composite op failed: ", e.what());
  }
}

// ---- checks and outputs --------------------------------------------------

void check_same_device(const char* op, std::initializer_list<DeviceCheckArg> args) {
  std::optional<c10::Device> common;
  for (const DeviceCheckArg& arg : args) {
    for (const at::Tensor& tensor : arg.tensors) {
      if (!is_cpu_scalar(tensor)) {
        c10::impl::check_and_update_common_device(common, tensor, op, arg.name);
      }
    }
  }
}

void check_written(const at::Tensor& written, std::initializer_list<DeviceCheckArg> inputs) {
  at::assert_no_internal_overlap(written);
  for (const DeviceCheckArg& input : inputs) {
    for (const at::Tensor& tensor : input.tensors) {
      if (tensor.defined() && !tensor.is_same(written)) {
        at::assert_no_partial_overlap(written, tensor);
      }
    }
  }
}

at::Tensor empty_on(const LaunchDevice& device, at::IntArrayRef sizes, at::ScalarType dtype) {
  const c10::DeviceIndex index = device.has_value() ? device.index : current_device();
  return at::detail::empty_generic(sizes, device_allocator(index),
                                   c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), dtype,
                                   std::nullopt);
}

}  // namespace flagos
