// Joining tensor lists: aclnnCat, aclnnStack. The inputs may differ in dtype;
// they are converted to out's, as ATen's cat does.
#include <ATen/ops/cat.h>
#include <ATen/ops/stack.h>

#include "sim_op.h"
#include "flagos/aclnn/aclnnCat.h"
#include "flagos/aclnn/aclnnStack.h"

using namespace fsim::op;

aclnnStatus aclnnCatGetWorkspaceSize(const aclTensorList* tensors, int64_t dim, aclTensor* out,
                                     uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnCat", workspaceSize, executor);
  op.arg("tensors", tensors).arg("out", out);
  op.require(tensors == nullptr || !tensors->tensors.empty(), "tensors must not be empty");
  return op.build([dim](Views& v) { at::cat_out(v["out"], v.list("tensors"), dim); });
}
FSIM_PHASE2(aclnnCat)

aclnnStatus aclnnStackGetWorkspaceSize(const aclTensorList* tensors, int64_t dim, aclTensor* out,
                                       uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnStack", workspaceSize, executor);
  op.arg("tensors", tensors).arg("out", out);
  op.require(tensors == nullptr || !tensors->tensors.empty(), "tensors must not be empty");
  return op.build([dim](Views& v) { at::stack_out(v["out"], v.list("tensors"), dim); });
}
FSIM_PHASE2(aclnnStack)
