// Convolution: aclnnConvolution and aclnnConvolutionBackward
// (hicann/ops-nn conv/convolution_forward, conv/convolution_backward).
//
// Dtypes are those CANN's docs list for Atlas A2/A3: FLOAT, FLOAT16 and
// BFLOAT16 (HIFLOAT8 and FLOAT8_E4M3FN are Ascend 950 only; no DOUBLE).
// Half and bfloat16 operands are multiplied and accumulated in float, as
// the cube unit does, and each result is rounded once.
#include <ATen/ops/convolution.h>
#include <ATen/ops/convolution_backward.h>

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include "sim_op.h"
#include "flagos/aclnn/aclnnConvolution.h"
#include "flagos/aclnn/aclnnConvolutionBackward.h"

using namespace fsim::op;

namespace {

constexpr DTypes kConvTypes{ACL_FLOAT, ACL_FLOAT16, ACL_BF16};

int64_t rankOf(const aclTensor* t) { return t == nullptr ? -1 : static_cast<int64_t>(t->viewDims.size()); }

int64_t dimOf(const aclTensor* t, int64_t d) {
  return t == nullptr || d < 0 || d >= rankOf(t) ? -1 : t->viewDims[d];
}

bool allAtLeast(const std::vector<int64_t>& values, int64_t low) {
  for (const int64_t v : values)
    if (v < low) return false;
  return true;
}

bool sameDtype(const aclTensor* a, const aclTensor* b) { return a == nullptr || b == nullptr || a->dtype == b->dtype; }

// The geometry both operators check: ranks, the arrays' lengths and values,
// groups, and the channels of input and weight.
struct Geometry {
  std::vector<int64_t> stride, padding, dilation, outputPadding;
  int64_t spatial = 0;

  Geometry(const aclTensor* input, const aclIntArray* s, const aclIntArray* p, const aclIntArray* d,
           const aclIntArray* op)
      : stride(intsOf(s)), padding(intsOf(p)), dilation(intsOf(d)), outputPadding(intsOf(op)),
        spatial(rankOf(input) - 2) {}

  void check(Op& op, const aclTensor* input, const aclTensor* weight, bool transposed, int64_t groups) const {
    op.require(rankOf(input) >= 3 && rankOf(input) <= 5, "input must have 3 to 5 dims (NCL, NCHW or NCDHW)");
    op.require(rankOf(weight) == rankOf(input), "weight must have the rank of input");
    op.require(static_cast<int64_t>(stride.size()) == spatial && allAtLeast(stride, 1),
               "stride must have one value > 0 per spatial dim");
    // CANN also takes 4 values for conv2d (and 2 for a forward conv1d); the
    // simulator models one value per spatial dim, which is what ATen passes.
    op.require(static_cast<int64_t>(padding.size()) == spatial && allAtLeast(padding, 0),
               "padding must have one value >= 0 per spatial dim");
    op.require(static_cast<int64_t>(dilation.size()) == spatial && allAtLeast(dilation, 1),
               "dilation must have one value > 0 per spatial dim");
    if (transposed) {
      bool fits = static_cast<int64_t>(outputPadding.size()) == spatial && allAtLeast(outputPadding, 0);
      for (size_t i = 0; fits && i < outputPadding.size(); ++i)
        fits = outputPadding[i] < std::max(stride[i], dilation[i]);
      op.require(fits, "outputPadding must have one value per spatial dim, >= 0 and < its stride or dilation");
    }
    op.require(groups >= 1 && groups <= 65535, "groups must be in [1, 65535]");
    if (rankOf(input) >= 3 && rankOf(weight) == rankOf(input) && groups >= 1) {
      const bool channels = transposed ? dimOf(weight, 0) == dimOf(input, 1) && dimOf(input, 1) % groups == 0
                                       : dimOf(weight, 1) * groups == dimOf(input, 1);
      op.require(channels, transposed ? "weight's dim 0 must equal input's channels, a multiple of groups"
                                      : "groups * weight's dim 1 must equal input's channels");
    }
  }

  // The output's sizes, as CANN infers them (the doc's formulas).
  std::vector<int64_t> outputSizes(const aclTensor* input, const aclTensor* weight, bool transposed,
                                   int64_t groups) const {
    std::vector<int64_t> sizes{dimOf(input, 0), transposed ? dimOf(weight, 1) * groups : dimOf(weight, 0)};
    for (int64_t i = 0; i < spatial && i < static_cast<int64_t>(stride.size()) &&
                        i < static_cast<int64_t>(padding.size()) && i < static_cast<int64_t>(dilation.size());
         ++i) {
      const int64_t in = dimOf(input, i + 2), k = dimOf(weight, i + 2);
      if (transposed) {
        const int64_t extra = i < static_cast<int64_t>(outputPadding.size()) ? outputPadding[i] : 0;
        sizes.push_back((in - 1) * stride[i] - 2 * padding[i] + dilation[i] * (k - 1) + extra + 1);
      } else {
        sizes.push_back((in + 2 * padding[i] - dilation[i] * (k - 1) - 1) / stride[i] + 1);
      }
    }
    return sizes;
  }
};

bool sizesAre(const aclTensor* t, const std::vector<int64_t>& sizes) {
  return t == nullptr || t->viewDims == sizes;
}

bool reduced(at::ScalarType type) { return type == at::kHalf || type == at::kBFloat16; }

// Operands as the cube unit reads them: half and bfloat16 widened to float.
at::Tensor widened(const at::Tensor& t) {
  return t.defined() && reduced(t.scalar_type()) ? t.to(at::kFloat) : t;
}

void copyDefined(at::Tensor& out, const at::Tensor& value) {
  if (out.defined() && value.defined()) out.copy_(value);
}

}  // namespace

aclnnStatus aclnnConvolutionGetWorkspaceSize(const aclTensor* input, const aclTensor* weight, const aclTensor* bias,
                                             const aclIntArray* stride, const aclIntArray* padding,
                                             const aclIntArray* dilation, bool transposed,
                                             const aclIntArray* outputPadding, const int64_t groups,
                                             aclTensor* output, int8_t cubeMathType, uint64_t* workspaceSize,
                                             aclOpExecutor** executor) {
  Op op("aclnnConvolution", workspaceSize, executor);
  op.arg("input", input, kConvTypes).arg("weight", weight, kConvTypes).optional("bias", bias, kConvTypes)
      .arg("stride", stride).arg("padding", padding).arg("dilation", dilation).arg("outputPadding", outputPadding)
      .arg("output", output, kConvTypes);
  const Geometry g(input, stride, padding, dilation, outputPadding);
  g.check(op, input, weight, transposed, groups);
  op.require(sameDtype(input, weight) && sameDtype(input, bias) && sameDtype(input, output),
             "input, weight, bias and output must have one dtype");
  op.require(bias == nullptr || (rankOf(bias) == 1 && dimOf(bias, 0) == dimOf(output, 1)),
             "bias must be 1-D with one value per output channel");
  op.require(cubeMathType >= 0 && cubeMathType <= 3, "cubeMathType must be 0 to 3");
  if (input != nullptr && weight != nullptr && rankOf(weight) == rankOf(input)) {
    const std::vector<int64_t> sizes = g.outputSizes(input, weight, transposed, groups);
    op.require(allAtLeast(sizes, 0), "the input (after padding) is smaller than the dilated kernel");
    op.require(sizesAre(output, sizes), "output's shape is not the inferred one");
  }
  return op.build([g, transposed, groups](Views& v) {
    at::Tensor& output = v["output"];
    const std::vector<int64_t> outputPadding =
        transposed ? g.outputPadding : std::vector<int64_t>(g.stride.size(), 0);
    const std::optional<at::Tensor> bias =
        v["bias"].defined() ? std::optional<at::Tensor>(widened(v["bias"])) : std::nullopt;
    const at::Tensor result = at::convolution(widened(v["input"]), widened(v["weight"]), bias, g.stride, g.padding,
                                              g.dilation, transposed, outputPadding, groups);
    output.copy_(result);
  });
}
FSIM_PHASE2(aclnnConvolution)

aclnnStatus aclnnConvolutionBackwardGetWorkspaceSize(
    const aclTensor* gradOutput, const aclTensor* input, const aclTensor* weight, const aclIntArray* biasSizes,
    const aclIntArray* stride, const aclIntArray* padding, const aclIntArray* dilation, bool transposed,
    const aclIntArray* outputPadding, int groups, const aclBoolArray* outputMask, int8_t cubeMathType,
    aclTensor* gradInput, aclTensor* gradWeight, aclTensor* gradBias, uint64_t* workspaceSize,
    aclOpExecutor** executor) {
  Op op("aclnnConvolutionBackward", workspaceSize, executor);
  op.arg("gradOutput", gradOutput, kConvTypes).arg("input", input, kConvTypes).arg("weight", weight, kConvTypes)
      .arg("stride", stride).arg("padding", padding).arg("dilation", dilation).arg("outputPadding", outputPadding)
      .arg("outputMask", outputMask).optional("gradInput", gradInput, kConvTypes)
      .optional("gradWeight", gradWeight, kConvTypes).optional("gradBias", gradBias, kConvTypes);
  const Geometry g(input, stride, padding, dilation, outputPadding);
  g.check(op, input, weight, transposed, groups);
  const bool zeroOutputPadding =
      std::all_of(g.outputPadding.begin(), g.outputPadding.end(), [](int64_t v) { return v == 0; });
  op.require(transposed || zeroOutputPadding, "outputPadding must be all 0 when transposed is false");
  op.require(sameDtype(gradOutput, input) && sameDtype(input, weight),
             "gradOutput, input and weight must have one dtype");
  op.require(sameDtype(gradInput, input) && sameDtype(gradWeight, weight) && sameDtype(gradBias, gradOutput),
             "the gradients must have the dtypes of input, weight and gradOutput");
  op.require(cubeMathType >= 0 && cubeMathType <= 3, "cubeMathType must be 0 to 3");
  const std::vector<bool> maskValues = boolsOf(outputMask);
  const bool maskFits = outputMask == nullptr ||
                        (maskValues.size() == 3 && (!maskValues[0] || gradInput != nullptr) &&
                         (!maskValues[1] || gradWeight != nullptr) && (!maskValues[2] || gradBias != nullptr));
  op.require(maskFits, "outputMask has 3 elements, and each true one needs its gradient output");
  const std::array<bool, 3> mask{maskValues.size() > 0 && maskValues[0], maskValues.size() > 1 && maskValues[1],
                                 maskValues.size() > 2 && maskValues[2]};
  // biasSizes: [weight's dim 0], or [weight's dim 1 * groups] when transposed.
  // CANN needs it only to size an empty gradBias; the simulator checks it when given.
  const int64_t biasChannels = transposed ? dimOf(weight, 1) * groups : dimOf(weight, 0);
  const std::vector<int64_t> bias = intsOf(biasSizes);
  op.require(biasSizes == nullptr || (bias.size() == 1 && bias[0] == biasChannels),
             "biasSizes must be [output channels]");
  const bool emptyOutput = gradOutput != nullptr && std::find(gradOutput->viewDims.begin(), gradOutput->viewDims.end(),
                                                              int64_t{0}) != gradOutput->viewDims.end();
  op.require(!(mask[2] && emptyOutput && biasSizes == nullptr),
             "biasSizes is needed for gradBias of an empty gradOutput");
  if (input != nullptr && weight != nullptr && rankOf(weight) == rankOf(input)) {
    op.require(sizesAre(gradOutput, g.outputSizes(input, weight, transposed, groups)),
               "gradOutput's shape is not the convolution's output shape");
  }
  op.require(gradInput == nullptr || input == nullptr || gradInput->viewDims == input->viewDims,
             "gradInput must have input's shape");
  op.require(gradWeight == nullptr || weight == nullptr || gradWeight->viewDims == weight->viewDims,
             "gradWeight must have weight's shape");
  op.require(gradBias == nullptr || (rankOf(gradBias) == 1 && dimOf(gradBias, 0) == biasChannels),
             "gradBias must be 1-D with one value per output channel");
  return op.build([g, transposed, groups, mask, biasChannels](Views& v) {
    const std::vector<int64_t> outputPadding =
        transposed ? g.outputPadding : std::vector<int64_t>(g.stride.size(), 0);
    auto [dInput, dWeight, dBias] = at::convolution_backward(
        widened(v["gradOutput"]), widened(v["input"]), widened(v["weight"]), std::vector<int64_t>{biasChannels},
        g.stride, g.padding, g.dilation, transposed, outputPadding, groups, mask);
    copyDefined(v["gradInput"], dInput);
    copyDefined(v["gradWeight"], dWeight);
    copyDefined(v["gradBias"], dBias);
  });
}
FSIM_PHASE2(aclnnConvolutionBackward)
