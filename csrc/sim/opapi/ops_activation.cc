// Backward of elementwise activations (yaml/ops/activation_backward.yaml):
// aclnnSiluBackward(gradOutput, self, gradInput),
// aclnnSigmoidBackward(gradOutput, output, gradInput),
// aclnnTanhBackward(gradOutput, output, gradInput),
// aclnnThresholdBackward(gradOutput, self, threshold, out).
// gradInput must have the broadcast shape of the two inputs; the values come
// from ATen's *_backward_out kernels (its promotion and cast rules included).
#include <ATen/ops/sigmoid_backward.h>
#include <ATen/ops/silu_backward.h>
#include <ATen/ops/tanh_backward.h>
#include <ATen/ops/threshold_backward.h>

#include "sim_op.h"
#include "aclnn/aclnnSigmoidBackward.h"
#include "aclnn/aclnnSiluBackward.h"
#include "aclnn/aclnnTanhBackward.h"
#include "aclnn/aclnnThresholdBackward.h"

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
