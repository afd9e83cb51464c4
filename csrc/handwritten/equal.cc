// torch.equal (aclnnEqual): true when self and other have the same sizes and
// elements (after type promotion, as ATen's CPU kernel compares). The answer
// is a Python bool, so the kernel reads the operator's one-element result
// back, which waits for the device. Beam search and assisted decoding call
// it every step.
//
// Device policy: first-tensor (self); other on the same device, or a CPU
// 0-dim tensor (copied to the launch device), as for every kernel.
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include "aten/dtype_fallback.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnEqual.h"

namespace flagos {
namespace {

bool tensors_equal(const at::Tensor& self, const at::Tensor& other) {
  check_same_device("equal", {{"self", self}, {"other", other}});
  const LaunchDevice device = launch_device_of(self, other);
  const LaunchGuard device_current(device);  // before any allocation
  const at::Tensor result = empty_on(device, {1}, at::kBool);
  // aclnnEqual answers operands of two shapes (false) itself.
  FLAGOS_GUARDED_LAUNCH(device, aclnnEqual, on_launch_device(self, device), on_launch_device(other, device), result);
  return result.item<bool>();
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("equal", flagos::with_dtype_fallback<"equal", &tensors_equal>());
}

}  // namespace
}  // namespace flagos
