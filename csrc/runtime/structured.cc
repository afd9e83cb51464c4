#include "runtime/structured.h"

#include <ATen/EmptyTensor.h>
#include <ATen/native/Resize.h>
#include <c10/core/DispatchKeySet.h>

#include "runtime/allocator.h"
#include "runtime/device.h"

namespace flagos::detail {

at::Tensor structured_output(const LaunchDevice& device, at::IntArrayRef sizes, at::IntArrayRef strides,
                             const at::TensorOptions& options) {
  const c10::DeviceIndex index = device.has_value() ? device.index : current_device();
  const c10::DispatchKeySet keys(c10::DispatchKey::PrivateUse1);
  const at::ScalarType dtype = c10::typeMetaToScalarType(options.dtype());
  if (strides.empty()) {
    return at::detail::empty_generic(sizes, device_allocator(index), keys, dtype, options.memory_format_opt());
  }
  return at::detail::empty_strided_generic(sizes, strides, device_allocator(index), keys, dtype);
}

void structured_resize_out(const at::Tensor& out, at::IntArrayRef sizes, at::IntArrayRef strides,
                           const at::TensorOptions& options) {
  TORCH_CHECK(options.dtype() == out.dtype(), "Expected out tensor to have dtype ", options.dtype(), ", but got ",
              out.dtype(), " instead");
  TORCH_CHECK(options.device() == out.device(), "Expected out tensor to have device ", options.device(),
              ", but got ", out.device(), " instead");
  if (!at::native::resize_output(out, sizes)) {
    return;  // the size was right: the out tensor keeps its own strides
  }
  if (!strides.empty()) {
    out.as_strided_(sizes, strides);
  } else if (options.memory_format_opt().has_value()) {
    out.unsafeGetTensorImpl()->empty_tensor_restride(*options.memory_format_opt());
  }
}

void structured_check_inplace(const at::Tensor& self, at::IntArrayRef sizes, const at::TensorOptions& options) {
  TORCH_CHECK(options.dtype() == self.dtype(), "Bad in-place call: input tensor dtype ", self.dtype(),
              " and output tensor dtype ", options.dtype(), " should match");
  TORCH_CHECK(options.device() == self.device(), "Bad in-place call: input tensor device ", self.device(),
              " and output tensor device ", options.device(), " should match");
  TORCH_CHECK(sizes == self.sizes(), "Bad in-place call: input tensor size ", self.sizes(),
              " and output tensor size ", sizes, " should match");
}

}  // namespace flagos::detail
