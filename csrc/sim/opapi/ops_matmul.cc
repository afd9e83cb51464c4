// Matrix products: aclnnAddmm, aclnnBaddbmm, aclnnMv, aclnnDot. The
// simulator computes in the input dtype whatever cubeMathType says.
#include <ATen/ops/addmm.h>
#include <ATen/ops/baddbmm.h>
#include <ATen/ops/dot.h>
#include <ATen/ops/mv.h>

#include "sim_op.h"
#include "flagos/aclnn/aclnnAddmm.h"
#include "flagos/aclnn/aclnnBaddbmm.h"
#include "flagos/aclnn/aclnnDot.h"
#include "flagos/aclnn/aclnnMv.h"

using namespace fsim::op;

namespace {

// 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16, 3 USE_HF32.
bool valid_cube_math_type(int8_t cubeMathType) { return cubeMathType >= 0 && cubeMathType <= 3; }

}  // namespace

aclnnStatus aclnnAddmmGetWorkspaceSize(const aclTensor* self, const aclTensor* mat1, const aclTensor* mat2,
                                       const aclScalar* beta, const aclScalar* alpha, aclTensor* out,
                                       int8_t cubeMathType, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnAddmm", workspaceSize, executor);
  op.arg("self", self, kFloating).arg("mat1", mat1, kFloating).arg("mat2", mat2, kFloating).arg("beta", beta)
      .arg("alpha", alpha).arg("out", out, kFloating);
  op.require(valid_cube_math_type(cubeMathType), "cubeMathType must be 0..3");
  return op.build([beta = scalarOf(beta), alpha = scalarOf(alpha)](Views& v) {
    at::addmm_out(v["out"], v["self"], v["mat1"], v["mat2"], beta, alpha);
  });
}
FSIM_PHASE2(aclnnAddmm)

aclnnStatus aclnnBaddbmmGetWorkspaceSize(const aclTensor* self, const aclTensor* batch1, const aclTensor* batch2,
                                         const aclScalar* beta, const aclScalar* alpha, aclTensor* out,
                                         int8_t cubeMathType, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnBaddbmm", workspaceSize, executor);
  op.arg("self", self, kFloating).arg("batch1", batch1, kFloating).arg("batch2", batch2, kFloating)
      .arg("beta", beta).arg("alpha", alpha).arg("out", out, kFloating);
  op.require(valid_cube_math_type(cubeMathType), "cubeMathType must be 0..3");
  return op.build([beta = scalarOf(beta), alpha = scalarOf(alpha)](Views& v) {
    at::baddbmm_out(v["out"], v["self"], v["batch1"], v["batch2"], beta, alpha);
  });
}
FSIM_PHASE2(aclnnBaddbmm)

aclnnStatus aclnnMvGetWorkspaceSize(const aclTensor* self, const aclTensor* vec, aclTensor* out, int8_t cubeMathType,
                                    uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnMv", workspaceSize, executor);
  op.arg("self", self, kFloating).arg("vec", vec, kFloating).arg("out", out, kFloating);
  op.require(valid_cube_math_type(cubeMathType), "cubeMathType must be 0..3");
  return op.build([](Views& v) { at::mv_out(v["out"], v["self"], v["vec"]); });
}
FSIM_PHASE2(aclnnMv)

aclnnStatus aclnnDotGetWorkspaceSize(const aclTensor* self, const aclTensor* tensor, aclTensor* out,
                                     uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnDot", workspaceSize, executor);
  op.arg("self", self, kFloating).arg("tensor", tensor, kFloating).arg("out", out, kFloating);
  return op.build([](Views& v) { at::dot_out(v["out"], v["self"], v["tensor"]); });
}
FSIM_PHASE2(aclnnDot)
