// 2-d max pooling: aclnnMaxPool2dWithIndices and its backward, as CANN's
// ops-nn (pooling/max_pool3d_with_argmax_v2, pooling/max_pool3d_grad_with_argmax)
// has them for Atlas A2/A3:
// - self 3-d (C, H, W) or 4-d (N, C, H, W); kernelSize 1 or 2 values > 0;
//   stride 0 (= kernelSize), 1 or 2 values > 0; padding 1 or 2 values in
//   [0, kernelSize / 2] (backward: [0, kernelSize]); dilation 1 or 2 values,
//   all 1 on A2/A3;
// - forward: self and out FLOAT, FLOAT16, BFLOAT16 (one dtype), indices INT32
//   or INT64; out and indices must have the pooled shape (ceilMode drops a
//   window that starts in the right/bottom padding, as ATen);
// - backward on A2/A3: gradOutput, self and gradInput FLOAT only, indices
//   INT32 only (INT8 is the mask variant's);
// - indices are the flat index h * W + w of the maximum in its input plane,
//   ATen's convention, so they pass between the two operators unchanged.
//
// 2-d average pooling: aclnnAvgPool2d and aclnnAvgPool2dBackward
// (ops-nn pooling/avg_pool3_d, pooling/avg_pool3_d_grad; docs
// aclnnAvgPool2d.md, aclnnAvgPool2dBackward.md), for Atlas A2/A3:
// - self (and gradOutput, gradInput, out) 3-d or 4-d, FLOAT, FLOAT16 or
//   BFLOAT16, one dtype, not empty; kernelSize and strides 1 or 2 values > 0,
//   paddings 1 or 2 values in [0, kernelSize / 2];
// - divisorOverride 0 means none; cubeMathType 0 (KEEP_DTYPE), 2 (USE_FP16,
//   not for BFLOAT16) or 3 (USE_HF32); 1 is refused for FLOAT32 on A2/A3;
// - out (gradOutput) has the pooled shape, ceilMode as ATen.
#include <ATen/ops/max_pool2d_with_indices.h>
#include <ATen/ops/max_pool2d_with_indices_backward.h>
#include <ATen/ops/avg_pool2d.h>
#include <ATen/ops/avg_pool2d_backward.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "sim_op.h"
#include "flagos/aclnn/aclnnMaxPool2dWithIndices.h"
#include "flagos/aclnn/aclnnMaxPool2dWithIndicesBackward.h"
#include "flagos/aclnn/aclnnAvgPool2d.h"
#include "flagos/aclnn/aclnnAvgPool2dBackward.h"

using namespace fsim::op;

namespace {

constexpr DTypes kPoolTypes{ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
constexpr DTypes kPoolGradTypes{ACL_FLOAT};
constexpr DTypes kPoolIndexTypes{ACL_INT32, ACL_INT64};
constexpr DTypes kGradIndexTypes{ACL_INT32};

// One pooling's geometry, resolved as CANN's op_api does (1 value = both dims).
struct Pool {
  bool ok = false;
  int64_t kH = 0, kW = 0, sH = 0, sW = 0, pH = 0, pW = 0, dH = 1, dW = 1;

  // dilation nullptr: an operator without one (average pooling), all 1.
  Pool(const aclIntArray* kernelSize, const aclIntArray* stride, const aclIntArray* padding,
       const aclIntArray* dilation) {
    if (kernelSize == nullptr || stride == nullptr || padding == nullptr) return;
    const std::vector<int64_t> k = intsOf(kernelSize), s = intsOf(stride), p = intsOf(padding),
                               d = dilation != nullptr ? intsOf(dilation) : std::vector<int64_t>{1};
    if (k.empty() || k.size() > 2 || s.size() > 2 || p.empty() || p.size() > 2 || d.empty() || d.size() > 2) return;
    kH = k[0];
    kW = k.back();
    sH = s.empty() ? kH : s[0];
    sW = s.empty() ? kW : s.back();
    pH = p[0];
    pW = p.back();
    dH = d[0];
    dW = d.back();
    ok = true;
  }

  bool positive() const { return ok && kH > 0 && kW > 0 && sH > 0 && sW > 0; }
  bool paddingWithin(int64_t divisor) const {
    return ok && pH >= 0 && pW >= 0 && pH <= kH / divisor && pW <= kW / divisor;
  }
  bool unitDilation() const { return ok && dH == 1 && dW == 1; }

  static int64_t outSize(int64_t in, int64_t k, int64_t pad, int64_t stride, bool ceil) {
    const int64_t span = in + 2 * pad - (k - 1) - 1 + (ceil ? stride - 1 : 0);
    int64_t out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
    if (ceil && (out - 1) * stride >= in + pad) --out;  // a window starting in the padding
    return out;
  }

  // The pooled shape of `self`, empty when it cannot be computed.
  std::vector<int64_t> output(const aclTensor* self, bool ceil) const {
    if (self == nullptr || !positive()) return {};
    const std::vector<int64_t>& dims = self->viewDims;
    if (dims.size() != 3 && dims.size() != 4) return {};
    std::vector<int64_t> out(dims.begin(), dims.end() - 2);
    out.push_back(outSize(dims[dims.size() - 2], kH, pH, sH, ceil));
    out.push_back(outSize(dims.back(), kW, pW, sW, ceil));
    return out;
  }

  std::vector<int64_t> kernel() const { return {kH, kW}; }
  std::vector<int64_t> stride() const { return {sH, sW}; }
  std::vector<int64_t> padding() const { return {pH, pW}; }
  std::vector<int64_t> dilation() const { return {dH, dW}; }
};

bool noZero(const std::vector<int64_t>& dims) {
  for (const int64_t d : dims)
    if (d <= 0) return false;
  return !dims.empty();
}

}  // namespace

aclnnStatus aclnnMaxPool2dWithIndicesGetWorkspaceSize(const aclTensor* self, const aclIntArray* kernelSize,
                                                      const aclIntArray* stride, const aclIntArray* padding,
                                                      const aclIntArray* dilation, bool ceilMode, aclTensor* out,
                                                      aclTensor* indices, uint64_t* workspaceSize,
                                                      aclOpExecutor** executor) {
  Op op("aclnnMaxPool2dWithIndices", workspaceSize, executor);
  op.arg("self", self, kPoolTypes).arg("kernelSize", kernelSize).arg("stride", stride).arg("padding", padding)
      .arg("dilation", dilation).arg("out", out, kPoolTypes).arg("indices", indices, kPoolIndexTypes);
  op.require(self == nullptr || out == nullptr || self->dtype == out->dtype, "out must have self's dtype");
  op.require(self == nullptr || self->viewDims.size() == 3 || self->viewDims.size() == 4, "self must be 3-d or 4-d");
  const Pool pool(kernelSize, stride, padding, dilation);
  op.require(pool.ok, "kernelSize, padding and dilation need 1 or 2 values, stride 0, 1 or 2");
  op.require(pool.positive(), "kernelSize and stride must be > 0");
  op.require(pool.paddingWithin(2), "padding must be >= 0 and <= kernelSize / 2");
  op.require(pool.unitDilation(), "dilation must be 1 (Atlas A2/A3)");
  const std::vector<int64_t> shape = pool.output(self, ceilMode);
  op.require(self == nullptr || !pool.positive() || noZero(shape), "the pooled shape has a dim <= 0");
  op.require(out == nullptr || indices == nullptr || shape.empty() ||
                 (out->viewDims == shape && indices->viewDims == shape),
             "out and indices must have the pooled shape");
  return op.build([pool, ceilMode](Views& v) {
    const at::Tensor& self = v["self"];
    auto [values, argmax] =
        at::max_pool2d_with_indices(self, pool.kernel(), pool.stride(), pool.padding(), pool.dilation(), ceilMode);
    v["out"].copy_(values);
    v["indices"].copy_(argmax);  // to INT32 when asked
  });
}
FSIM_PHASE2(aclnnMaxPool2dWithIndices)

aclnnStatus aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(
    const aclTensor* gradOutput, const aclTensor* self, const aclTensor* indices, const aclIntArray* kernelSize,
    const aclIntArray* stride, const aclIntArray* padding, const aclIntArray* dilation, bool ceilMode,
    aclTensor* gradInput, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnMaxPool2dWithIndicesBackward", workspaceSize, executor);
  op.arg("gradOutput", gradOutput, kPoolGradTypes).arg("self", self, kPoolGradTypes)
      .arg("indices", indices, kGradIndexTypes).arg("kernelSize", kernelSize).arg("stride", stride)
      .arg("padding", padding).arg("dilation", dilation).arg("gradInput", gradInput, kPoolGradTypes);
  op.require(self == nullptr || self->viewDims.size() == 3 || self->viewDims.size() == 4, "self must be 3-d or 4-d");
  op.require(gradOutput == nullptr || indices == nullptr || gradOutput->viewDims == indices->viewDims,
             "gradOutput and indices must have one shape");
  op.require(self == nullptr || gradInput == nullptr || self->viewDims == gradInput->viewDims,
             "gradInput must have self's shape");
  const Pool pool(kernelSize, stride, padding, dilation);
  op.require(pool.ok, "kernelSize, padding and dilation need 1 or 2 values, stride 0, 1 or 2");
  op.require(pool.positive(), "kernelSize and stride must be > 0");
  op.require(pool.paddingWithin(1), "padding must be >= 0 and <= kernelSize");
  op.require(pool.unitDilation(), "dilation must be 1 (Atlas A2/A3)");
  const std::vector<int64_t> shape = pool.output(self, ceilMode);
  op.require(gradOutput == nullptr || shape.empty() || gradOutput->viewDims == shape,
             "gradOutput must have the pooled shape");
  return op.build([pool, ceilMode](Views& v) {
    const at::Tensor argmax = v["indices"].to(at::kLong);
    // Indices outside the plane are undefined behaviour on the device; refuse them here.
    const at::Tensor& self = v["self"];
    const int64_t plane = self.size(-1) * self.size(-2);
    TORCH_CHECK(argmax.numel() == 0 || (argmax.min().item<int64_t>() >= 0 && argmax.max().item<int64_t>() < plane),
                "aclnnMaxPool2dWithIndicesBackward: an index outside its input plane");
    at::max_pool2d_with_indices_backward_out(v["gradInput"], v["gradOutput"], self, pool.kernel(), pool.stride(),
                                             pool.padding(), pool.dilation(), ceilMode, argmax);
  });
}
FSIM_PHASE2(aclnnMaxPool2dWithIndicesBackward)

namespace {

constexpr DTypes kAvgTypes{ACL_FLOAT, ACL_FLOAT16, ACL_BF16};

// cubeMathType on A2/A3: KEEP_DTYPE, USE_FP16 (not for BFLOAT16), USE_HF32;
// ALLOW_FP32_DOWN_PRECISION (1) is refused for FLOAT32.
bool cubeMathTypeValid(int8_t cubeMathType, const aclTensor* self) {
  if (cubeMathType < 0 || cubeMathType > 3) return false;
  if (self == nullptr) return true;
  if (cubeMathType == 1 && self->dtype == ACL_FLOAT) return false;
  return !(cubeMathType == 2 && self->dtype == ACL_BF16);
}

std::optional<int64_t> divisorOf(int64_t divisorOverride) {
  return divisorOverride == 0 ? std::nullopt : std::optional<int64_t>(divisorOverride);
}

// The checks both average-pooling operators make; `pooled` is out or gradOutput.
void checkAvg(Op& op, const Pool& pool, const aclTensor* self, const aclTensor* pooled, const aclTensor* full,
              bool ceilMode, int8_t cubeMathType) {
  op.require(self == nullptr || self->viewDims.size() == 3 || self->viewDims.size() == 4, "self must be 3-d or 4-d");
  op.require(self == nullptr || noZero(self->viewDims), "self must not be empty");
  op.require(self == nullptr || pooled == nullptr || self->dtype == pooled->dtype,
             "all tensors must have self's dtype");
  op.require(self == nullptr || full == nullptr || (self->dtype == full->dtype && self->viewDims == full->viewDims),
             "the full-size output must have self's dtype and shape");
  op.require(pool.ok, "kernelSize and paddings need 1 or 2 values, strides 0, 1 or 2");
  op.require(pool.positive(), "kernelSize and strides must be > 0");
  op.require(pool.paddingWithin(2), "paddings must be >= 0 and <= kernelSize / 2");
  op.require(cubeMathTypeValid(cubeMathType, self), "cubeMathType is not supported for this dtype on Atlas A2/A3");
  const std::vector<int64_t> shape = pool.output(self, ceilMode);
  op.require(pooled == nullptr || shape.empty() || pooled->viewDims == shape, "out must have the pooled shape");
}

}  // namespace

aclnnStatus aclnnAvgPool2dGetWorkspaceSize(const aclTensor* self, const aclIntArray* kernelSize,
                                           const aclIntArray* strides, const aclIntArray* paddings,
                                           const bool ceilMode, const bool countIncludePad,
                                           const int64_t divisorOverride, const int8_t cubeMathType, aclTensor* out,
                                           uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnAvgPool2d", workspaceSize, executor);
  op.arg("self", self, kAvgTypes).arg("kernelSize", kernelSize).arg("strides", strides).arg("paddings", paddings)
      .arg("out", out, kAvgTypes);
  const Pool pool(kernelSize, strides, paddings, nullptr);
  checkAvg(op, pool, self, out, nullptr, ceilMode, cubeMathType);
  return op.build([pool, ceilMode, countIncludePad, divisorOverride](Views& v) {
    at::avg_pool2d_out(v["out"], v["self"], pool.kernel(), pool.stride(), pool.padding(), ceilMode, countIncludePad,
                       divisorOf(divisorOverride));
  });
}
FSIM_PHASE2(aclnnAvgPool2d)

aclnnStatus aclnnAvgPool2dBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                   const aclIntArray* kernelSize, const aclIntArray* stride,
                                                   const aclIntArray* padding, bool ceilMode, bool countIncludePad,
                                                   int64_t divisorOverride, int8_t cubeMathType, aclTensor* gradInput,
                                                   uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnAvgPool2dBackward", workspaceSize, executor);
  op.arg("gradOutput", gradOutput, kAvgTypes).arg("self", self, kAvgTypes).arg("kernelSize", kernelSize)
      .arg("stride", stride).arg("padding", padding).arg("gradInput", gradInput, kAvgTypes);
  const Pool pool(kernelSize, stride, padding, nullptr);
  checkAvg(op, pool, self, gradOutput, gradInput, ceilMode, cubeMathType);
  return op.build([pool, ceilMode, countIncludePad, divisorOverride](Views& v) {
    at::avg_pool2d_backward_out(v["gradInput"], v["gradOutput"], v["self"], pool.kernel(), pool.stride(),
                                pool.padding(), ceilMode, countIncludePad, divisorOf(divisorOverride));
  });
}
FSIM_PHASE2(aclnnAvgPool2dBackward)
