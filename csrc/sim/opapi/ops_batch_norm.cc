// Batch normalization: aclnnBatchNorm, aclnnBatchNormBackward, as CANN's
// ops-nn (norm/batch_norm_v3, norm/batch_norm_grad_v3) has them for Atlas
// A2/A3:
// - dtypes FLOAT, FLOAT16, BFLOAT16; input 2 to 8 dims, channels in dim 1;
// - weight, bias, runningMean, runningVar optional, each 1-d of C elements;
// - in training saveMean and saveInvstd are required ([C]); aclnnBatchNorm
//   writes there the batch mean and the batch's biased VARIANCE (the A2/A3
//   docs: "saveInvstd表示input的方差"), and updates runningMean/runningVar
//   with momentum (the variance unbiased, as ATen);
// - aclnnBatchNormBackward reads saveInvstd as that variance (it passes it
//   to BNTrainingUpdateGrad with eps), and in inference uses the running
//   statistics; weight, running and saved statistics have gradOut's dtype;
//   a gradient whose outputMask element is true must be given (NULLPTR).
// The statistics are computed in float for half inputs, as CANN's kernels do.
#include <ATen/ops/empty.h>
#include <ATen/ops/native_batch_norm.h>
#include <ATen/ops/native_batch_norm_backward.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/var.h>

#include <array>
#include <limits>
#include <optional>
#include <vector>

#include "sim_op.h"
#include "flagos/aclnn/aclnnBatchNorm.h"
#include "flagos/aclnn/aclnnBatchNormBackward.h"

using namespace fsim::op;

namespace {

constexpr DTypes kBatchNormTypes{ACL_FLOAT, ACL_FLOAT16, ACL_BF16};

size_t bnRankOf(const aclTensor* t) { return t == nullptr ? 0 : t->viewDims.size(); }

// A 1-d tensor of `channels` elements, or absent.
bool channelVector(const aclTensor* t, int64_t channels) {
  return t == nullptr || (t->viewDims.size() == 1 && t->viewDims[0] == channels);
}

bool sameDims(const aclTensor* a, const aclTensor* b) {
  return a == nullptr || b == nullptr || a->viewDims == b->viewDims;
}

bool bnSameDtype(const aclTensor* t, const aclTensor* reference) {
  return t == nullptr || reference == nullptr || t->dtype == reference->dtype;
}

// The dims reduced for per-channel statistics: all but dim 1.
std::vector<int64_t> reductionDims(int64_t rank) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < rank; ++d) dims.push_back(d);
  return dims;
}

at::Tensor asFloat(const at::Tensor& t) { return t.defined() ? t.to(at::kFloat).contiguous() : t; }
std::optional<at::Tensor> maybeFloat(const at::Tensor& t) {
  return t.defined() ? std::optional<at::Tensor>(asFloat(t)) : std::nullopt;
}

}  // namespace

aclnnStatus aclnnBatchNormGetWorkspaceSize(const aclTensor* input, const aclTensor* weight, const aclTensor* bias,
                                           aclTensor* runningMean, aclTensor* runningVar, bool training,
                                           double momentum, double eps, aclTensor* output, aclTensor* saveMean,
                                           aclTensor* saveInvstd, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnBatchNorm", workspaceSize, executor);
  op.arg("input", input, kBatchNormTypes).optional("weight", weight, kBatchNormTypes)
      .optional("bias", bias, kBatchNormTypes).optional("runningMean", runningMean, kBatchNormTypes)
      .optional("runningVar", runningVar, kBatchNormTypes).arg("output", output, kBatchNormTypes);
  if (training) {
    op.arg("saveMean", saveMean, kBatchNormTypes).arg("saveInvstd", saveInvstd, kBatchNormTypes);
  } else {
    op.optional("saveMean", saveMean, kBatchNormTypes).optional("saveInvstd", saveInvstd, kBatchNormTypes);
  }
  const size_t rank = bnRankOf(input);
  op.require(input == nullptr || (rank >= 2 && rank <= 8), "input must have 2 to 8 dims");
  op.require(sameDims(input, output), "output must have input's shape");
  const int64_t channels = rank >= 2 ? input->viewDims[1] : 0;
  op.require(channelVector(weight, channels) && channelVector(bias, channels) &&
                 channelVector(runningMean, channels) && channelVector(runningVar, channels),
             "weight, bias, runningMean and runningVar must be 1-d with input's channels");
  op.require(!training || (channelVector(saveMean, channels) && channelVector(saveInvstd, channels)),
             "in training saveMean and saveInvstd must be 1-d with input's channels");
  op.require(training || (runningMean != nullptr && runningVar != nullptr),
             "inference needs runningMean and runningVar");
  return op.build([training, momentum, eps, rank](Views& v) {
    const at::Tensor x = asFloat(v["input"]);
    if (x.numel() == 0) {
      // CANN's empty-input path: saveMean 0, saveInvstd NaN, nothing else.
      if (v["saveMean"].defined()) v["saveMean"].fill_(0);
      if (v["saveInvstd"].defined()) v["saveInvstd"].fill_(std::numeric_limits<double>::quiet_NaN());
      return;
    }
    at::Tensor& rm = v["runningMean"];
    at::Tensor& rv = v["runningVar"];
    std::optional<at::Tensor> mean = maybeFloat(rm), var = maybeFloat(rv);
    auto [y, batchMean, invstd] =
        at::native_batch_norm(x, maybeFloat(v["weight"]), maybeFloat(v["bias"]), mean, var, training, momentum, eps);
    v["output"].copy_(y);
    if (!training) return;
    if (rm.defined()) rm.copy_(*mean);  // updated with momentum by ATen
    if (rv.defined()) rv.copy_(*var);
    v["saveMean"].copy_(batchMean);
    // Atlas A2/A3: the batch's biased variance, not its inverse standard deviation.
    v["saveInvstd"].copy_(at::var(x, reductionDims(static_cast<int64_t>(rank)), /*unbiased=*/false));
  });
}
FSIM_PHASE2(aclnnBatchNorm)

aclnnStatus aclnnBatchNormBackwardGetWorkspaceSize(const aclTensor* gradOut, const aclTensor* input,
                                                   const aclTensor* weight, const aclTensor* runningMean,
                                                   const aclTensor* runningVar, const aclTensor* saveMean,
                                                   const aclTensor* saveInvstd, bool training, double eps,
                                                   const aclBoolArray* outputMask, aclTensor* gradInput,
                                                   aclTensor* gradWeight, aclTensor* gradBias, uint64_t* workspaceSize,
                                                   aclOpExecutor** executor) {
  Op op("aclnnBatchNormBackward", workspaceSize, executor);
  op.arg("gradOut", gradOut, kBatchNormTypes).arg("input", input, kBatchNormTypes)
      .optional("weight", weight, kBatchNormTypes).optional("runningMean", runningMean, kBatchNormTypes)
      .optional("runningVar", runningVar, kBatchNormTypes).optional("saveMean", saveMean, kBatchNormTypes)
      .optional("saveInvstd", saveInvstd, kBatchNormTypes).arg("outputMask", outputMask);
  const std::vector<bool> mask = boolsOf(outputMask);
  const bool maskOk = outputMask == nullptr || mask.size() == 3;
  op.require(maskOk, "outputMask must have 3 elements");
  const aclTensor* grads[3] = {gradInput, gradWeight, gradBias};
  const char* names[3] = {"gradInput", "gradWeight", "gradBias"};
  for (size_t i = 0; i < 3; ++i) {
    // A gradient that outputMask asks for must be given (ACLNN_ERR_PARAM_NULLPTR).
    if (maskOk && i < mask.size() && mask[i]) {
      op.arg(names[i], grads[i], kBatchNormTypes);
    } else {
      op.optional(names[i], grads[i], kBatchNormTypes);
    }
  }
  const size_t rank = bnRankOf(input);
  op.require(input == nullptr || (rank >= 2 && rank <= 8), "input must have 2 to 8 dims");
  op.require(sameDims(input, gradOut) && sameDims(input, gradInput), "gradOut and gradInput must have input's shape");
  op.require(bnSameDtype(input, gradOut) && bnSameDtype(gradInput, gradOut), "input, gradOut and gradInput must have one dtype");
  const int64_t channels = rank >= 2 ? input->viewDims[1] : 0;
  op.require(channelVector(weight, channels) && channelVector(runningMean, channels) &&
                 channelVector(runningVar, channels) && channelVector(gradWeight, channels) &&
                 channelVector(gradBias, channels),
             "weight, runningMean, runningVar, gradWeight and gradBias must be 1-d with input's channels");
  op.require(bnSameDtype(weight, gradOut) && bnSameDtype(runningMean, gradOut) && bnSameDtype(runningVar, gradOut) &&
                 bnSameDtype(saveMean, gradOut) && bnSameDtype(saveInvstd, gradOut),
             "weight, runningMean, runningVar, saveMean and saveInvstd must have gradOut's dtype (Atlas A2/A3)");
  op.require(!training || (saveMean != nullptr && saveInvstd != nullptr && channelVector(saveMean, channels) &&
                           channelVector(saveInvstd, channels)),
             "in training saveMean and saveInvstd must be 1-d with input's channels");
  op.require(training || (runningMean != nullptr && runningVar != nullptr),
             "inference needs runningMean and runningVar");
  std::array<bool, 3> wanted{false, false, false};
  for (size_t i = 0; i < 3 && i < mask.size(); ++i) wanted[i] = mask[i] && grads[i] != nullptr;
  return op.build([training, eps, wanted](Views& v) {
    const at::Tensor x = asFloat(v["input"]);
    std::optional<at::Tensor> invstd;
    if (training) {
      // saveInvstd holds the batch variance (Atlas A2/A3): ATen wants 1/sqrt(var + eps).
      invstd = at::rsqrt(asFloat(v["saveInvstd"]) + eps);
    }
    auto [dx, dw, db] = at::native_batch_norm_backward(
        asFloat(v["gradOut"]), x, maybeFloat(v["weight"]), maybeFloat(v["runningMean"]),
        maybeFloat(v["runningVar"]), training ? maybeFloat(v["saveMean"]) : std::nullopt, invstd, training, eps,
        wanted);
    if (wanted[0]) v["gradInput"].copy_(dx);
    if (wanted[1]) v["gradWeight"].copy_(dw);
    if (wanted[2]) v["gradBias"].copy_(db);
  });
}
FSIM_PHASE2(aclnnBatchNormBackward)
