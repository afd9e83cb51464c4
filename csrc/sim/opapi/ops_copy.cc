// Copies and conversions: aclnnCast, aclnnInplaceCopy.
#include "sim_op.h"
#include "flagos/aclnn/aclnnCast.h"
#include "flagos/aclnn/aclnnInplaceCopy.h"

using namespace fsim::op;

aclnnStatus aclnnCastGetWorkspaceSize(const aclTensor* self, const aclDataType dtype, aclTensor* out,
                                      uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnCast", workspaceSize, executor);
  op.arg("self", self).dtype("dtype", dtype).arg("out", out);
  op.require(out == nullptr || out->dtype == dtype, "argument 'out' must have the dtype given by 'dtype'");
  return op.build([](Views& v) { v["out"].copy_(v["self"]); });
}
FSIM_PHASE2(aclnnCast)

aclnnStatus aclnnInplaceCopyGetWorkspaceSize(aclTensor* selfRef, const aclTensor* src, uint64_t* workspaceSize,
                                             aclOpExecutor** executor) {
  Op op("aclnnInplaceCopy", workspaceSize, executor);
  op.arg("selfRef", selfRef).arg("src", src);
  return op.build([](Views& v) { v["selfRef"].copy_(v["src"]); });
}
FSIM_PHASE2(aclnnInplaceCopy)
