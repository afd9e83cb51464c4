// Elementwise arithmetic beyond aclnnAdd (ops_add.cc): aclnnInplaceAdds,
// aclnnSub(s), aclnnInplaceSub(s), aclnnMul(s), aclnnInplaceMul(s), aclnnDiv(s), aclnnMaximum,
// aclnnMinimum, aclnnPowTensorScalar.
#include <ATen/ops/add.h>
#include <ATen/ops/div.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/minimum.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/sub.h>

#include "sim_op.h"
#include "flagos/aclnn/aclnnAdd.h"
#include "flagos/aclnn/aclnnDiv.h"
#include "flagos/aclnn/aclnnDivs.h"
#include "flagos/aclnn/aclnnInplaceAdds.h"
#include "flagos/aclnn/aclnnInplaceMul.h"
#include "flagos/aclnn/aclnnInplaceMuls.h"
#include "flagos/aclnn/aclnnInplaceSub.h"
#include "flagos/aclnn/aclnnInplaceSubs.h"
#include "flagos/aclnn/aclnnMaximum.h"
#include "flagos/aclnn/aclnnMinimum.h"
#include "flagos/aclnn/aclnnMul.h"
#include "flagos/aclnn/aclnnMuls.h"
#include "flagos/aclnn/aclnnPowTensorScalar.h"
#include "flagos/aclnn/aclnnSub.h"
#include "flagos/aclnn/aclnnSubs.h"

using namespace fsim::op;

aclnnStatus aclnnInplaceAddsGetWorkspaceSize(const aclTensor* selfRef, const aclScalar* other, const aclScalar* alpha,
                                             uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnInplaceAdds", workspaceSize, executor);
  op.arg("selfRef", selfRef).arg("other", other).arg("alpha", alpha);
  return op.build([other = scalarOf(other), alpha = scalarOf(alpha)](Views& v) {
    v["selfRef"].add_(other, alpha);
  });
}
FSIM_PHASE2(aclnnInplaceAdds)

aclnnStatus aclnnSubGetWorkspaceSize(const aclTensor* self, const aclTensor* other, const aclScalar* alpha,
                                     aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnSub", workspaceSize, executor);
  op.arg("self", self, kNumeric).arg("other", other, kNumeric).arg("alpha", alpha).arg("out", out, kNumeric);
  return op.build([alpha = scalarOf(alpha)](Views& v) { at::sub_out(v["out"], v["self"], v["other"], alpha); });
}
FSIM_PHASE2(aclnnSub)

aclnnStatus aclnnSubsGetWorkspaceSize(const aclTensor* self, const aclScalar* other, const aclScalar* alpha,
                                      aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnSubs", workspaceSize, executor);
  op.arg("self", self, kNumeric).arg("other", other).arg("alpha", alpha).arg("out", out, kNumeric);
  return op.build([other = scalarOf(other), alpha = scalarOf(alpha)](Views& v) {
    at::sub_out(v["out"], v["self"], other, alpha);
  });
}
FSIM_PHASE2(aclnnSubs)

aclnnStatus aclnnInplaceSubGetWorkspaceSize(aclTensor* selfRef, const aclTensor* other, const aclScalar* alpha,
                                            uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnInplaceSub", workspaceSize, executor);
  op.arg("selfRef", selfRef, kNumeric).arg("other", other, kNumeric).arg("alpha", alpha);
  return op.build([alpha = scalarOf(alpha)](Views& v) {
    at::sub_out(v["selfRef"], v["selfRef"], v["other"], alpha);
  });
}
FSIM_PHASE2(aclnnInplaceSub)

aclnnStatus aclnnInplaceSubsGetWorkspaceSize(aclTensor* selfRef, const aclScalar* other, const aclScalar* alpha,
                                             uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnInplaceSubs", workspaceSize, executor);
  op.arg("selfRef", selfRef, kNumeric).arg("other", other).arg("alpha", alpha);
  return op.build([other = scalarOf(other), alpha = scalarOf(alpha)](Views& v) {
    v["selfRef"].sub_(other, alpha);
  });
}
FSIM_PHASE2(aclnnInplaceSubs)

aclnnStatus aclnnMulGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                     uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnMul", workspaceSize, executor);
  op.arg("self", self).arg("other", other).arg("out", out);
  return op.build([](Views& v) { at::mul_out(v["out"], v["self"], v["other"]); });
}
FSIM_PHASE2(aclnnMul)

aclnnStatus aclnnMulsGetWorkspaceSize(const aclTensor* self, const aclScalar* other, aclTensor* out,
                                      uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnMuls", workspaceSize, executor);
  op.arg("self", self).arg("other", other).arg("out", out);
  return op.build([other = scalarOf(other)](Views& v) { at::mul_out(v["out"], v["self"], other); });
}
FSIM_PHASE2(aclnnMuls)

aclnnStatus aclnnInplaceMulGetWorkspaceSize(aclTensor* selfRef, const aclTensor* other, uint64_t* workspaceSize,
                                            aclOpExecutor** executor) {
  Op op("aclnnInplaceMul", workspaceSize, executor);
  op.arg("selfRef", selfRef).arg("other", other);
  return op.build([](Views& v) { v["selfRef"].mul_(v["other"]); });
}
FSIM_PHASE2(aclnnInplaceMul)

aclnnStatus aclnnInplaceMulsGetWorkspaceSize(aclTensor* selfRef, const aclScalar* other, uint64_t* workspaceSize,
                                             aclOpExecutor** executor) {
  Op op("aclnnInplaceMuls", workspaceSize, executor);
  op.arg("selfRef", selfRef).arg("other", other);
  return op.build([other = scalarOf(other)](Views& v) { v["selfRef"].mul_(other); });
}
FSIM_PHASE2(aclnnInplaceMuls)

aclnnStatus aclnnDivGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                     uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnDiv", workspaceSize, executor);
  op.arg("self", self).arg("other", other).arg("out", out, kFloating | kComplex);
  return op.build([](Views& v) { at::div_out(v["out"], v["self"], v["other"]); });
}
FSIM_PHASE2(aclnnDiv)

aclnnStatus aclnnDivsGetWorkspaceSize(const aclTensor* self, const aclScalar* other, aclTensor* out,
                                      uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnDivs", workspaceSize, executor);
  op.arg("self", self).arg("other", other).arg("out", out, kFloating | kComplex);
  return op.build([other = scalarOf(other)](Views& v) { at::div_out(v["out"], v["self"], other); });
}
FSIM_PHASE2(aclnnDivs)

aclnnStatus aclnnMaximumGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                         uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnMaximum", workspaceSize, executor);
  op.arg("self", self, kNumeric | kBool).arg("other", other, kNumeric | kBool).arg("out", out, kNumeric | kBool);
  return op.build([](Views& v) { at::maximum_out(v["out"], v["self"], v["other"]); });
}
FSIM_PHASE2(aclnnMaximum)

aclnnStatus aclnnMinimumGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                         uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnMinimum", workspaceSize, executor);
  op.arg("self", self, kNumeric | kBool).arg("other", other, kNumeric | kBool).arg("out", out, kNumeric | kBool);
  return op.build([](Views& v) { at::minimum_out(v["out"], v["self"], v["other"]); });
}
FSIM_PHASE2(aclnnMinimum)

aclnnStatus aclnnPowTensorScalarGetWorkspaceSize(const aclTensor* self, const aclScalar* exponent, const aclTensor* out,
                                                 uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnPowTensorScalar", workspaceSize, executor);
  op.arg("self", self, kNumeric | kComplex).arg("exponent", exponent).arg("out", out, kNumeric | kComplex);
  return op.build([exponent = scalarOf(exponent)](Views& v) { at::pow_out(v["out"], v["self"], exponent); });
}
FSIM_PHASE2(aclnnPowTensorScalar)
