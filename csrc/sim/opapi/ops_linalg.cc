// Linear algebra with a bias: aclnnAddmv, aclnnAddr.
#include <ATen/ops/addmv.h>
#include <ATen/ops/addr.h>

#include "sim_op.h"
#include "aclnn/aclnnAddmv.h"
#include "aclnn/aclnnAddr.h"

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
