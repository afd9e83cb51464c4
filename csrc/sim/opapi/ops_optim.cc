// Optimizer steps: aclnnApplyAdamWV2.
#include <ATen/ops/_fused_adamw.h>

#include <vector>

#include "sim_op.h"
#include "flagos/aclnn/aclnnApplyAdamWV2.h"

using namespace fsim::op;

namespace {
inline constexpr DTypes kAdamDtypes{ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
inline constexpr DTypes kStepDtypes{ACL_FLOAT, ACL_INT64};

bool adam_shapes_match(const aclTensor* a, const aclTensor* b) { return !a || !b || a->viewDims == b->viewDims; }
bool adam_dtypes_match(const aclTensor* a, const aclTensor* b) { return !a || !b || a->dtype == b->dtype; }
}  // namespace

// CANN's checks: var, m, v, grad (and maxGradNorm under amsgrad) of one
// float dtype and one shape; a 1-element step of float32 or int64.
aclnnStatus aclnnApplyAdamWV2GetWorkspaceSize(aclTensor* varRef, aclTensor* mRef, aclTensor* vRef,
                                              aclTensor* maxGradNormOptionalRef, const aclTensor* grad,
                                              const aclTensor* step, float lr, float beta1, float beta2,
                                              float weightDecay, float eps, bool amsgrad, bool maximize,
                                              uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnApplyAdamWV2", workspaceSize, executor);
  op.arg("varRef", varRef, kAdamDtypes).arg("mRef", mRef, kAdamDtypes).arg("vRef", vRef, kAdamDtypes);
  if (amsgrad) {
    op.arg("maxGradNormOptionalRef", maxGradNormOptionalRef, kAdamDtypes);
  } else {
    op.optional("maxGradNormOptionalRef", maxGradNormOptionalRef, kAdamDtypes);
  }
  op.arg("grad", grad, kAdamDtypes).arg("step", step, kStepDtypes);
  const aclTensor* amsgrad_state = amsgrad ? maxGradNormOptionalRef : nullptr;
  const aclTensor* others[] = {mRef, vRef, grad, amsgrad_state};
  for (const aclTensor* t : others) {
    op.require(adam_dtypes_match(varRef, t), "varRef, mRef, vRef, grad and maxGradNormOptionalRef must have one dtype");
    op.require(adam_shapes_match(varRef, t), "varRef, mRef, vRef, grad and maxGradNormOptionalRef must have one shape");
  }
  op.require(!varRef || (!varRef->viewDims.empty() && varRef->viewDims.size() <= 8), "varRef must have 1 to 8 dims");
  int64_t step_elements = 1;
  if (step) {
    for (int64_t d : step->viewDims) step_elements *= d;
  }
  op.require(step_elements == 1, "step must have one element");
  return op.build([=](Views& v) {
    // ATen's CPU kernel walks its tensors' elements in memory order: it runs
    // on contiguous copies, written back to the (possibly strided) views.
    std::vector<at::Tensor> states = {v["varRef"], v["mRef"], v["vRef"]};
    if (amsgrad) states.push_back(v["maxGradNormOptionalRef"]);
    std::vector<at::Tensor> work;
    for (const at::Tensor& t : states) work.push_back(t.contiguous());
    std::vector<at::Tensor> max_exp_avg_sqs;
    if (amsgrad) max_exp_avg_sqs.push_back(work[3]);
    at::_fused_adamw_({work[0]}, {v["grad"].contiguous()}, {work[1]}, {work[2]}, max_exp_avg_sqs,
                      {v["step"].to(at::kFloat).reshape({})}, lr, beta1, beta2, weightDecay, eps, amsgrad, maximize,
                      std::nullopt, std::nullopt);
    for (size_t i = 0; i < states.size(); ++i) {
      if (!work[i].is_same(states[i])) states[i].copy_(work[i]);
    }
  });
}
FSIM_PHASE2(aclnnApplyAdamWV2)
