// mse_loss and its backward on aclnnMseLoss / aclnnMseLossBackward
// (mse_loss, mse_loss.out, mse_loss_backward, mse_loss_backward.grad_input):
// the loss of diffusion training (F.mse_loss on the predicted noise).
//
// A CPU 0-dim operand (a Python number) is copied to the launch device, as
// TensorIterator allows on CUDA.
//
// mse_loss is structured in ATen: its meta function checks the operands and
// sizes the loss (this file defines its body, the generator writes and
// registers its wrappers). The backward's gradient has the broadcast shape
// and promoted dtype of its operands, as in ATen. CANN takes the operands
// in the output's dtype only, so a mixed-dtype call runs in the promoted
// dtype (what ATen computes in).
#include <ATen/ExpandUtils.h>
#include <ATen/core/Reduction.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/promote_types.h>
#include <c10/core/ScalarType.h>

#include <vector>

#include "generated/impls.h"
#include "handwritten/support.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnMseLoss.h"
#include "flagos/aclnn/aclnnMseLossBackward.h"

namespace flagos {
namespace {

void check_reduction(int64_t reduction) {
  TORCH_CHECK(reduction >= at::Reduction::None && reduction <= at::Reduction::Sum, "mse_loss: reduction ", reduction,
              " is not one of 0 (none), 1 (mean), 2 (sum)");
}

// An operand as CANN takes it: on the launch device (a CPU 0-dim tensor is
// copied there) and in the launch's one dtype.
at::Tensor operand(const at::Tensor& t, const LaunchDevice& device, at::ScalarType dtype) {
  const at::Tensor placed = on_launch_device(t, device);
  return placed.scalar_type() == dtype ? placed : placed.to(dtype);
}

void launch_mse_loss_backward(const LaunchDevice& device, const at::Tensor& grad_output, const at::Tensor& self,
                              const at::Tensor& target, int64_t reduction, at::Tensor& grad_input) {
  const at::ScalarType dtype = grad_input.scalar_type();
  FLAGOS_GUARDED_LAUNCH(device, aclnnMseLossBackward, operand(grad_output, device, dtype), operand(self, device, dtype),
                        operand(target, device, dtype), reduction, grad_input);
}

std::vector<int64_t> grad_sizes(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target) {
  const auto sizes = at::infer_size(at::infer_size(grad_output.sizes(), self.sizes()), target.sizes());
  return {sizes.begin(), sizes.end()};
}

at::ScalarType grad_dtype(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target) {
  return at::promote_types(at::promote_types(grad_output.scalar_type(), self.scalar_type()), target.scalar_type());
}

}  // namespace
}  // namespace flagos

namespace flagos::impl {

at::Tensor mse_loss_backward(const LaunchDevice& device, const at::Tensor& grad_output, const at::Tensor& self,
                             const at::Tensor& target, int64_t reduction) {
  check_reduction(reduction);
  at::Tensor grad_input = empty_on(device, grad_sizes(grad_output, self, target),
                                   grad_dtype(grad_output, self, target));
  launch_mse_loss_backward(device, grad_output, self, target, reduction, grad_input);
  return grad_input;
}

at::Tensor& mse_loss_backward(const LaunchDevice& device, const at::Tensor& grad_output, const at::Tensor& self,
                              const at::Tensor& target, int64_t reduction, at::Tensor& grad_input) {
  check_reduction(reduction);
  hw::check_out_dtype(grad_input, grad_dtype(grad_output, self, target));
  at::native::resize_output(grad_input, grad_sizes(grad_output, self, target));
  launch_mse_loss_backward(device, grad_output, self, target, reduction, grad_input);
  return grad_input;
}

// ---- mse_loss --------------------------------------------------------------------
// ATen's meta function (structured_mse_loss) has checked self, target (they
// broadcast) and the reduction, and sized the output in their promoted
// dtype: their broadcast shape for reduction none, 0-dim for mean and sum.

void mse_loss(const LaunchDevice& device, const at::Tensor& self, const at::Tensor& target, int64_t reduction,
              const at::Tensor& out) {
  const at::ScalarType dtype = out.scalar_type();
  FLAGOS_GUARDED_LAUNCH(device, aclnnMseLoss, operand(self, device, dtype), operand(target, device, dtype), reduction,
                        out);
}

}  // namespace flagos::impl
