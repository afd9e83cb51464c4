// torch.equal (aclnnEqual): true when self and other have the same sizes and
// elements (after type promotion, as ATen's CPU kernel compares). The answer
// is a Python bool, so the kernel reads the operator's one-element result
// back, which waits for the device. Beam search and assisted decoding call
// it every step.
#include <ATen/core/Tensor.h>

#include "generated/impls.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnEqual.h"

namespace flagos::impl {

bool equal(const LaunchDevice& device, const at::Tensor& self, const at::Tensor& other) {
  const at::Tensor result = empty_on(device, {1}, at::kBool);
  // aclnnEqual answers operands of two shapes (false) itself; a CPU 0-dim
  // operand is copied to the launch device.
  FLAGOS_GUARDED_LAUNCH(device, aclnnEqual, on_launch_device(self, device), on_launch_device(other, device), result);
  return result.item<bool>();
}

}  // namespace flagos::impl
