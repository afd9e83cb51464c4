// Optimizer steps: aclnnFusedAdamw.
#include <ATen/ops/_fused_adamw.h>

#include <optional>
#include <vector>

#include "sim_op.h"
#include "flagos/aclnn/aclnnFusedAdamw.h"

using namespace fsim::op;

namespace {
inline constexpr DTypes kAdamDtypes{ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
inline constexpr DTypes kStepDtypes{ACL_FLOAT, ACL_INT64};

size_t count(const aclTensorList* list) { return list ? list->tensors.size() : 0; }

// Whether every tensor of `list` has its first one's dtype.
bool one_dtype(const aclTensorList* list) {
  if (!list || list->tensors.empty() || !list->tensors[0]) return true;  // op.arg reports it
  for (const aclTensor* t : list->tensors) {
    if (t && t->dtype != list->tensors[0]->dtype) return false;
  }
  return true;
}

bool one_element_each(const aclTensorList* list) {
  if (!list) return true;
  for (const aclTensor* t : list->tensors) {
    if (t && viewElements(t) != 1) return false;
  }
  return true;
}

bool dims_1_to_8(const aclTensorList* list) {
  if (!list) return true;
  for (const aclTensor* t : list->tensors) {
    if (t && (t->viewDims.empty() || t->viewDims.size() > 8)) return false;
  }
  return true;
}

// CANN treats an empty optional tensor as an absent one.
const aclTensor* unless_empty(const aclTensor* t) { return t && viewElements(t) == 0 ? nullptr : t; }
}  // namespace

// CANN's checks: lists of one length (not empty); params, grads, exp_avgs,
// exp_avg_sqs (and max_exp_avg_sqs) of one float dtype and, index by index,
// one shape of 1 to 8 dims; 1-element steps of one dtype, float32 or int64;
// max_exp_avg_sqs under amsgrad; lr, betas and weight decay >= 0.
aclnnStatus aclnnFusedAdamwGetWorkspaceSize(const aclTensorList* paramsRef, const aclTensorList* grads,
                                            const aclTensorList* expAvgsRef, const aclTensorList* expAvgSqsRef,
                                            const aclTensorList* maxExpAvgSqsRef, const aclTensorList* stateSteps,
                                            const aclTensor* gradScaleOptional, const aclTensor* foundInfOptional,
                                            double lr, double beta1, double beta2, double weightDecay, double eps,
                                            bool amsgrad, bool maximize, uint64_t* workspaceSize,
                                            aclOpExecutor** executor) {
  Op op("aclnnFusedAdamw", workspaceSize, executor);
  op.arg("paramsRef", paramsRef, kAdamDtypes).arg("grads", grads, kAdamDtypes);
  op.arg("expAvgsRef", expAvgsRef, kAdamDtypes).arg("expAvgSqsRef", expAvgSqsRef, kAdamDtypes);
  op.optional("maxExpAvgSqsRef", maxExpAvgSqsRef, kAdamDtypes).arg("stateSteps", stateSteps, kStepDtypes);
  gradScaleOptional = unless_empty(gradScaleOptional);
  foundInfOptional = unless_empty(foundInfOptional);
  op.optional("gradScaleOptional", gradScaleOptional, DTypes{ACL_FLOAT});
  op.optional("foundInfOptional", foundInfOptional, DTypes{ACL_FLOAT});
  op.require(lr >= 0 && beta1 >= 0 && beta2 >= 0 && weightDecay >= 0,
             "lr, beta1, beta2 and weightDecay must be >= 0");
  op.require(!amsgrad || maxExpAvgSqsRef, "maxExpAvgSqsRef is required when amsgrad is true");
  const size_t n = count(paramsRef);
  op.require(n > 0, "paramsRef must not be empty");
  op.require(same_layout({paramsRef, grads, expAvgsRef, expAvgSqsRef, maxExpAvgSqsRef}) && count(stateSteps) == n,
             "every list must have as many tensors as paramsRef, and element i of grads, expAvgsRef, expAvgSqsRef "
             "and maxExpAvgSqsRef the shape and dtype of paramsRef[i]");
  op.require(one_dtype(paramsRef), "paramsRef must have one dtype");
  op.require(one_dtype(stateSteps), "stateSteps must have one dtype");
  op.require(dims_1_to_8(paramsRef), "each of paramsRef must have 1 to 8 dims");
  op.require(one_element_each(stateSteps), "each of stateSteps must have one element");
  const bool scaled = gradScaleOptional != nullptr;
  const bool checks_inf = foundInfOptional != nullptr;
  return op.build([=](Views& v) {
    if (checks_inf && v["foundInfOptional"].item<float>() == 1.0f) return;
    const std::optional<at::Tensor> grad_scale =
        scaled ? std::optional<at::Tensor>(v["gradScaleOptional"]) : std::nullopt;
    std::vector<at::Tensor>& params = v.list("paramsRef");
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i].numel() == 0) continue;  // CANN leaves empty tensors out of the launch
      // ATen's CPU kernel walks memory in order and stores the unscaled
      // gradient: it runs on contiguous copies; the gradient's is dropped
      // (an input of CANN's operator), the states' are written back.
      std::vector<at::Tensor> states = {params[i], v.list("expAvgsRef")[i], v.list("expAvgSqsRef")[i]};
      if (amsgrad) states.push_back(v.list("maxExpAvgSqsRef")[i]);
      std::vector<at::Tensor> work;
      for (const at::Tensor& t : states) work.push_back(t.contiguous().clone());
      std::vector<at::Tensor> max_exp_avg_sqs;
      if (amsgrad) max_exp_avg_sqs.push_back(work[3]);
      at::_fused_adamw_({work[0]}, {v.list("grads")[i].contiguous().clone()}, {work[1]}, {work[2]}, max_exp_avg_sqs,
                        {v.list("stateSteps")[i].to(at::kFloat).reshape({})}, lr, beta1, beta2, weightDecay, eps,
                        amsgrad, maximize, grad_scale, std::nullopt);
      for (size_t k = 0; k < states.size(); ++k) states[k].copy_(work[k]);
    }
  });
}
FSIM_PHASE2(aclnnFusedAdamw)
