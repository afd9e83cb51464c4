// nonzero and nonzero.out (aclnnNonzero): the indices of the nonzero
// elements of self, one row per element in row-major order, [count, dim].
//
// The result's size depends on the data. CANN's aclnnNonzero writes into an
// `out` with room for every element ([numel, dim]) and reports the real row
// count afterwards, which this runtime does not read back; so the kernel
// counts the nonzero elements on the device first (aclnnNeScalar against 0
// for a non-bool self, then aclnnReduceSum), reads the count back, launches
// into a [numel, dim] buffer and shrinks the result to the count. Its
// executor cannot be made repeatable and is not cached.
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>

#include "generated/impls.h"
#include "handwritten/support.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnNeScalar.h"
#include "flagos/aclnn/aclnnNonzero.h"

namespace flagos {
namespace {

int64_t count_nonzero_on(const LaunchDevice& device, const at::Tensor& self) {
  if (self.numel() == 0) {
    return 0;
  }
  if (self.scalar_type() == at::kBool) {
    return hw::count_true(self, device);
  }
  const at::Tensor mask = empty_on(device, self.sizes(), at::kBool);
  FLAGOS_GUARDED_LAUNCH(device, aclnnNeScalar, self, at::Scalar(0), mask);
  return hw::count_true(mask, device);
}

at::Tensor nonzero_on(const LaunchDevice& device, const at::Tensor& self) {
  const int64_t count = count_nonzero_on(device, self);
  at::Tensor out = empty_on(device, {self.numel(), self.dim()}, at::kLong);
  if (count > 0 && self.dim() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnNonzero, self, out);
  }
  out.resize_({count, self.dim()});  // keeps the storage: its front holds the rows
  return out;
}

}  // namespace
}  // namespace flagos

namespace flagos::impl {

at::Tensor nonzero(const LaunchDevice& device, const at::Tensor& self) { return nonzero_on(device, self); }

at::Tensor& nonzero(const LaunchDevice& device, const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kLong, "nonzero: Expected out tensor to have scalar type Long but got scalar type",
              out.scalar_type());
  const at::Tensor indices = nonzero_on(device, self);
  at::native::resize_output(out, indices.sizes());
  if (indices.numel() > 0) {
    out.copy_(indices);
  }
  return out;
}

}  // namespace flagos::impl
