// Backward of elementwise activations (yaml/ops/activation_backward.yaml):
// aclnnSiluBackward(gradOutput, self, gradInput),
// aclnnSigmoidBackward(gradOutput, output, gradInput),
// aclnnTanhBackward(gradOutput, output, gradInput),
// aclnnThresholdBackward(gradOutput, self, threshold, out),
// aclnnMishBackward(gradOutput, self, gradInput),
// aclnnSoftplusBackward(gradOutput, self, beta, threshold, gradInput),
// aclnnLogSigmoidBackward(gradOutput, self, buffer, gradInput); and the
// forward activations mish, softplus and log-sigmoid: aclnnMish,
// aclnnSoftplus, aclnnLogSigmoidForward (whose `buffer` holds what ATen's
// CPU kernel keeps for the backward).
// gradInput must have the broadcast shape of the two inputs; the values come
// from ATen's *_backward_out kernels (its promotion and cast rules included).
#include <ATen/ops/log_sigmoid_backward.h>
#include <ATen/ops/log_sigmoid_forward.h>
#include <ATen/ops/mish.h>
#include <ATen/ops/mish_backward.h>
#include <ATen/ops/sigmoid_backward.h>
#include <ATen/ops/silu_backward.h>
#include <ATen/ops/softplus.h>
#include <ATen/ops/softplus_backward.h>
#include <ATen/ops/tanh_backward.h>
#include <ATen/ops/threshold_backward.h>

#include "sim_op.h"
#include "flagos/aclnn/aclnnLogSigmoidBackward.h"
#include "flagos/aclnn/aclnnLogSigmoidForward.h"
#include "flagos/aclnn/aclnnMish.h"
#include "flagos/aclnn/aclnnMishBackward.h"
#include "flagos/aclnn/aclnnSigmoidBackward.h"
#include "flagos/aclnn/aclnnSiluBackward.h"
#include "flagos/aclnn/aclnnSoftplus.h"
#include "flagos/aclnn/aclnnSoftplusBackward.h"
#include "flagos/aclnn/aclnnTanhBackward.h"
#include "flagos/aclnn/aclnnThresholdBackward.h"

using namespace fsim::op;

namespace {

bool broadcastOf(const aclTensor* out, const aclTensor* a, const aclTensor* b) {
  if (out == nullptr || a == nullptr || b == nullptr) return true;  // op.arg reports a nullptr
  const std::optional<std::vector<int64_t>> shape = broadcastDims({a, b});
  return shape.has_value() && *shape == out->viewDims;
}

template <typename Fn>
aclnnStatus backward(const char* name, const char* inputName, const aclTensor* gradOutput, const aclTensor* input,
                     aclTensor* gradInput, uint64_t* workspaceSize, aclOpExecutor** executor, DTypes dtypes, Fn fn) {
  Op op(name, workspaceSize, executor);
  op.arg("gradOutput", gradOutput, dtypes).arg(inputName, input, dtypes).arg("gradInput", gradInput, dtypes);
  op.require(broadcastOf(gradInput, gradOutput, input),
             "argument 'gradInput' must have the broadcast shape of 'gradOutput' and the input");
  return op.build([fn, inputName](Views& v) { fn(v["gradInput"], v["gradOutput"], v[inputName]); });
}

}  // namespace

#define FSIM_ACT_BACKWARD(api, input_name, aten_out)                                                        \
  aclnnStatus api##GetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* input_name,               \
                                    aclTensor* gradInput, uint64_t* workspaceSize, aclOpExecutor** executor) { \
    return backward(#api, #input_name, gradOutput, input_name, gradInput, workspaceSize, executor, kFloating, \
                    [](at::Tensor& gradInput, const at::Tensor& gradOutput, const at::Tensor& input) {       \
                      aten_out(gradInput, gradOutput, input);                                               \
                    });                                                                                     \
  }                                                                                                         \
  FSIM_PHASE2(api)

FSIM_ACT_BACKWARD(aclnnSiluBackward, self, at::silu_backward_out)
FSIM_ACT_BACKWARD(aclnnSigmoidBackward, output, at::sigmoid_backward_out)
FSIM_ACT_BACKWARD(aclnnTanhBackward, output, at::tanh_backward_out)

aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                   const aclScalar* threshold, aclTensor* out,
                                                   uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnThresholdBackward", workspaceSize, executor);
  op.arg("gradOutput", gradOutput, kNumeric).arg("self", self, kNumeric).arg("threshold", threshold);
  op.arg("out", out, kNumeric);
  op.require(broadcastOf(out, gradOutput, self),
             "argument 'out' must have the broadcast shape of 'gradOutput' and 'self'");
  return op.build([threshold = scalarOf(threshold)](Views& v) {
    at::threshold_backward_out(v["out"], v["gradOutput"], v["self"], threshold);
  });
}
FSIM_PHASE2(aclnnThresholdBackward)

aclnnStatus aclnnMishBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self, aclTensor* gradInput,
                                              uint64_t* workspaceSize, aclOpExecutor** executor) {
  return backward("aclnnMishBackward", "self", gradOutput, self, gradInput, workspaceSize, executor, kFloating,
                  [](at::Tensor& gradInput, const at::Tensor& gradOutput, const at::Tensor& self) {
                    gradInput.copy_(at::mish_backward(gradOutput, self));
                  });
}
FSIM_PHASE2(aclnnMishBackward)

aclnnStatus aclnnSoftplusBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                  const aclScalar* beta, const aclScalar* threshold,
                                                  aclTensor* gradInput, uint64_t* workspaceSize,
                                                  aclOpExecutor** executor) {
  Op op("aclnnSoftplusBackward", workspaceSize, executor);
  op.arg("gradOutput", gradOutput, kFloating).arg("self", self, kFloating).arg("beta", beta);
  op.arg("threshold", threshold).arg("gradInput", gradInput, kFloating);
  op.require(broadcastOf(gradInput, gradOutput, self),
             "argument 'gradInput' must have the broadcast shape of 'gradOutput' and 'self'");
  return op.build([beta = scalarOf(beta), threshold = scalarOf(threshold)](Views& v) {
    at::softplus_backward_out(v["gradInput"], v["gradOutput"], v["self"], beta, threshold);
  });
}
FSIM_PHASE2(aclnnSoftplusBackward)

aclnnStatus aclnnLogSigmoidBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                    const aclTensor* buffer, aclTensor* gradInput,
                                                    uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnLogSigmoidBackward", workspaceSize, executor);
  op.arg("gradOutput", gradOutput, kFloating).arg("self", self, kFloating).arg("buffer", buffer, kFloating);
  op.arg("gradInput", gradInput, kFloating);
  op.require(broadcastOf(gradInput, gradOutput, self),
             "argument 'gradInput' must have the broadcast shape of 'gradOutput' and 'self'");
  return op.build([](Views& v) {
    at::log_sigmoid_backward_out(v["gradInput"], v["gradOutput"], v["self"], v["buffer"]);
  });
}
FSIM_PHASE2(aclnnLogSigmoidBackward)

aclnnStatus aclnnMishGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* workspaceSize,
                                      aclOpExecutor** executor) {
  Op op("aclnnMish", workspaceSize, executor);
  op.arg("self", self, kFloating).arg("out", out, kFloating);
  return op.build([](Views& v) { at::mish_out(v["out"], v["self"]); });
}
FSIM_PHASE2(aclnnMish)

aclnnStatus aclnnSoftplusGetWorkspaceSize(const aclTensor* self, const aclScalar* beta, const aclScalar* threshold,
                                          aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnSoftplus", workspaceSize, executor);
  op.arg("self", self, kFloating).arg("beta", beta).arg("threshold", threshold).arg("out", out, kFloating);
  return op.build([beta = scalarOf(beta), threshold = scalarOf(threshold)](Views& v) {
    at::softplus_out(v["out"], v["self"], beta, threshold);
  });
}
FSIM_PHASE2(aclnnSoftplus)

aclnnStatus aclnnLogSigmoidForwardGetWorkspaceSize(const aclTensor* self, aclTensor* out, aclTensor* buffer,
                                                   uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnLogSigmoidForward", workspaceSize, executor);
  op.arg("self", self, kFloating).arg("out", out, kFloating).arg("buffer", buffer, kFloating);
  return op.build([](Views& v) { at::log_sigmoid_forward_out(v["out"], v["buffer"], v["self"]); });
}
FSIM_PHASE2(aclnnLogSigmoidForward)
