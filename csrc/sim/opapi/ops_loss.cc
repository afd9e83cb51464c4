// Pointwise losses: aclnnMseLoss and aclnnMseLossBackward (ops-nn
// loss/mse_loss, loss/mse_loss_grad_v2). Their docs: float, float16 and
// bfloat16 only; self and target broadcast; reduction 0 (none), 1 (mean) or
// 2 (sum), anything else ACLNN_ERR_PARAM_INVALID; with a reduction, out is
// 0-dim; the backward's gradOutput and target must have self's dtype, and its
// out the broadcast shape of gradOutput, self and target.
#include <ATen/ops/mse_loss.h>
#include <ATen/ops/mse_loss_backward.h>

#include <optional>
#include <vector>

#include "sim_op.h"
#include "flagos/aclnn/aclnnMseLoss.h"
#include "flagos/aclnn/aclnnMseLossBackward.h"

using namespace fsim::op;

namespace {

constexpr DTypes kLossTypes{ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
constexpr int64_t kMaxRank = 8;

// The broadcast shape of `tensors`, or nullopt when they do not broadcast or
// one has more than 8 dimensions (CANN's limit for these operators).
std::optional<std::vector<int64_t>> lossShape(std::initializer_list<const aclTensor*> tensors) {
  for (const aclTensor* t : tensors) {
    if (t != nullptr && static_cast<int64_t>(t->viewDims.size()) > kMaxRank) return std::nullopt;
  }
  return broadcastDims(tensors);
}

}  // namespace

aclnnStatus aclnnMseLossGetWorkspaceSize(const aclTensor* self, const aclTensor* target, int64_t reduction,
                                         aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnMseLoss", workspaceSize, executor);
  op.arg("self", self, kLossTypes).arg("target", target, kLossTypes).arg("out", out, kLossTypes);
  op.require(reduction >= 0 && reduction <= 2, "reduction must be 0 (none), 1 (mean) or 2 (sum)");
  const std::optional<std::vector<int64_t>> shape = lossShape({self, target});
  op.require(shape.has_value(), "self and target must broadcast, with at most 8 dimensions");
  if (shape.has_value() && out != nullptr) {
    op.require(reduction == 0 ? out->viewDims == *shape : out->viewDims.empty(),
               reduction == 0 ? "argument 'out' must have the broadcast shape of self and target"
                              : "argument 'out' must be 0-dim when reduction is mean or sum");
  }
  return op.build([reduction](Views& v) {
    at::Tensor result = at::mse_loss(v["self"].to(v["out"].scalar_type()), v["target"].to(v["out"].scalar_type()),
                                     reduction);
    v["out"].copy_(result);
  });
}
FSIM_PHASE2(aclnnMseLoss)

aclnnStatus aclnnMseLossBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                 const aclTensor* target, int64_t reduction, aclTensor* out,
                                                 uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnMseLossBackward", workspaceSize, executor);
  op.arg("gradOutput", gradOutput, kLossTypes).arg("self", self, kLossTypes).arg("target", target, kLossTypes);
  op.arg("out", out, kLossTypes);
  op.require(reduction >= 0 && reduction <= 2, "reduction must be 0 (none), 1 (mean) or 2 (sum)");
  op.require(gradOutput == nullptr || self == nullptr || target == nullptr ||
                 (gradOutput->dtype == self->dtype && target->dtype == self->dtype),
             "gradOutput and target must have self's dtype");
  const std::optional<std::vector<int64_t>> shape = lossShape({gradOutput, self, target});
  op.require(shape.has_value(), "gradOutput, self and target must broadcast, with at most 8 dimensions");
  if (shape.has_value() && out != nullptr) {
    op.require(out->viewDims == *shape, "argument 'out' must have the broadcast shape of gradOutput, self and target");
  }
  return op.build([reduction](Views& v) {
    const at::Tensor& self = v["self"];
    at::Tensor grad = at::mse_loss_backward(v["gradOutput"], self.expand(v["out"].sizes()),
                                            v["target"].expand(v["out"].sizes()), reduction);
    v["out"].copy_(grad);
  });
}
FSIM_PHASE2(aclnnMseLossBackward)
