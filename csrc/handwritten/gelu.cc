// gelu and gelu_backward with both `approximate` modes ('none', 'tanh'):
// aclnnGeluV2 takes the mode as an integer, aclnnGeluBackwardV2 as a string.
// Handwritten because the generator maps no string arguments.
//
// Device policy: first-tensor (self; grad_output for the backward).
#include <ATen/ExpandUtils.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/result_type.h>
#include <torch/library.h>

#include <string_view>

#include "aten/dtype_fallback.h"
#include "handwritten/support.h"
#include "runtime/launch.h"
#include "generated/aclnn/aclnnGeluBackwardV2.h"
#include "generated/aclnn/aclnnGeluV2.h"

namespace flagos {
namespace {

int64_t gelu_mode(std::string_view approximate) {
  TORCH_CHECK(approximate == "none" || approximate == "tanh",
              "approximate argument must be either none or tanh.");
  return approximate == "tanh" ? 1 : 0;
}

at::Tensor& gelu_out(const at::Tensor& self, c10::string_view approximate, at::Tensor& out) {
  check_same_device("gelu.out", {{"self", self}, {"out", out}});
  const int64_t mode = gelu_mode(approximate);
  const LaunchDevice device = launch_device_of(self, out);
  at::native::resize_output(out, self.sizes());
  if (self.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnGeluV2, on_launch_device(self, device), mode, out);
  }
  return out;
}

at::Tensor gelu(const at::Tensor& self, c10::string_view approximate) {
  at::Tensor out = empty_on(launch_device_of(self), self.sizes(), self.scalar_type());
  return gelu_out(self, approximate, out);
}

at::Tensor& gelu_(at::Tensor& self, c10::string_view approximate) {
  const int64_t mode = gelu_mode(approximate);
  if (self.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(self, aclnnGeluV2, self, mode, self);
  }
  return self;
}

at::Tensor& gelu_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                              c10::string_view approximate, at::Tensor& grad_input) {
  check_same_device("gelu_backward.grad_input",
                    {{"grad_output", grad_output}, {"self", self}, {"grad_input", grad_input}});
  gelu_mode(approximate);
  const LaunchDevice device = launch_device_of(grad_output, self, grad_input);
  at::native::resize_output(grad_input, at::infer_size(grad_output.sizes(), self.sizes()));
  if (grad_input.numel() > 0) {
    // A CPU 0-dim operand (allowed by the device check) is copied to the device.
    FLAGOS_GUARDED_LAUNCH(device, aclnnGeluBackwardV2, on_launch_device(grad_output, device),
                          on_launch_device(self, device), approximate, grad_input);
  }
  return grad_input;
}

at::Tensor gelu_backward(const at::Tensor& grad_output, const at::Tensor& self,
                         c10::string_view approximate) {
  at::Tensor grad_input = empty_on(launch_device_of(grad_output, self),
                                  at::infer_size(grad_output.sizes(), self.sizes()),
                                  at::result_type(grad_output, self));
  return gelu_backward_out(grad_output, self, approximate, grad_input);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("gelu", flagos::with_dtype_fallback<"gelu", &gelu>());
  m.impl("gelu_", flagos::with_dtype_fallback<"gelu_", &gelu_>());
  m.impl("gelu.out", flagos::with_dtype_fallback<"gelu.out", &gelu_out>());
  m.impl("gelu_backward", flagos::with_dtype_fallback<"gelu_backward", &gelu_backward>());
  m.impl("gelu_backward.grad_input", flagos::with_dtype_fallback<"gelu_backward.grad_input", &gelu_backward_out>());
}

}  // namespace
}  // namespace flagos
