// Elementwise unary operators: aclnnAbs, aclnnNeg, aclnnExp, aclnnLog,
// aclnnSqrt, aclnnRsqrt, aclnnSin, aclnnCos, aclnnTanh, aclnnSigmoid,
// aclnnRelu (all `(self, out)`) and aclnnInplaceRelu.
#include <ATen/ops/abs.h>
#include <ATen/ops/cos.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/log.h>
#include <ATen/ops/neg.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/sin.h>
#include <ATen/ops/sqrt.h>
#include <ATen/ops/tanh.h>

#include "sim_op.h"
#include "flagos/aclnn/aclnnAbs.h"
#include "flagos/aclnn/aclnnCos.h"
#include "flagos/aclnn/aclnnExp.h"
#include "flagos/aclnn/aclnnInplaceRelu.h"
#include "flagos/aclnn/aclnnLog.h"
#include "flagos/aclnn/aclnnNeg.h"
#include "flagos/aclnn/aclnnRelu.h"
#include "flagos/aclnn/aclnnRsqrt.h"
#include "flagos/aclnn/aclnnSigmoid.h"
#include "flagos/aclnn/aclnnSin.h"
#include "flagos/aclnn/aclnnSqrt.h"
#include "flagos/aclnn/aclnnTanh.h"

using namespace fsim::op;

namespace {

inline constexpr DTypes kUnaryReal = kNumeric | kBool;

// Phase 1 of a `(const aclTensor* self, out)` operator computed by `fn(out, self)`.
template <typename OutFn>
aclnnStatus unaryOut(const char* name, const aclTensor* self, const aclTensor* out, uint64_t* workspaceSize,
                     aclOpExecutor** executor, DTypes inputs, OutFn fn) {
  Op op(name, workspaceSize, executor);
  op.arg("self", self, inputs).arg("out", out, kFloating | kIntegral | kBool);
  op.require(self == nullptr || out == nullptr || self->viewDims == out->viewDims,
             "argument 'out' must have the shape of 'self'");
  return op.build([fn](Views& v) { fn(v["out"], v["self"]); });
}

}  // namespace

#define FSIM_UNARY(api, out_type, inputs, aten_out)                                                                \
  aclnnStatus api##GetWorkspaceSize(const aclTensor* self, out_type out, uint64_t* workspaceSize,      \
                                    aclOpExecutor** executor) {                                          \
    return unaryOut(#api, self, out, workspaceSize, executor, inputs,                                    \
                    [](at::Tensor& out, const at::Tensor& self) { aten_out(out, self); });                  \
  }                                                                                                      \
  FSIM_PHASE2(api)

FSIM_UNARY(aclnnAbs, aclTensor*, kNumeric, at::abs_out)
FSIM_UNARY(aclnnNeg, aclTensor*, kNumeric, at::neg_out)
FSIM_UNARY(aclnnExp, aclTensor*, kUnaryReal, at::exp_out)
FSIM_UNARY(aclnnLog, aclTensor*, kUnaryReal, at::log_out)
FSIM_UNARY(aclnnSqrt, aclTensor*, kUnaryReal, at::sqrt_out)
FSIM_UNARY(aclnnRsqrt, aclTensor*, kUnaryReal, at::rsqrt_out)
FSIM_UNARY(aclnnSin, aclTensor*, kUnaryReal, at::sin_out)
FSIM_UNARY(aclnnCos, aclTensor*, kUnaryReal, at::cos_out)
FSIM_UNARY(aclnnTanh, aclTensor*, kUnaryReal, at::tanh_out)
FSIM_UNARY(aclnnSigmoid, aclTensor*, kUnaryReal, at::sigmoid_out)
// ATen has no relu_out: relu is clamp_min(self, 0), written into out.
FSIM_UNARY(aclnnRelu, const aclTensor*, kNumeric, [](at::Tensor& out, const at::Tensor& self) { out.copy_(at::relu(self)); })

aclnnStatus aclnnInplaceReluGetWorkspaceSize(aclTensor* selfRef, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnInplaceRelu", workspaceSize, executor);
  op.arg("selfRef", selfRef, kNumeric);
  return op.build([](Views& v) { at::relu_(v["selfRef"]); });
}
FSIM_PHASE2(aclnnInplaceRelu)
