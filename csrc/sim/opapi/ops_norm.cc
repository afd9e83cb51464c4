// Softmax backward and normalization: aclnnSoftmaxBackward,
// aclnnLogSoftmaxBackward, aclnnLayerNorm, aclnnLayerNormBackward,
// aclnnGroupNorm, aclnnGroupNormBackward, aclnnRmsNorm.
#include <ATen/ops/_fused_rms_norm.h>
#include <ATen/ops/_log_softmax_backward_data.h>
#include <ATen/ops/_softmax_backward_data.h>
#include <ATen/ops/native_group_norm.h>
#include <ATen/ops/native_group_norm_backward.h>
#include <ATen/ops/native_layer_norm.h>
#include <ATen/ops/native_layer_norm_backward.h>

#include <array>

#include <optional>

#include "sim_op.h"
#include "flagos/aclnn/aclnnGroupNorm.h"
#include "flagos/aclnn/aclnnGroupNormBackward.h"
#include "flagos/aclnn/aclnnLayerNorm.h"
#include "flagos/aclnn/aclnnLayerNormBackward.h"
#include "flagos/aclnn/aclnnLogSoftmaxBackward.h"
#include "flagos/aclnn/aclnnRmsNorm.h"
#include "flagos/aclnn/aclnnSoftmaxBackward.h"

using namespace fsim::op;

namespace {

std::optional<at::Tensor> maybe(const at::Tensor& tensor) {
  return tensor.defined() ? std::optional<at::Tensor>(tensor.contiguous()) : std::nullopt;
}

// ATen's CPU norm backward kernels read some inputs as if they were
// contiguous; an ACLNN kernel honours strides, so the simulator packs them.
at::Tensor packed(const at::Tensor& tensor) { return tensor.contiguous(); }

// outputMask as ATen takes it; false where the gradient's output is absent.
std::array<bool, 3> maskOf(const aclBoolArray* mask, const aclTensor* a, const aclTensor* b, const aclTensor* c) {
  const std::vector<bool> values = boolsOf(mask);
  const aclTensor* outs[3] = {a, b, c};
  std::array<bool, 3> result{false, false, false};
  for (size_t i = 0; i < 3 && i < values.size(); ++i) result[i] = values[i] && outs[i] != nullptr;
  return result;
}

bool maskFits(const aclBoolArray* mask, const aclTensor* a, const aclTensor* b, const aclTensor* c) {
  if (mask == nullptr) return true;  // reported by op.arg
  const std::vector<bool> values = boolsOf(mask);
  const aclTensor* outs[3] = {a, b, c};
  if (values.size() != 3) return false;
  for (size_t i = 0; i < 3; ++i)
    if (values[i] && outs[i] == nullptr) return false;
  return true;
}

void copyIfDefined(at::Tensor& out, const at::Tensor& value) {
  if (out.defined() && value.defined()) out.copy_(value);
}

}  // namespace

aclnnStatus aclnnSoftmaxBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* output, int64_t dim,
                                                 aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnSoftmaxBackward", workspaceSize, executor);
  op.arg("gradOutput", gradOutput, kFloating).arg("output", output, kFloating).arg("out", out, kFloating);
  return op.build([dim](Views& v) {
    at::Tensor& grad_input = v["out"];
    at::_softmax_backward_data_out(grad_input, v["gradOutput"], v["output"], dim, grad_input.scalar_type());
  });
}
FSIM_PHASE2(aclnnSoftmaxBackward)

aclnnStatus aclnnLogSoftmaxBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* output,
                                                    int64_t dim, aclTensor* out, uint64_t* workspaceSize,
                                                    aclOpExecutor** executor) {
  Op op("aclnnLogSoftmaxBackward", workspaceSize, executor);
  op.arg("gradOutput", gradOutput, kFloating).arg("output", output, kFloating).arg("out", out, kFloating);
  return op.build([dim](Views& v) {
    at::Tensor& out = v["out"];
    at::_log_softmax_backward_data_out(out, v["gradOutput"], v["output"], dim, out.scalar_type());
  });
}
FSIM_PHASE2(aclnnLogSoftmaxBackward)

aclnnStatus aclnnLayerNormGetWorkspaceSize(const aclTensor* input, const aclIntArray* normalizedShape,
                                           const aclTensor* weightOptional, const aclTensor* biasOptional,
                                           double eps, aclTensor* out, aclTensor* meanOutOptional,
                                           aclTensor* rstdOutOptional, uint64_t* workspaceSize,
                                           aclOpExecutor** executor) {
  Op op("aclnnLayerNorm", workspaceSize, executor);
  op.arg("input", input, kFloating).arg("normalizedShape", normalizedShape)
      .optional("weightOptional", weightOptional, kFloating).optional("biasOptional", biasOptional, kFloating)
      .arg("out", out, kFloating).optional("meanOutOptional", meanOutOptional, kFloating)
      .optional("rstdOutOptional", rstdOutOptional, kFloating);
  return op.build([shape = intsOf(normalizedShape), eps](Views& v) {
    auto [y, mean, rstd] = at::native_layer_norm(v["input"], shape, maybe(v["weightOptional"]),
                                                 maybe(v["biasOptional"]), eps);
    v["out"].copy_(y);
    if (v["meanOutOptional"].defined()) v["meanOutOptional"].copy_(mean);
    if (v["rstdOutOptional"].defined()) v["rstdOutOptional"].copy_(rstd);
  });
}
FSIM_PHASE2(aclnnLayerNorm)

aclnnStatus aclnnGroupNormGetWorkspaceSize(const aclTensor* self, const aclTensor* gamma, const aclTensor* beta,
                                           int64_t N, int64_t C, int64_t HxW, int64_t group, double eps,
                                           aclTensor* out, aclTensor* meanOut, aclTensor* rstdOut,
                                           uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnGroupNorm", workspaceSize, executor);
  op.arg("self", self, kFloating).optional("gamma", gamma, kFloating).optional("beta", beta, kFloating)
      .arg("out", out, kFloating).arg("meanOut", meanOut, kFloating).arg("rstdOut", rstdOut, kFloating);
  op.require(group > 0 && C % group == 0, "C must be divisible by group");
  return op.build([N, C, HxW, group, eps](Views& v) {
    // CANN takes a non-contiguous self; ATen's CPU kernel reads it as contiguous.
    at::native_group_norm_out(v["out"], v["meanOut"], v["rstdOut"], packed(v["self"]), maybe(v["gamma"]),
                              maybe(v["beta"]), N, C, HxW, group, eps);
  });
}
FSIM_PHASE2(aclnnGroupNorm)

aclnnStatus aclnnLayerNormBackwardGetWorkspaceSize(const aclTensor* gradOut, const aclTensor* input,
                                                   const aclIntArray* normalizedShape, const aclTensor* mean,
                                                   const aclTensor* rstd, const aclTensor* weightOptional,
                                                   const aclTensor* biasOptional, const aclBoolArray* outputMask,
                                                   aclTensor* gradInputOut, aclTensor* gradWeightOut,
                                                   aclTensor* gradBiasOut, uint64_t* workspaceSize,
                                                   aclOpExecutor** executor) {
  Op op("aclnnLayerNormBackward", workspaceSize, executor);
  op.arg("gradOut", gradOut, kFloating).arg("input", input, kFloating).arg("normalizedShape", normalizedShape)
      .arg("mean", mean, kFloating).arg("rstd", rstd, kFloating).optional("weightOptional", weightOptional, kFloating)
      .optional("biasOptional", biasOptional, kFloating).arg("outputMask", outputMask)
      .optional("gradInputOut", gradInputOut, kFloating).optional("gradWeightOut", gradWeightOut, kFloating)
      .optional("gradBiasOut", gradBiasOut, kFloating);
  op.require(maskFits(outputMask, gradInputOut, gradWeightOut, gradBiasOut),
             "outputMask has 3 elements, and each true one needs its gradient output");
  return op.build([shape = intsOf(normalizedShape), mask = maskOf(outputMask, gradInputOut, gradWeightOut, gradBiasOut)](
                      Views& v) {
    auto [dx, dw, db] = at::native_layer_norm_backward(packed(v["gradOut"]), packed(v["input"]), shape,
                                                       packed(v["mean"]), packed(v["rstd"]),
                                                       maybe(v["weightOptional"]), maybe(v["biasOptional"]), mask);
    copyIfDefined(v["gradInputOut"], dx);
    copyIfDefined(v["gradWeightOut"], dw);
    copyIfDefined(v["gradBiasOut"], db);
  });
}
FSIM_PHASE2(aclnnLayerNormBackward)

aclnnStatus aclnnGroupNormBackwardGetWorkspaceSize(const aclTensor* gradOut, const aclTensor* input,
                                                   const aclTensor* mean, const aclTensor* rstd, const aclTensor* gamma,
                                                   int64_t N, int64_t C, int64_t HxW, int64_t group,
                                                   const aclBoolArray* outputMask, aclTensor* gradInput,
                                                   aclTensor* gradGammaOut, aclTensor* gradBetaOut,
                                                   uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnGroupNormBackward", workspaceSize, executor);
  op.arg("gradOut", gradOut, kFloating).arg("input", input, kFloating).arg("mean", mean, kFloating)
      .arg("rstd", rstd, kFloating).optional("gamma", gamma, kFloating).arg("outputMask", outputMask)
      .optional("gradInput", gradInput, kFloating).optional("gradGammaOut", gradGammaOut, kFloating)
      .optional("gradBetaOut", gradBetaOut, kFloating);
  op.require(maskFits(outputMask, gradInput, gradGammaOut, gradBetaOut),
             "outputMask has 3 elements, and each true one needs its gradient output");
  op.require(group > 0 && C % group == 0, "C must be divisible by group");
  return op.build([N, C, HxW, group, mask = maskOf(outputMask, gradInput, gradGammaOut, gradBetaOut)](Views& v) {
    auto [dx, dgamma, dbeta] = at::native_group_norm_backward(packed(v["gradOut"]), packed(v["input"]),
                                                              packed(v["mean"]), packed(v["rstd"]),
                                                              maybe(v["gamma"]), N, C, HxW, group, mask);
    copyIfDefined(v["gradInput"], dx);
    copyIfDefined(v["gradGammaOut"], dgamma);
    copyIfDefined(v["gradBetaOut"], dbeta);
  });
}
FSIM_PHASE2(aclnnGroupNormBackward)

aclnnStatus aclnnRmsNormGetWorkspaceSize(const aclTensor* x, const aclTensor* gamma, double epsilon, const aclTensor* yOut,
                                         const aclTensor* rstdOut, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnRmsNorm", workspaceSize, executor);
  // gamma is required (as in CANN): its rank says how many trailing dims are normalized.
  op.arg("x", x, kFloating).arg("gamma", gamma, kFloating).arg("yOut", yOut, kFloating)
      .arg("rstdOut", rstdOut, kFloating);
  const int64_t rank = x == nullptr ? 0 : static_cast<int64_t>(x->viewDims.size());
  const int64_t normalized = gamma == nullptr ? 1 : static_cast<int64_t>(gamma->viewDims.size());
  op.require(normalized >= 1 && normalized <= rank, "gamma must have 1 to x.dim() dims");
  return op.build([epsilon, rank, normalized](Views& v) {
    const at::Tensor& x = v["x"];
    std::vector<int64_t> shape(x.sizes().begin() + (rank - normalized), x.sizes().end());
    auto [y, rstd] = at::_fused_rms_norm(x, shape, maybe(v["gamma"]), epsilon);
    v["yOut"].copy_(y);
    v["rstdOut"].copy_(rstd);
  });
}
FSIM_PHASE2(aclnnRmsNorm)
