// torch.equal (aclnnEqual): true when self and other have the same sizes and
// elements (after type promotion, as ATen's CPU kernel compares). The answer
// is a Python bool, so the kernel reads the operator's one-element result
// back, which waits for the device. Beam search and assisted decoding call
// it every step.
//
// Device policy: first-tensor (self); other on the same device, as ATen's
// kernels require of torch.equal (a CPU 0-dim operand too).
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include "aten/dtype_fallback.h"
#include "runtime/launch.h"
#include "generated/aclnn/aclnnEqual.h"

namespace flagos {
namespace {

bool tensors_equal(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.device() == other.device(), "Cannot compare two tensors on different devices. Got: ",
              self.device(), " and ", other.device());
  if (!self.sizes().equals(other.sizes())) {
    return false;  // no launch, no wait
  }
  const LaunchDevice device = launch_device_of(self, other);
  const LaunchGuard device_current(device);  // before any allocation
  const at::Tensor result = empty_on(device, {1}, at::kBool);
  FLAGOS_GUARDED_LAUNCH(device, aclnnEqual, self, other, result);
  return result.item<bool>();
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("equal", flagos::with_dtype_fallback<"equal", &tensors_equal>());
}

}  // namespace
}  // namespace flagos
