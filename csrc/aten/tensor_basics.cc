// What a flagos tensor needs to exist, be resized and read back: allocation
// on the requested device, resize, set_, _local_scalar_dense, record_stream
// and in-place data swaps (Module.to). None of these launches an ACLNN
// operator; yaml/aten.yaml registers them (and ATen's own view kernels).
#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>

#include <typeinfo>

#include "generated/aten_kernels.h"
#include "runtime/acl_check.h"
#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/stream.h"

namespace flagos {
namespace {

// The device the wrapper resolved: a bare "flagos" (no index) is the current
// device, as for CUDA.
c10::DeviceIndex requested_device(const LaunchDevice& device) {
  check_device_index(device.index);
  return device.index;
}

constexpr c10::DispatchKeySet kFlagosKeys{c10::DispatchKey::PrivateUse1};

// Grows the storage on its own device when the new shape needs more bytes.
void ensure_storage_bytes(const at::Tensor& self) {
  c10::TensorImpl* impl = self.unsafeGetTensorImpl();
  if (impl->numel() == 0) {
    return;
  }
  const size_t needed =
      at::detail::computeStorageNbytes(impl->sizes(), impl->strides(), impl->itemsize(),
                                       impl->storage_offset());
  if (needed > impl->unsafe_storage().nbytes()) {
    at::native::resize_bytes_nocuda(impl->unsafe_storage(), needed);
  }
}

}  // namespace

// Allocates on the requested device whatever device is current: the
// allocator is bound to that device, so the current device is never touched.
at::Tensor aten::empty_memory_format(const LaunchDevice& launch_device, at::IntArrayRef size,
                                     std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                                     std::optional<c10::Device> /*device*/, std::optional<bool> pin_memory,
                                     std::optional<at::MemoryFormat> memory_format) {
  TORCH_CHECK(!pin_memory.value_or(false), "flagos: pin_memory applies to CPU tensors only");
  TORCH_CHECK(layout.value_or(at::kStrided) == at::kStrided, "flagos: only strided tensors");
  return at::detail::empty_generic(size, device_allocator(requested_device(launch_device)), kFlagosKeys,
                                   c10::dtype_or_default(dtype), memory_format);
}

at::Tensor aten::empty_strided(const LaunchDevice& launch_device, at::IntArrayRef size, at::IntArrayRef stride,
                               std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                               std::optional<c10::Device> /*device*/, std::optional<bool> pin_memory) {
  TORCH_CHECK(!pin_memory.value_or(false), "flagos: pin_memory applies to CPU tensors only");
  TORCH_CHECK(layout.value_or(at::kStrided) == at::kStrided, "flagos: only strided tensors");
  return at::detail::empty_strided_generic(size, stride, device_allocator(requested_device(launch_device)),
                                           kFlagosKeys, c10::dtype_or_default(dtype));
}

const at::Tensor& aten::resize_(const at::Tensor& self, at::IntArrayRef size,
                                std::optional<at::MemoryFormat> memory_format) {
  at::native::resize_impl_cpu_(self.unsafeGetTensorImpl(), size, /*stride=*/std::nullopt,
                               /*resize_storage=*/false);
  ensure_storage_bytes(self);
  if (memory_format.has_value()) {
    TORCH_CHECK(*memory_format != at::MemoryFormat::Preserve,
                "flagos: unsupported memory format ", *memory_format);
    self.unsafeGetTensorImpl()->empty_tensor_restride(*memory_format);
  }
  return self;
}

at::Tensor& aten::set_storage(at::Tensor& self, c10::Storage source, int64_t storage_offset,
                              at::IntArrayRef size, at::IntArrayRef stride) {
  at::native::checkSetStorage(self, std::move(source), storage_offset, size, stride);
  self.unsafeGetTensorImpl()->set_storage_offset(storage_offset);
  const at::OptionalIntArrayRef stride_opt =
      stride.data() != nullptr ? at::OptionalIntArrayRef(stride) : std::nullopt;
  at::native::resize_impl_cpu_(self.unsafeGetTensorImpl(), size, stride_opt,
                               /*resize_storage=*/false);
  ensure_storage_bytes(self);
  return self;
}

at::Tensor& aten::set_whole_storage(at::Tensor& self, c10::Storage source) {
  const int64_t numel = static_cast<int64_t>(source.nbytes() / self.dtype().itemsize());
  return set_storage(self, std::move(source), 0, {numel}, {});
}

// Reads one element back to the host (.item()), after the work queued on
// the tensor's device's current stream (StreamWait::kHostRead): aclrtMemcpy
// reads at once. The copy needs no device switch (it is addressed by
// pointer); the synchronization takes any device's stream.
at::Scalar aten::local_scalar_dense(const LaunchDevice& launch_device, const at::Tensor& self) {
  at::Tensor host = at::empty({}, self.options().device(at::kCPU));
  const void* src = static_cast<const char*>(self.storage().data()) +
                    self.storage_offset() * static_cast<int64_t>(self.itemsize());
  if (stream_wait_enabled(StreamWait::kHostRead)) {
    synchronize_stream(current_stream(launch_device.index));
  }
  FLAGOS_ACL_CHECK(aclrtMemcpy(host.mutable_data_ptr(), host.nbytes(), src, host.nbytes(),
                               ACL_MEMCPY_DEVICE_TO_HOST));
  return host.item();
}

// Tensor.record_stream(s): the storage's block, when freed, waits for the
// work queued on `s` so far.
void aten::record_stream(at::Tensor& self, c10::Stream stream) {
  flagos::record_stream(self.storage().data_ptr(), stream);
}

// Whether `self` may take `from`'s data in place (`param.data = from`).
// Module.to() keeps each Parameter object, and so tied weights and the
// optimizer's references, only when this holds; otherwise it makes new
// Parameters and ties break silently. c10 answers yes for CPU and CUDA-like
// backends, not for PrivateUse1, and leaves the rest to the backend: a dense
// flagos tensor and a dense CPU or flagos tensor are both plain TensorImpls.
bool aten::has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  if (self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set())) {
    return true;
  }
  auto plain_dense = [](const at::Tensor& t) {
    const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
    return typeid(*impl) == typeid(c10::TensorImpl) && t.layout() == c10::kStrided &&
           (t.device().is_cpu() || t.device().is_privateuseone());
  };
  return plain_dense(self) && plain_dense(from);
}

}  // namespace flagos
