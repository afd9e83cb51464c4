// gelu and gelu_backward with both `approximate` modes ('none', 'tanh'):
// aclnnGeluV2 takes the mode as an integer, aclnnGeluBackwardV2 as a string.
// Handwritten because the generator maps no string arguments. Both are
// structured in ATen: this file defines their bodies, the generator writes
// and registers their wrappers.
#include <ATen/core/Tensor.h>
#include <c10/util/string_view.h>

#include <cstdint>

#include "generated/impls.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnGeluBackwardV2.h"
#include "flagos/aclnn/aclnnGeluV2.h"

// ---- the bodies of the generated wrappers ----------------------------------
// ATen's meta functions (structured_gelu, structured_gelu_backward) have
// checked the operands and sized the outputs (out= and in-place checked);
// ATen checks `approximate` in its own kernels, so the bodies check it.

namespace flagos::impl {
namespace {

int64_t gelu_mode(c10::string_view approximate) {
  TORCH_CHECK(approximate == "none" || approximate == "tanh", "approximate argument must be either none or tanh.");
  return approximate == "tanh" ? 1 : 0;
}

}  // namespace

void gelu(const LaunchDevice& device, const at::Tensor& self, c10::string_view approximate, const at::Tensor& out) {
  const int64_t mode = gelu_mode(approximate);
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnGeluV2, self, mode, out);
  }
}

void gelu_backward(const LaunchDevice& device, const at::Tensor& grad_output, const at::Tensor& self,
                   c10::string_view approximate, const at::Tensor& grad_input) {
  gelu_mode(approximate);
  if (grad_input.numel() > 0) {
    // A CPU 0-dim operand (a binary TensorIterator takes one) is copied to the device.
    FLAGOS_GUARDED_LAUNCH(device, aclnnGeluBackwardV2, on_launch_device(grad_output, device),
                          on_launch_device(self, device), approximate, grad_input);
  }
}

}  // namespace flagos::impl
