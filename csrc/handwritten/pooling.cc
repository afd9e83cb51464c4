// The backward of 2-d max pooling: max_pool2d_with_indices_backward (and
// .grad_input), on aclnnMaxPool2dWithIndicesBackward. The forward and
// average pooling are registry entries (yaml/ops/pooling.yaml).
//
// Indices: ATen's are int64, the flat index h * W + w of the maximum in its
// input plane. CANN's backward on Atlas A2/A3 takes INT32 indices and FLOAT
// gradients only: the body narrows the indices (they are < H * W, checked
// to fit) and runs half/bfloat16 gradients in float, a launch on converted
// copies and a rounding into grad_input that no registry entry describes.
//
// Limits, raised as errors naming the op (never a wrong result): dilation
// other than 1 (A2/A3's operators refuse it). Double tensors (no CANN dtype)
// are rejected at phase 1 and run on the CPU (aten/dtype_fallback.h).
//
// Structured in ATen: ATen's meta function checks the geometry, the
// gradient's and indices' sizes and sizes grad_input; the generator writes
// and registers the wrapper.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "generated/impls.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnMaxPool2dWithIndicesBackward.h"

namespace flagos::impl {

void max_pool2d_with_indices_backward(const LaunchDevice& device, const at::Tensor& grad_output,
                                      const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                      at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
                                      const at::Tensor& indices, const at::Tensor& grad_input) {
  constexpr const char* op = "max_pool2d_with_indices_backward";
  // CANN's geometry: [h, w] pairs (ATen also takes one int for both; an empty stride is the kernel's).
  const std::vector<int64_t> kernel{kernel_size[0], kernel_size.back()};
  const std::vector<int64_t> steps = stride.empty() ? kernel : std::vector<int64_t>{stride[0], stride.back()};
  const std::vector<int64_t> pads{padding[0], padding.back()};
  const std::vector<int64_t> dilations{dilation[0], dilation.back()};
  TORCH_CHECK(dilations[0] == 1 && dilations[1] == 1, op, " on flagos: dilation (", dilations[0], ", ", dilations[1],
              ") is not supported: CANN's 2-d max pooling takes dilation 1 only on Atlas A2/A3");
  TORCH_CHECK(indices.scalar_type() == at::kLong, op, ": expected int64 indices, got ", indices.scalar_type());
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type(), op, ": grad_output is ", grad_output.scalar_type(),
              ", self is ", self.scalar_type());
  if (grad_input.numel() == 0) {
    return;
  }
  if (grad_output.numel() == 0) {
    grad_input.zero_();
    return;
  }
  // A2/A3: INT32 indices (an index is < H * W) and FLOAT gradients.
  TORCH_CHECK(self.size(-1) * self.size(-2) <= std::numeric_limits<int32_t>::max(), op,
              " on flagos: an input plane of more than 2^31 - 1 elements does not fit CANN's int32 indices");
  const at::Tensor narrow_indices = indices.to(at::kInt);
  const bool widen = self.scalar_type() != at::kFloat;
  const at::Tensor g = widen ? grad_output.to(at::kFloat) : grad_output;
  const at::Tensor x = widen ? self.to(at::kFloat) : self;
  const at::Tensor result = widen ? empty_on(device, self.sizes(), at::kFloat) : grad_input;
  FLAGOS_GUARDED_LAUNCH(device, aclnnMaxPool2dWithIndicesBackward, g, x, narrow_indices, kernel, steps, pads,
                        dilations, ceil_mode, result);
  if (widen) {
    grad_input.copy_(result);
  }
}

}  // namespace flagos::impl
