// Linear algebra with a bias: aclnnAddmv, aclnnAddr; pairwise distances:
// aclnnCdist.
#include <ATen/ops/addmv.h>
#include <ATen/ops/_cdist_forward.h>
#include <ATen/ops/addr.h>

#include "sim_op.h"
#include "flagos/aclnn/aclnnAddmv.h"
#include "flagos/aclnn/aclnnAddr.h"
#include "flagos/aclnn/aclnnCdist.h"

using namespace fsim::op;

aclnnStatus aclnnAddmvGetWorkspaceSize(const aclTensor* self, const aclTensor* mat, const aclTensor* vec,
                                       const aclScalar* alpha, const aclScalar* beta, aclTensor* out,
                                       int8_t cubeMathType, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnAddmv", workspaceSize, executor);
  op.arg("self", self, kNumeric).arg("mat", mat, kNumeric).arg("vec", vec, kNumeric).arg("alpha", alpha)
      .arg("beta", beta).arg("out", out, kNumeric);
  op.require(cubeMathType >= 0 && cubeMathType <= 3, "cubeMathType must be in [0, 3]");
  return op.build([alpha = scalarOf(alpha), beta = scalarOf(beta)](Views& v) {
    at::addmv_out(v["out"], v["self"], v["mat"], v["vec"], beta, alpha);
  });
}
FSIM_PHASE2(aclnnAddmv)

aclnnStatus aclnnAddrGetWorkspaceSize(const aclTensor* self, const aclTensor* vec1, const aclTensor* vec2,
                                      const aclScalar* beta, const aclScalar* alpha, aclTensor* out,
                                      uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnAddr", workspaceSize, executor);
  op.arg("self", self, kNumeric | kBool).arg("vec1", vec1, kNumeric | kBool).arg("vec2", vec2, kNumeric | kBool)
      .arg("beta", beta).arg("alpha", alpha).arg("out", out, kNumeric | kBool);
  return op.build([beta = scalarOf(beta), alpha = scalarOf(alpha)](Views& v) {
    at::addr_out(v["out"], v["self"], v["vec1"], v["vec2"], beta, alpha);
  });
}
FSIM_PHASE2(aclnnAddr)

// CANN's checks: float operands of one dtype, at least 2-D, the same column
// count; p >= 0; compute_mode in [0, 2].
aclnnStatus aclnnCdistGetWorkspaceSize(const aclTensor* x1, const aclTensor* x2, float p, int64_t compute_mode,
                                       aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnCdist", workspaceSize, executor);
  op.arg("x1", x1, kFloating).arg("x2", x2, kFloating).arg("out", out, kFloating);
  op.require(!x1 || !x2 || (x1->dtype == x2->dtype && (!out || out->dtype == x1->dtype)),
             "x1, x2 and out must have one dtype");
  op.require(!x1 || !x2 || (x1->viewDims.size() >= 2 && x2->viewDims.size() >= 2 &&
                            x1->viewDims.back() == x2->viewDims.back()),
             "x1 and x2 must be at least 2-D with the same number of columns");
  op.require(p >= 0, "p must be non-negative");
  op.require(compute_mode >= 0 && compute_mode <= 2, "compute_mode must be 0, 1 or 2");
  return op.build([p, compute_mode](Views& v) {
    v["out"].copy_(at::_cdist_forward(v["x1"], v["x2"], p, compute_mode));
  });
}
FSIM_PHASE2(aclnnCdist)
