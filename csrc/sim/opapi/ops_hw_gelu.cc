// GELU forward and backward in both approximate modes: aclnnGeluV2, aclnnGeluBackwardV2.
#include <ATen/ops/gelu.h>
#include <ATen/ops/gelu_backward.h>

#include <string>

#include "sim_op.h"
#include "flagos/aclnn/aclnnGeluBackwardV2.h"
#include "flagos/aclnn/aclnnGeluV2.h"

using namespace fsim::op;

aclnnStatus aclnnGeluV2GetWorkspaceSize(const aclTensor* x, int64_t approximate, aclTensor* y,
                                        uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnGeluV2", workspaceSize, executor);
  op.arg("x", x, kFloating).arg("y", y, kFloating);
  op.require(approximate == 0 || approximate == 1, "approximate must be 0 (none) or 1 (tanh)");
  return op.build([mode = approximate == 1 ? "tanh" : "none"](Views& v) {
    at::gelu_out(v["y"], v["x"], mode);
  });
}
FSIM_PHASE2(aclnnGeluV2)

aclnnStatus aclnnGeluBackwardV2GetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                char* approximate, aclTensor* gradInput,
                                                uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnGeluBackwardV2", workspaceSize, executor);
  op.arg("gradOutput", gradOutput, kFloating).arg("self", self, kFloating);
  op.arg("gradInput", gradInput, kFloating);
  const std::string mode = approximate != nullptr ? approximate : "";
  op.require(mode == "none" || mode == "tanh", "approximate must be \"none\" or \"tanh\"");
  return op.build([mode](Views& v) {
    at::gelu_backward_out(v["gradInput"], v["gradOutput"], v["self"], mode);
  });
}
FSIM_PHASE2(aclnnGeluBackwardV2)
