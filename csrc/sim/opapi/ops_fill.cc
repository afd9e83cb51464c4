// Fills: aclnnInplaceFillScalar, aclnnInplaceZero.
#include <ATen/ops/fill.h>
#include <ATen/ops/zero.h>

#include "sim_op.h"
#include "flagos/aclnn/aclnnInplaceFillScalar.h"
#include "flagos/aclnn/aclnnInplaceZero.h"

using namespace fsim::op;

aclnnStatus aclnnInplaceFillScalarGetWorkspaceSize(aclTensor* selfRef, const aclScalar* value,
                                                   uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnInplaceFillScalar", workspaceSize, executor);
  op.arg("selfRef", selfRef).arg("value", value);
  return op.build([value = scalarOf(value)](Views& v) { at::fill_(v["selfRef"], value); });
}
FSIM_PHASE2(aclnnInplaceFillScalar)

aclnnStatus aclnnInplaceZeroGetWorkspaceSize(aclTensor* selfRef, uint64_t* workspaceSize,
                                             aclOpExecutor** executor) {
  Op op("aclnnInplaceZero", workspaceSize, executor);
  op.arg("selfRef", selfRef);
  return op.build([](Views& v) { at::zero_(v["selfRef"]); });
}
FSIM_PHASE2(aclnnInplaceZero)
