// Upsampling, forward and backward: nearest, nearest-exact, bilinear and
// bicubic (2-d) and trilinear (3-d), on CANN's ops-cv operators.
//
//   upsample_nearest2d            aclnnUpsampleNearest2d (no scale), aclnnUpsampleNearest2dV2 (scales)
//   _upsample_nearest_exact2d     aclnnUpsampleNearestExact2d
//   upsample_bilinear2d           aclnnUpsampleBilinear2d
//   upsample_bicubic2d            aclnnUpsampleBicubic2d
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
// All of them are structured in ATen: this file defines their bodies (ATen's
// meta functions check the sizes and size the outputs), the generator writes
// and registers their wrappers.
//
// Device policy: first-tensor (self, grad_output). Empty results return
// without a launch (most of these operators reject empty tensors).
#include <ATen/core/Tensor.h>
#include <c10/util/ArrayRef.h>

#include <optional>

#include "generated/impls.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnUpsampleBicubic2d.h"
#include "flagos/aclnn/aclnnUpsampleBicubic2dBackward.h"
#include "flagos/aclnn/aclnnUpsampleBilinear2d.h"
#include "flagos/aclnn/aclnnUpsampleBilinear2dBackwardV2.h"
#include "flagos/aclnn/aclnnUpsampleNearest2d.h"
#include "flagos/aclnn/aclnnUpsampleNearest2dBackward.h"
#include "flagos/aclnn/aclnnUpsampleNearest2dV2.h"
#include "flagos/aclnn/aclnnUpsampleNearest3d.h"
#include "flagos/aclnn/aclnnUpsampleNearest3dBackward.h"
#include "flagos/aclnn/aclnnUpsampleNearestExact2d.h"
#include "flagos/aclnn/aclnnUpsampleNearestExact2dBackward.h"
#include "flagos/aclnn/aclnnUpsampleNearestExact3d.h"
#include "flagos/aclnn/aclnnUpsampleNearestExact3dBackward.h"
#include "flagos/aclnn/aclnnUpsampleTrilinear3d.h"
#include "flagos/aclnn/aclnnUpsampleTrilinear3dBackward.h"

namespace flagos {
namespace {

using Scale = std::optional<double>;

// ATen's absent scale, as CANN spells it.
double scale_arg(const Scale& scale) { return scale.value_or(0.0); }

}  // namespace
}  // namespace flagos

// ---- the bodies of the generated wrappers ------------------------------------------
// ATen's meta functions (upsample_nearest2d, ... and their backwards) have
// checked the sizes (output_size and input_size of the op's rank, positive;
// a non-empty input; grad_output of the output's shape) and sized the
// output in the input's memory format. Nothing is launched for an empty
// result (a zero batch): most of these operators reject empty tensors.

namespace flagos::impl {

// ---- nearest ---------------------------------------------------------------------

void upsample_nearest2d(const LaunchDevice& device, const at::Tensor& self, at::IntArrayRef output_size,
                        Scale scales_h, Scale scales_w, const at::Tensor& out) {
  if (out.numel() == 0) {
    return;
  }
  if (scales_h.has_value() || scales_w.has_value()) {
    // F.interpolate(scale_factor=...) passes its scales: the source index is
    // floor(dst / scale), which only the V2 operator takes (as float).
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleNearest2dV2, self, output_size, static_cast<float>(scale_arg(scales_h)),
                          static_cast<float>(scale_arg(scales_w)), out);
  } else {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleNearest2d, self, output_size, out);
  }
}

void upsample_nearest2d_backward(const LaunchDevice& device, const at::Tensor& grad_output,
                                 at::IntArrayRef output_size, at::IntArrayRef input_size, Scale scales_h,
                                 Scale scales_w, const at::Tensor& grad_input) {
  if (grad_input.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleNearest2dBackward, grad_output, output_size, input_size,
                          scale_arg(scales_h), scale_arg(scales_w), grad_input);
  }
}

void upsample_nearest3d(const LaunchDevice& device, const at::Tensor& self, at::IntArrayRef output_size,
                        Scale scales_d, Scale scales_h, Scale scales_w, const at::Tensor& out) {
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleNearest3d, self, output_size, scale_arg(scales_d), scale_arg(scales_h),
                          scale_arg(scales_w), out);
  }
}

void upsample_nearest3d_backward(const LaunchDevice& device, const at::Tensor& grad_output,
                                 at::IntArrayRef output_size, at::IntArrayRef input_size, Scale scales_d,
                                 Scale scales_h, Scale scales_w, const at::Tensor& grad_input) {
  if (grad_input.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleNearest3dBackward, grad_output, output_size, input_size,
                          scale_arg(scales_d), scale_arg(scales_h), scale_arg(scales_w), grad_input);
  }
}

// ---- nearest-exact -----------------------------------------------------------------

void upsample_nearest_exact2d(const LaunchDevice& device, const at::Tensor& self, at::IntArrayRef output_size,
                              Scale scales_h, Scale scales_w, const at::Tensor& out) {
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleNearestExact2d, self, output_size, scale_arg(scales_h),
                          scale_arg(scales_w), out);
  }
}

void upsample_nearest_exact2d_backward(const LaunchDevice& device, const at::Tensor& grad_output,
                                       at::IntArrayRef output_size, at::IntArrayRef input_size, Scale scales_h,
                                       Scale scales_w, const at::Tensor& grad_input) {
  if (grad_input.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleNearestExact2dBackward, grad_output, output_size, input_size,
                          scale_arg(scales_h), scale_arg(scales_w), grad_input);
  }
}

void upsample_nearest_exact3d(const LaunchDevice& device, const at::Tensor& self, at::IntArrayRef output_size,
                              Scale scales_d, Scale scales_h, Scale scales_w, const at::Tensor& out) {
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleNearestExact3d, self, output_size, scale_arg(scales_d),
                          scale_arg(scales_h), scale_arg(scales_w), out);
  }
}

void upsample_nearest_exact3d_backward(const LaunchDevice& device, const at::Tensor& grad_output,
                                       at::IntArrayRef output_size, at::IntArrayRef input_size, Scale scales_d,
                                       Scale scales_h, Scale scales_w, const at::Tensor& grad_input) {
  if (grad_input.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleNearestExact3dBackward, grad_output, output_size, input_size,
                          scale_arg(scales_d), scale_arg(scales_h), scale_arg(scales_w), grad_input);
  }
}

// ---- bilinear, bicubic, trilinear --------------------------------------------------------------

void upsample_bilinear2d(const LaunchDevice& device, const at::Tensor& self, at::IntArrayRef output_size,
                         bool align_corners, Scale scales_h, Scale scales_w, const at::Tensor& out) {
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleBilinear2d, self, output_size, align_corners, scale_arg(scales_h),
                          scale_arg(scales_w), out);
  }
}

void upsample_bilinear2d_backward(const LaunchDevice& device, const at::Tensor& grad_output,
                                  at::IntArrayRef output_size, at::IntArrayRef input_size, bool align_corners,
                                  Scale scales_h, Scale scales_w, const at::Tensor& grad_input) {
  if (grad_input.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleBilinear2dBackwardV2, grad_output, output_size, input_size,
                          align_corners, scale_arg(scales_h), scale_arg(scales_w), grad_input);
  }
}

void upsample_bicubic2d(const LaunchDevice& device, const at::Tensor& self, at::IntArrayRef output_size,
                        bool align_corners, Scale scales_h, Scale scales_w, const at::Tensor& out) {
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleBicubic2d, self, output_size, align_corners, scale_arg(scales_h),
                          scale_arg(scales_w), out);
  }
}

void upsample_bicubic2d_backward(const LaunchDevice& device, const at::Tensor& grad_output,
                                 at::IntArrayRef output_size, at::IntArrayRef input_size, bool align_corners,
                                 Scale scales_h, Scale scales_w, const at::Tensor& grad_input) {
  if (grad_input.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleBicubic2dBackward, grad_output, output_size, input_size,
                          align_corners, scale_arg(scales_h), scale_arg(scales_w), grad_input);
  }
}

void upsample_trilinear3d(const LaunchDevice& device, const at::Tensor& self, at::IntArrayRef output_size,
                          bool align_corners, Scale scales_d, Scale scales_h, Scale scales_w, const at::Tensor& out) {
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleTrilinear3d, self, output_size, align_corners, scale_arg(scales_d),
                          scale_arg(scales_h), scale_arg(scales_w), out);
  }
}

void upsample_trilinear3d_backward(const LaunchDevice& device, const at::Tensor& grad_output,
                                   at::IntArrayRef output_size, at::IntArrayRef input_size, bool align_corners,
                                   Scale scales_d, Scale scales_h, Scale scales_w, const at::Tensor& grad_input) {
  if (grad_input.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUpsampleTrilinear3dBackward, grad_output, output_size, input_size,
                          align_corners, scale_arg(scales_d), scale_arg(scales_h), scale_arg(scales_w), grad_input);
  }
}

}  // namespace flagos::impl
