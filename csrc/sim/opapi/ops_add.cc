// Addition: aclnnAdd, aclnnAdds, aclnnInplaceAdd.
#include <ATen/ops/add.h>

#include "sim_op.h"
#include "flagos/aclnn/aclnnAdd.h"
#include "flagos/aclnn/aclnnAdds.h"
#include "flagos/aclnn/aclnnInplaceAdd.h"

using namespace fsim::op;

aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor* self, const aclTensor* other, const aclScalar* alpha,
                                     aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnAdd", workspaceSize, executor);
  op.arg("self", self).arg("other", other).arg("alpha", alpha).arg("out", out);
  return op.build([alpha = scalarOf(alpha)](Views& v) {
    at::add_out(v["out"], v["self"], v["other"], alpha);
  });
}
FSIM_PHASE2(aclnnAdd)

aclnnStatus aclnnAddsGetWorkspaceSize(const aclTensor* self, const aclScalar* other, const aclScalar* alpha,
                                      aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnAdds", workspaceSize, executor);
  op.arg("self", self).arg("other", other).arg("alpha", alpha).arg("out", out);
  return op.build([other = scalarOf(other), alpha = scalarOf(alpha)](Views& v) {
    at::add_out(v["out"], v["self"], other, alpha);
  });
}
FSIM_PHASE2(aclnnAdds)

aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor* selfRef, const aclTensor* other, const aclScalar* alpha,
                                            uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnInplaceAdd", workspaceSize, executor);
  op.arg("selfRef", selfRef).arg("other", other).arg("alpha", alpha);
  return op.build([alpha = scalarOf(alpha)](Views& v) {
    at::add_out(v["selfRef"], v["selfRef"], v["other"], alpha);
  });
}
FSIM_PHASE2(aclnnInplaceAdd)
