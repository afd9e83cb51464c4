// Upsampling (hicann/ops-cv image/): aclnnUpsampleNearest2d, aclnnUpsampleNearest2dV2,
// aclnnUpsampleNearestExact2d, aclnnUpsampleBilinear2d, aclnnUpsampleBicubic2d, aclnnUpsampleNearest3d,
// aclnnUpsampleNearestExact3d, aclnnUpsampleTrilinear3d and their backward operators
// (aclnnUpsampleBilinear2dBackwardV2 for bilinear).
//
// A scale is the multiplier output / input (ATen's scales_h); 0 means "from
// the sizes", as ATen's absent scale. The dtypes are those CANN's docs list
// for Atlas A2/A3; the operators whose docs say "no empty tensor" reject one.
// Half and bfloat16 are computed in float and rounded once.
#include <ATen/ops/_upsample_nearest_exact2d.h>
#include <ATen/ops/_upsample_nearest_exact2d_backward.h>
#include <ATen/ops/_upsample_nearest_exact3d.h>
#include <ATen/ops/_upsample_nearest_exact3d_backward.h>
#include <ATen/ops/upsample_bicubic2d.h>
#include <ATen/ops/upsample_bicubic2d_backward.h>
#include <ATen/ops/upsample_bilinear2d.h>
#include <ATen/ops/upsample_bilinear2d_backward.h>
#include <ATen/ops/upsample_nearest2d.h>
#include <ATen/ops/upsample_nearest2d_backward.h>
#include <ATen/ops/upsample_nearest3d.h>
#include <ATen/ops/upsample_nearest3d_backward.h>
#include <ATen/ops/upsample_trilinear3d.h>
#include <ATen/ops/upsample_trilinear3d_backward.h>

#include <initializer_list>
#include <optional>
#include <vector>

#include "sim_op.h"
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

using namespace fsim::op;

namespace {

constexpr DTypes kNearest2dTypes{ACL_FLOAT, ACL_BF16, ACL_FLOAT16, ACL_DOUBLE, ACL_UINT8};
constexpr DTypes kNearestExact2dTypes{ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_UINT8};
constexpr DTypes kBilinear2dTypes{ACL_FLOAT, ACL_BF16, ACL_FLOAT16, ACL_DOUBLE};
constexpr DTypes kNearest3dTypes{ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE};
constexpr DTypes kNearestExact3dTypes{ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
constexpr DTypes kTrilinear3dTypes{ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE};
constexpr DTypes kGrad2dTypes{ACL_FLOAT, ACL_FLOAT16, ACL_BF16};  // nearest, nearest-exact, bilinear, bicubic
constexpr DTypes kBicubic2dTypes{ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
constexpr DTypes kGrad3dTypes{ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE};  // nearest, trilinear
constexpr DTypes kNearestExactGrad3dTypes{ACL_FLOAT, ACL_FLOAT16, ACL_BF16};

bool hasZero(const aclTensor* t) {
  if (t == nullptr) return false;
  for (const int64_t d : t->viewDims)
    if (d == 0) return true;
  return false;
}

std::optional<double> scaleOf(double scale) { return scale > 0 ? std::optional<double>(scale) : std::nullopt; }

bool nonNegative(std::initializer_list<double> scales) {
  for (const double s : scales)
    if (!(s >= 0)) return false;  // NaN too
  return true;
}

bool halfOrBFloat16(at::ScalarType type) { return type == at::kHalf || type == at::kBFloat16; }
at::Tensor widenedToFloat(const at::Tensor& t) { return halfOrBFloat16(t.scalar_type()) ? t.to(at::kFloat) : t; }

// A forward operator's arguments, in its order, and their checks: self [N, C, *in]
// -> out [N, C, *outputSize], with `spatial` = 2 or 3.
void forwardArgs(Op& op, const aclTensor* self, const aclIntArray* outputSize, const aclTensor* out, DTypes types,
                 size_t spatial, bool emptyOk, std::initializer_list<double> scales) {
  op.arg("self", self, types).arg("outputSize", outputSize).arg("out", out, types);
  const std::vector<int64_t> size = intsOf(outputSize);
  op.require(self == nullptr || self->viewDims.size() == spatial + 2,
             spatial == 2 ? "self must be 4-D (NCHW)" : "self must be 5-D (NCDHW)");
  op.require(outputSize == nullptr || size.size() == spatial, "outputSize must have one value per spatial dim");
  op.require(self == nullptr || out == nullptr || self->dtype == out->dtype, "out must have the dtype of self");
  op.require(nonNegative(scales), "a scale is negative");
  if (self == nullptr || out == nullptr || self->viewDims.size() != spatial + 2 || size.size() != spatial) return;
  std::vector<int64_t> expected{self->viewDims[0], self->viewDims[1]};
  expected.insert(expected.end(), size.begin(), size.end());
  op.require(out->viewDims == expected, "out's shape must be [N, C, *outputSize]");
  bool positive = self->viewDims[1] > 0;
  for (size_t d = 0; d < spatial; ++d) positive = positive && self->viewDims[d + 2] > 0 && size[d] > 0;
  op.require(positive, "C and the input and output spatial sizes must be > 0");
  op.require(emptyOk || !hasZero(self), "self must not be empty");
}

// A backward operator's arguments, in its order, under CANN's names for the
// gradient and its result, and their checks: gradOut [N, C, *outputSize] ->
// gradInput inputSize = [N, C, *in].
void backwardArgs(Op& op, const char* gradOutName, const aclTensor* gradOut, const aclIntArray* outputSize,
                  const aclIntArray* inputSize, const char* gradInputName, const aclTensor* gradInput, DTypes types,
                  size_t spatial, bool emptyOk, std::initializer_list<double> scales) {
  op.arg(gradOutName, gradOut, types).arg("outputSize", outputSize).arg("inputSize", inputSize)
      .arg(gradInputName, gradInput, types);
  const std::vector<int64_t> size = intsOf(outputSize), input = intsOf(inputSize);
  op.require(outputSize == nullptr || size.size() == spatial, "outputSize must have one value per spatial dim");
  op.require(inputSize == nullptr || input.size() == spatial + 2, "inputSize must have one value per dim of the input");
  op.require(gradOut == nullptr || gradInput == nullptr || gradOut->dtype == gradInput->dtype,
             "gradInput must have the dtype of the gradient");
  op.require(nonNegative(scales), "a scale is negative");
  if (gradOut == nullptr || gradInput == nullptr || size.size() != spatial || input.size() != spatial + 2) return;
  std::vector<int64_t> expected{input[0], input[1]};
  expected.insert(expected.end(), size.begin(), size.end());
  op.require(gradOut->viewDims == expected, "the gradient's shape must be [N, C, *outputSize]");
  op.require(gradInput->viewDims == input, "gradInput's shape must be inputSize");
  op.require(emptyOk || (!hasZero(gradOut) && !hasZero(gradInput)), "the tensors must not be empty");
}

}  // namespace

// ---- nearest 2d ---------------------------------------------------------------

aclnnStatus aclnnUpsampleNearest2dGetWorkspaceSize(const aclTensor* self, const aclIntArray* outputSize,
                                                   aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnUpsampleNearest2d", workspaceSize, executor);
  forwardArgs(op, self, outputSize, out, kNearest2dTypes, 2, true, {});
  // No scales: the source index is floor(dst * in / out).
  return op.build([size = intsOf(outputSize)](Views& v) {
    v["out"].copy_(at::upsample_nearest2d(widenedToFloat(v["self"]), size, std::nullopt, std::nullopt));
  });
}
FSIM_PHASE2(aclnnUpsampleNearest2d)

aclnnStatus aclnnUpsampleNearest2dV2GetWorkspaceSize(const aclTensor* self, const aclIntArray* outputSize,
                                                     float scalesH, float scalesW, aclTensor* out,
                                                     uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnUpsampleNearest2dV2", workspaceSize, executor);
  forwardArgs(op, self, outputSize, out, kNearest2dTypes, 2, true, {scalesH, scalesW});
  // The scales arrive as floats: the operator divides by the float value.
  return op.build([size = intsOf(outputSize), h = scaleOf(scalesH), w = scaleOf(scalesW)](Views& v) {
    v["out"].copy_(at::upsample_nearest2d(widenedToFloat(v["self"]), size, h, w));
  });
}
FSIM_PHASE2(aclnnUpsampleNearest2dV2)

aclnnStatus aclnnUpsampleNearest2dBackwardGetWorkspaceSize(const aclTensor* gradOut, const aclIntArray* outputSize,
                                                           const aclIntArray* inputSize, double scalesH,
                                                           double scalesW, aclTensor* gradInput,
                                                           uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnUpsampleNearest2dBackward", workspaceSize, executor);
  backwardArgs(op, "gradOut", gradOut, outputSize, inputSize, "gradInput", gradInput, kGrad2dTypes, 2, false,
               {scalesH, scalesW});
  return op.build([size = intsOf(outputSize), input = intsOf(inputSize), h = scaleOf(scalesH),
                   w = scaleOf(scalesW)](Views& v) {
    v["gradInput"].copy_(at::upsample_nearest2d_backward(widenedToFloat(v["gradOut"]), size, input, h, w));
  });
}
FSIM_PHASE2(aclnnUpsampleNearest2dBackward)

// ---- nearest-exact 2d -------------------------------------------------------------

aclnnStatus aclnnUpsampleNearestExact2dGetWorkspaceSize(const aclTensor* self, const aclIntArray* outputSize,
                                                        double scalesH, double scalesW, aclTensor* out,
                                                        uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnUpsampleNearestExact2d", workspaceSize, executor);
  forwardArgs(op, self, outputSize, out, kNearestExact2dTypes, 2, true, {scalesH, scalesW});
  return op.build([size = intsOf(outputSize), h = scaleOf(scalesH), w = scaleOf(scalesW)](Views& v) {
    v["out"].copy_(at::_upsample_nearest_exact2d(widenedToFloat(v["self"]), size, h, w));
  });
}
FSIM_PHASE2(aclnnUpsampleNearestExact2d)

aclnnStatus aclnnUpsampleNearestExact2dBackwardGetWorkspaceSize(const aclTensor* gradOutput,
                                                                const aclIntArray* outputSize,
                                                                const aclIntArray* inputSize, double scalesH,
                                                                double scalesW, aclTensor* out,
                                                                uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnUpsampleNearestExact2dBackward", workspaceSize, executor);
  backwardArgs(op, "gradOutput", gradOutput, outputSize, inputSize, "out", out, kGrad2dTypes, 2, true,
               {scalesH, scalesW});
  return op.build([size = intsOf(outputSize), input = intsOf(inputSize), h = scaleOf(scalesH),
                   w = scaleOf(scalesW)](Views& v) {
    v["out"].copy_(at::_upsample_nearest_exact2d_backward(widenedToFloat(v["gradOutput"]), size, input, h, w));
  });
}
FSIM_PHASE2(aclnnUpsampleNearestExact2dBackward)

// ---- bilinear 2d ----------------------------------------------------------------------

aclnnStatus aclnnUpsampleBilinear2dGetWorkspaceSize(const aclTensor* self, const aclIntArray* outputSize,
                                                    const bool alignCorners, const double scalesH,
                                                    const double scalesW, aclTensor* out, uint64_t* workspaceSize,
                                                    aclOpExecutor** executor) {
  Op op("aclnnUpsampleBilinear2d", workspaceSize, executor);
  forwardArgs(op, self, outputSize, out, kBilinear2dTypes, 2, false, {scalesH, scalesW});
  return op.build([size = intsOf(outputSize), alignCorners, h = scaleOf(scalesH), w = scaleOf(scalesW)](Views& v) {
    v["out"].copy_(at::upsample_bilinear2d(widenedToFloat(v["self"]), size, alignCorners, h, w));
  });
}
FSIM_PHASE2(aclnnUpsampleBilinear2d)

aclnnStatus aclnnUpsampleBilinear2dBackwardV2GetWorkspaceSize(const aclTensor* gradOut,
                                                              const aclIntArray* outputSize,
                                                              const aclIntArray* inputSize, bool alignCorners,
                                                              double scalesH, double scalesW, aclTensor* out,
                                                              uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnUpsampleBilinear2dBackwardV2", workspaceSize, executor);
  backwardArgs(op, "gradOut", gradOut, outputSize, inputSize, "out", out, kGrad2dTypes, 2, false,
               {scalesH, scalesW});
  return op.build([size = intsOf(outputSize), input = intsOf(inputSize), alignCorners, h = scaleOf(scalesH),
                   w = scaleOf(scalesW)](Views& v) {
    v["out"].copy_(at::upsample_bilinear2d_backward(widenedToFloat(v["gradOut"]), size, input, alignCorners, h, w));
  });
}
FSIM_PHASE2(aclnnUpsampleBilinear2dBackwardV2)

// ---- bicubic 2d -----------------------------------------------------------------------
// Both take an empty batch (N = 0) and do nothing.

aclnnStatus aclnnUpsampleBicubic2dGetWorkspaceSize(const aclTensor* self, const aclIntArray* outputSize,
                                                   const bool alignCorners, const double scalesH, const double scalesW,
                                                   aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnUpsampleBicubic2d", workspaceSize, executor);
  forwardArgs(op, self, outputSize, out, kBicubic2dTypes, 2, true, {scalesH, scalesW});
  return op.build([size = intsOf(outputSize), alignCorners, h = scaleOf(scalesH), w = scaleOf(scalesW)](Views& v) {
    if (v["out"].numel() == 0) return;
    v["out"].copy_(at::upsample_bicubic2d(widenedToFloat(v["self"]), size, alignCorners, h, w));
  });
}
FSIM_PHASE2(aclnnUpsampleBicubic2d)

aclnnStatus aclnnUpsampleBicubic2dBackwardGetWorkspaceSize(const aclTensor* gradOut, const aclIntArray* outputSize,
                                                           const aclIntArray* inputSize, const bool alignCorners,
                                                           double scalesH, double scalesW, aclTensor* gradInput,
                                                           uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnUpsampleBicubic2dBackward", workspaceSize, executor);
  backwardArgs(op, "gradOut", gradOut, outputSize, inputSize, "gradInput", gradInput, kGrad2dTypes, 2, true,
               {scalesH, scalesW});
  return op.build([size = intsOf(outputSize), input = intsOf(inputSize), alignCorners, h = scaleOf(scalesH),
                   w = scaleOf(scalesW)](Views& v) {
    if (v["gradInput"].numel() == 0) return;
    v["gradInput"].copy_(
        at::upsample_bicubic2d_backward(widenedToFloat(v["gradOut"]), size, input, alignCorners, h, w));
  });
}
FSIM_PHASE2(aclnnUpsampleBicubic2dBackward)

// ---- nearest 3d -----------------------------------------------------------------------

aclnnStatus aclnnUpsampleNearest3dGetWorkspaceSize(const aclTensor* self, const aclIntArray* outputSize,
                                                   double scalesD, double scalesH, double scalesW, aclTensor* out,
                                                   uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnUpsampleNearest3d", workspaceSize, executor);
  forwardArgs(op, self, outputSize, out, kNearest3dTypes, 3, false, {scalesD, scalesH, scalesW});
  return op.build([size = intsOf(outputSize), d = scaleOf(scalesD), h = scaleOf(scalesH),
                   w = scaleOf(scalesW)](Views& v) {
    v["out"].copy_(at::upsample_nearest3d(widenedToFloat(v["self"]), size, d, h, w));
  });
}
FSIM_PHASE2(aclnnUpsampleNearest3d)

aclnnStatus aclnnUpsampleNearest3dBackwardGetWorkspaceSize(const aclTensor* gradOut, const aclIntArray* outputSize,
                                                           const aclIntArray* inputSize, double scalesD,
                                                           double scalesH, double scalesW, aclTensor* gradInput,
                                                           uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnUpsampleNearest3dBackward", workspaceSize, executor);
  backwardArgs(op, "gradOut", gradOut, outputSize, inputSize, "gradInput", gradInput, kGrad3dTypes, 3, false,
               {scalesD, scalesH, scalesW});
  return op.build([size = intsOf(outputSize), input = intsOf(inputSize), d = scaleOf(scalesD), h = scaleOf(scalesH),
                   w = scaleOf(scalesW)](Views& v) {
    v["gradInput"].copy_(at::upsample_nearest3d_backward(widenedToFloat(v["gradOut"]), size, input, d, h, w));
  });
}
FSIM_PHASE2(aclnnUpsampleNearest3dBackward)

// ---- nearest-exact 3d ---------------------------------------------------------------------

aclnnStatus aclnnUpsampleNearestExact3dGetWorkspaceSize(const aclTensor* self, const aclIntArray* outputSize,
                                                        double scalesD, double scalesH, double scalesW,
                                                        aclTensor* out, uint64_t* workspaceSize,
                                                        aclOpExecutor** executor) {
  Op op("aclnnUpsampleNearestExact3d", workspaceSize, executor);
  forwardArgs(op, self, outputSize, out, kNearestExact3dTypes, 3, false, {scalesD, scalesH, scalesW});
  return op.build([size = intsOf(outputSize), d = scaleOf(scalesD), h = scaleOf(scalesH),
                   w = scaleOf(scalesW)](Views& v) {
    v["out"].copy_(at::_upsample_nearest_exact3d(widenedToFloat(v["self"]), size, d, h, w));
  });
}
FSIM_PHASE2(aclnnUpsampleNearestExact3d)

aclnnStatus aclnnUpsampleNearestExact3dBackwardGetWorkspaceSize(const aclTensor* gradOut,
                                                                const aclIntArray* outputSize,
                                                                const aclIntArray* inputSize, double scalesD,
                                                                double scalesH, double scalesW, aclTensor* gradInput,
                                                                uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnUpsampleNearestExact3dBackward", workspaceSize, executor);
  backwardArgs(op, "gradOut", gradOut, outputSize, inputSize, "gradInput", gradInput, kNearestExactGrad3dTypes, 3,
               false, {scalesD, scalesH, scalesW});
  return op.build([size = intsOf(outputSize), input = intsOf(inputSize), d = scaleOf(scalesD), h = scaleOf(scalesH),
                   w = scaleOf(scalesW)](Views& v) {
    v["gradInput"].copy_(at::_upsample_nearest_exact3d_backward(widenedToFloat(v["gradOut"]), size, input, d, h, w));
  });
}
FSIM_PHASE2(aclnnUpsampleNearestExact3dBackward)

// ---- trilinear 3d ----------------------------------------------------------------------------

aclnnStatus aclnnUpsampleTrilinear3dGetWorkspaceSize(const aclTensor* self, const aclIntArray* outputSize,
                                                     bool alignCorners, double scalesD, double scalesH,
                                                     double scalesW, aclTensor* out, uint64_t* workspaceSize,
                                                     aclOpExecutor** executor) {
  Op op("aclnnUpsampleTrilinear3d", workspaceSize, executor);
  forwardArgs(op, self, outputSize, out, kTrilinear3dTypes, 3, false, {scalesD, scalesH, scalesW});
  return op.build([size = intsOf(outputSize), alignCorners, d = scaleOf(scalesD), h = scaleOf(scalesH),
                   w = scaleOf(scalesW)](Views& v) {
    v["out"].copy_(at::upsample_trilinear3d(widenedToFloat(v["self"]), size, alignCorners, d, h, w));
  });
}
FSIM_PHASE2(aclnnUpsampleTrilinear3d)

aclnnStatus aclnnUpsampleTrilinear3dBackwardGetWorkspaceSize(const aclTensor* gradOut, const aclIntArray* outputSize,
                                                             const aclIntArray* inputSize, bool alignCorners,
                                                             double scalesD, double scalesH, double scalesW,
                                                             aclTensor* gradInput, uint64_t* workspaceSize,
                                                             aclOpExecutor** executor) {
  Op op("aclnnUpsampleTrilinear3dBackward", workspaceSize, executor);
  backwardArgs(op, "gradOut", gradOut, outputSize, inputSize, "gradInput", gradInput, kGrad3dTypes, 3, false,
               {scalesD, scalesH, scalesW});
  return op.build([size = intsOf(outputSize), input = intsOf(inputSize), alignCorners, d = scaleOf(scalesD),
                   h = scaleOf(scalesH), w = scaleOf(scalesW)](Views& v) {
    v["gradInput"].copy_(
        at::upsample_trilinear3d_backward(widenedToFloat(v["gradOut"]), size, input, alignCorners, d, h, w));
  });
}
FSIM_PHASE2(aclnnUpsampleTrilinear3dBackward)
