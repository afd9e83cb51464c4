// Upsampling, forward and backward: nearest, nearest-exact, bilinear (2-d)
// and trilinear (3-d), on CANN's ops-cv operators.
//
//   upsample_nearest2d            aclnnUpsampleNearest2d (no scale), aclnnUpsampleNearest2dV2 (scales)
//   _upsample_nearest_exact2d     aclnnUpsampleNearestExact2d
//   upsample_bilinear2d           aclnnUpsampleBilinear2d
//   upsample_nearest3d            aclnnUpsampleNearest3d
//   _upsample_nearest_exact3d     aclnnUpsampleNearestExact3d
//   upsample_trilinear3d          aclnnUpsampleTrilinear3d
//   and each one's _backward      aclnnUpsample...Backward (bilinear: aclnnUpsampleBilinear2dBackwardV2,
//                                 which uses the scales as ATen does)
//
// F.interpolate reaches these through the CompositeImplicit `.vec`
// overloads. A scale is ATen's scales_h (output / input); an absent one is
// passed as 0, which CANN reads as "from the sizes", as ATen does.
//
// Device policy: first-tensor (self, grad_output). Empty results return
// without a launch (most of these operators reject empty tensors).
#include <ATen/core/Tensor.h>
#include <c10/core/SymIntArrayRef.h>
#include <torch/library.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "aten/dtype_fallback.h"
#include "handwritten/support.h"
#include "runtime/launch.h"
#include "generated/aclnn/aclnnUpsampleBilinear2d.h"
#include "generated/aclnn/aclnnUpsampleBilinear2dBackwardV2.h"
#include "generated/aclnn/aclnnUpsampleNearest2d.h"
#include "generated/aclnn/aclnnUpsampleNearest2dBackward.h"
#include "generated/aclnn/aclnnUpsampleNearest2dV2.h"
#include "generated/aclnn/aclnnUpsampleNearest3d.h"
#include "generated/aclnn/aclnnUpsampleNearest3dBackward.h"
#include "generated/aclnn/aclnnUpsampleNearestExact2d.h"
#include "generated/aclnn/aclnnUpsampleNearestExact2dBackward.h"
#include "generated/aclnn/aclnnUpsampleNearestExact3d.h"
#include "generated/aclnn/aclnnUpsampleNearestExact3dBackward.h"
#include "generated/aclnn/aclnnUpsampleTrilinear3d.h"
#include "generated/aclnn/aclnnUpsampleTrilinear3dBackward.h"

namespace flagos {
namespace {

using Scale = std::optional<double>;

// ATen's absent scale, as CANN spells it.
double scale_arg(const Scale& scale) { return scale.value_or(0.0); }

// ATen's checks of an upsampling's sizes (upsample_2d/3d_common_check):
// the output's sizes [N, C, *output_size].
std::vector<int64_t> output_sizes(const char* op, at::IntArrayRef input_size, at::IntArrayRef output_size,
                                  size_t spatial) {
  TORCH_CHECK(output_size.size() == spatial, "It is expected output_size equals to ", spatial, ", but got size ",
              output_size.size());
  TORCH_CHECK(input_size.size() == spatial + 2, "It is expected input_size equals to ", spatial + 2,
              ", but got size ", input_size.size());
  bool positive = true;
  for (size_t d = 0; d < spatial; ++d) {
    positive = positive && input_size[d + 2] > 0 && output_size[d] > 0;
  }
  TORCH_CHECK(positive, "Input and output sizes should be greater than 0, but got input ",
              input_size.slice(2), " and output ", output_size, " (", op, ")");
  std::vector<int64_t> sizes{input_size[0], input_size[1]};
  sizes.insert(sizes.end(), output_size.begin(), output_size.end());
  return sizes;
}

// The forward's output, allocated on the launch device; empty when there is
// nothing to compute (a zero batch).
at::Tensor forward_output(const char* op, const LaunchDevice& device, const at::Tensor& self,
                          c10::SymIntArrayRef output_size, size_t spatial) {
  const std::vector<int64_t> sizes =
      output_sizes(op, self.sizes(), C10_AS_INTARRAYREF_SLOW(output_size), spatial);
  TORCH_CHECK(self.numel() != 0 || self.size(1) != 0,
              "Non-empty ", spatial + 2, "D data tensor expected but got a tensor with sizes ", self.sizes());
  return empty_on(device, sizes, self.scalar_type());
}

// The backward's gradient, allocated on the launch device, after ATen's
// check of grad_output's shape.
at::Tensor backward_output(const char* op, const LaunchDevice& device, const at::Tensor& grad_output,
                           c10::SymIntArrayRef output_size, c10::SymIntArrayRef input_size, size_t spatial) {
  const at::IntArrayRef input = C10_AS_INTARRAYREF_SLOW(input_size);
  const std::vector<int64_t> expected = output_sizes(op, input, C10_AS_INTARRAYREF_SLOW(output_size), spatial);
  TORCH_CHECK(grad_output.dim() == static_cast<int64_t>(spatial + 2), "Expected grad_output to be a tensor of dimension ",
              spatial + 2, " but got: dimension ", grad_output.dim());
  for (size_t i = 0; i < expected.size(); ++i) {
    TORCH_CHECK(grad_output.size(static_cast<int64_t>(i)) == expected[i],
                "Expected grad_output to have the same shape as output; output.size(", i, ") = ", expected[i],
                " but got grad_output.size(", i, ") = ", grad_output.size(static_cast<int64_t>(i)));
  }
  return empty_on(device, input, grad_output.scalar_type());
}

// ---- nearest ---------------------------------------------------------------------

at::Tensor upsample_nearest2d(const at::Tensor& self, c10::SymIntArrayRef output_size, Scale scales_h,
                              Scale scales_w) {
  const LaunchDevice device = launch_device_of(self);
  at::Tensor out = forward_output("upsample_nearest2d", device, self, output_size, 2);
  if (out.numel() == 0) {
    return out;
  }
  const at::IntArrayRef size = C10_AS_INTARRAYREF_SLOW(output_size);
  if (scales_h.has_value() || scales_w.has_value()) {
    // F.interpolate(scale_factor=...) passes its scales: the source index is
    // floor(dst / scale), which only the V2 operator takes (as float).
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleNearest2dV2, self, size, static_cast<float>(scale_arg(scales_h)),
                          static_cast<float>(scale_arg(scales_w)), out);
  } else {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleNearest2d, self, size, out);
  }
  return out;
}

at::Tensor upsample_nearest2d_backward(const at::Tensor& grad_output, c10::SymIntArrayRef output_size,
                                       c10::SymIntArrayRef input_size, Scale scales_h, Scale scales_w) {
  const LaunchDevice device = launch_device_of(grad_output);
  at::Tensor grad_input =
      backward_output("upsample_nearest2d_backward", device, grad_output, output_size, input_size, 2);
  if (grad_input.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleNearest2dBackward, grad_output, C10_AS_INTARRAYREF_SLOW(output_size),
                          C10_AS_INTARRAYREF_SLOW(input_size), scale_arg(scales_h), scale_arg(scales_w), grad_input);
  }
  return grad_input;
}

at::Tensor upsample_nearest3d(const at::Tensor& self, c10::SymIntArrayRef output_size, Scale scales_d, Scale scales_h,
                              Scale scales_w) {
  const LaunchDevice device = launch_device_of(self);
  at::Tensor out = forward_output("upsample_nearest3d", device, self, output_size, 3);
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleNearest3d, self, C10_AS_INTARRAYREF_SLOW(output_size),
                          scale_arg(scales_d), scale_arg(scales_h), scale_arg(scales_w), out);
  }
  return out;
}

at::Tensor upsample_nearest3d_backward(const at::Tensor& grad_output, c10::SymIntArrayRef output_size,
                                       c10::SymIntArrayRef input_size, Scale scales_d, Scale scales_h,
                                       Scale scales_w) {
  const LaunchDevice device = launch_device_of(grad_output);
  at::Tensor grad_input =
      backward_output("upsample_nearest3d_backward", device, grad_output, output_size, input_size, 3);
  if (grad_input.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleNearest3dBackward, grad_output, C10_AS_INTARRAYREF_SLOW(output_size),
                          C10_AS_INTARRAYREF_SLOW(input_size), scale_arg(scales_d), scale_arg(scales_h),
                          scale_arg(scales_w), grad_input);
  }
  return grad_input;
}

// ---- nearest-exact -----------------------------------------------------------------

at::Tensor upsample_nearest_exact2d(const at::Tensor& self, c10::SymIntArrayRef output_size, Scale scales_h,
                                    Scale scales_w) {
  const LaunchDevice device = launch_device_of(self);
  at::Tensor out = forward_output("_upsample_nearest_exact2d", device, self, output_size, 2);
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleNearestExact2d, self, C10_AS_INTARRAYREF_SLOW(output_size),
                          scale_arg(scales_h), scale_arg(scales_w), out);
  }
  return out;
}

at::Tensor upsample_nearest_exact2d_backward(const at::Tensor& grad_output, c10::SymIntArrayRef output_size,
                                             c10::SymIntArrayRef input_size, Scale scales_h, Scale scales_w) {
  const LaunchDevice device = launch_device_of(grad_output);
  at::Tensor grad_input =
      backward_output("_upsample_nearest_exact2d_backward", device, grad_output, output_size, input_size, 2);
  if (grad_input.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleNearestExact2dBackward, grad_output,
                          C10_AS_INTARRAYREF_SLOW(output_size), C10_AS_INTARRAYREF_SLOW(input_size),
                          scale_arg(scales_h), scale_arg(scales_w), grad_input);
  }
  return grad_input;
}

at::Tensor upsample_nearest_exact3d(const at::Tensor& self, c10::SymIntArrayRef output_size, Scale scales_d,
                                    Scale scales_h, Scale scales_w) {
  const LaunchDevice device = launch_device_of(self);
  at::Tensor out = forward_output("_upsample_nearest_exact3d", device, self, output_size, 3);
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleNearestExact3d, self, C10_AS_INTARRAYREF_SLOW(output_size),
                          scale_arg(scales_d), scale_arg(scales_h), scale_arg(scales_w), out);
  }
  return out;
}

at::Tensor upsample_nearest_exact3d_backward(const at::Tensor& grad_output, c10::SymIntArrayRef output_size,
                                             c10::SymIntArrayRef input_size, Scale scales_d, Scale scales_h,
                                             Scale scales_w) {
  const LaunchDevice device = launch_device_of(grad_output);
  at::Tensor grad_input =
      backward_output("_upsample_nearest_exact3d_backward", device, grad_output, output_size, input_size, 3);
  if (grad_input.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleNearestExact3dBackward, grad_output,
                          C10_AS_INTARRAYREF_SLOW(output_size), C10_AS_INTARRAYREF_SLOW(input_size),
                          scale_arg(scales_d), scale_arg(scales_h), scale_arg(scales_w), grad_input);
  }
  return grad_input;
}

// ---- bilinear, trilinear --------------------------------------------------------------

at::Tensor upsample_bilinear2d(const at::Tensor& self, c10::SymIntArrayRef output_size, bool align_corners,
                               Scale scales_h, Scale scales_w) {
  const LaunchDevice device = launch_device_of(self);
  at::Tensor out = forward_output("upsample_bilinear2d", device, self, output_size, 2);
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleBilinear2d, self, C10_AS_INTARRAYREF_SLOW(output_size), align_corners,
                          scale_arg(scales_h), scale_arg(scales_w), out);
  }
  return out;
}

at::Tensor upsample_bilinear2d_backward(const at::Tensor& grad_output, c10::SymIntArrayRef output_size,
                                        c10::SymIntArrayRef input_size, bool align_corners, Scale scales_h,
                                        Scale scales_w) {
  const LaunchDevice device = launch_device_of(grad_output);
  at::Tensor grad_input =
      backward_output("upsample_bilinear2d_backward", device, grad_output, output_size, input_size, 2);
  if (grad_input.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleBilinear2dBackwardV2, grad_output,
                          C10_AS_INTARRAYREF_SLOW(output_size), C10_AS_INTARRAYREF_SLOW(input_size), align_corners,
                          scale_arg(scales_h), scale_arg(scales_w), grad_input);
  }
  return grad_input;
}

at::Tensor upsample_trilinear3d(const at::Tensor& self, c10::SymIntArrayRef output_size, bool align_corners,
                                Scale scales_d, Scale scales_h, Scale scales_w) {
  const LaunchDevice device = launch_device_of(self);
  at::Tensor out = forward_output("upsample_trilinear3d", device, self, output_size, 3);
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleTrilinear3d, self, C10_AS_INTARRAYREF_SLOW(output_size),
                          align_corners, scale_arg(scales_d), scale_arg(scales_h), scale_arg(scales_w), out);
  }
  return out;
}

at::Tensor upsample_trilinear3d_backward(const at::Tensor& grad_output, c10::SymIntArrayRef output_size,
                                         c10::SymIntArrayRef input_size, bool align_corners, Scale scales_d,
                                         Scale scales_h, Scale scales_w) {
  const LaunchDevice device = launch_device_of(grad_output);
  at::Tensor grad_input =
      backward_output("upsample_trilinear3d_backward", device, grad_output, output_size, input_size, 3);
  if (grad_input.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleTrilinear3dBackward, grad_output,
                          C10_AS_INTARRAYREF_SLOW(output_size), C10_AS_INTARRAYREF_SLOW(input_size), align_corners,
                          scale_arg(scales_d), scale_arg(scales_h), scale_arg(scales_w), grad_input);
  }
  return grad_input;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("upsample_nearest2d", flagos::with_dtype_fallback<"upsample_nearest2d", &upsample_nearest2d>());
  m.impl("upsample_nearest2d_backward", flagos::with_dtype_fallback<"upsample_nearest2d_backward", &upsample_nearest2d_backward>());
  m.impl("upsample_nearest3d", flagos::with_dtype_fallback<"upsample_nearest3d", &upsample_nearest3d>());
  m.impl("upsample_nearest3d_backward", flagos::with_dtype_fallback<"upsample_nearest3d_backward", &upsample_nearest3d_backward>());
  m.impl("_upsample_nearest_exact2d", flagos::with_dtype_fallback<"_upsample_nearest_exact2d", &upsample_nearest_exact2d>());
  m.impl("_upsample_nearest_exact2d_backward", flagos::with_dtype_fallback<"_upsample_nearest_exact2d_backward", &upsample_nearest_exact2d_backward>());
  m.impl("_upsample_nearest_exact3d", flagos::with_dtype_fallback<"_upsample_nearest_exact3d", &upsample_nearest_exact3d>());
  m.impl("_upsample_nearest_exact3d_backward", flagos::with_dtype_fallback<"_upsample_nearest_exact3d_backward", &upsample_nearest_exact3d_backward>());
  m.impl("upsample_bilinear2d", flagos::with_dtype_fallback<"upsample_bilinear2d", &upsample_bilinear2d>());
  m.impl("upsample_bilinear2d_backward", flagos::with_dtype_fallback<"upsample_bilinear2d_backward", &upsample_bilinear2d_backward>());
  m.impl("upsample_trilinear3d", flagos::with_dtype_fallback<"upsample_trilinear3d", &upsample_trilinear3d>());
  m.impl("upsample_trilinear3d_backward", flagos::with_dtype_fallback<"upsample_trilinear3d_backward", &upsample_trilinear3d_backward>());
}

}  // namespace
}  // namespace flagos
