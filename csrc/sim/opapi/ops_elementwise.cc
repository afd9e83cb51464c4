// Elementwise math beyond ops_unary.cc / ops_arith.cc (yaml/ops/unary_math.yaml,
// yaml/ops/binary_math.yaml):
//   unary `(self, out)`: aclnnExp2, Expm1, Log2, Log10, Log1p, Tan, Asin, Acos,
//     Atan, Sinh, Cosh, Erf, Erfc, Reciprocal, Floor, Ceil, Round, Trunc, Sign,
//     BitwiseNot, LogicalNot, Silu;
//   binary: aclnnAtan2, Fmod{Tensor,Scalar}, Remainder{TensorTensor,TensorScalar},
//     Bitwise{And,Or,Xor}{Tensor,Scalar}, Logical{And,Or,Xor},
//     Pow{TensorTensor,ScalarTensor}, Clamp{Min,Max}[Tensor], ClampTensor, Clamp;
//   ternary: aclnnLerp, aclnnLerps, aclnnAddcmul, aclnnAddcdiv.
// Each operator checks its dtypes (a dtype outside the set fails phase 1 with
// ACLNN_ERR_PARAM_INVALID naming the argument) and that `out` has the
// broadcast shape of the inputs; the result is computed with ATen's *_out
// kernel, which also applies ATen's promotion and cast rules. The in-place
// ATen forms pass the same tensor as `self` and `out`.
#include <ATen/ops/acos.h>
#include <ATen/ops/addcdiv.h>
#include <ATen/ops/addcmul.h>
#include <ATen/ops/asin.h>
#include <ATen/ops/atan.h>
#include <ATen/ops/atan2.h>
#include <ATen/ops/bitwise_and.h>
#include <ATen/ops/bitwise_not.h>
#include <ATen/ops/bitwise_or.h>
#include <ATen/ops/bitwise_xor.h>
#include <ATen/ops/ceil.h>
#include <ATen/ops/clamp.h>
#include <ATen/ops/clamp_max.h>
#include <ATen/ops/clamp_min.h>
#include <ATen/ops/cosh.h>
#include <ATen/ops/erf.h>
#include <ATen/ops/erfc.h>
#include <ATen/ops/exp2.h>
#include <ATen/ops/expm1.h>
#include <ATen/ops/floor.h>
#include <ATen/ops/fmod.h>
#include <ATen/ops/lerp.h>
#include <ATen/ops/log10.h>
#include <ATen/ops/log1p.h>
#include <ATen/ops/log2.h>
#include <ATen/ops/logical_and.h>
#include <ATen/ops/logical_not.h>
#include <ATen/ops/logical_or.h>
#include <ATen/ops/logical_xor.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/reciprocal.h>
#include <ATen/ops/remainder.h>
#include <ATen/ops/round.h>
#include <ATen/ops/sign.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/sinh.h>
#include <ATen/ops/tan.h>
#include <ATen/ops/trunc.h>

#include <algorithm>
#include <initializer_list>
#include <optional>

#include "sim_op.h"
#include "flagos/aclnn/aclnnAcos.h"
#include "flagos/aclnn/aclnnAddcdiv.h"
#include "flagos/aclnn/aclnnAddcmul.h"
#include "flagos/aclnn/aclnnAsin.h"
#include "flagos/aclnn/aclnnAtan.h"
#include "flagos/aclnn/aclnnAtan2.h"
#include "flagos/aclnn/aclnnBitwiseAndScalar.h"
#include "flagos/aclnn/aclnnBitwiseAndTensor.h"
#include "flagos/aclnn/aclnnBitwiseNot.h"
#include "flagos/aclnn/aclnnBitwiseOrScalar.h"
#include "flagos/aclnn/aclnnBitwiseOrTensor.h"
#include "flagos/aclnn/aclnnBitwiseXorScalar.h"
#include "flagos/aclnn/aclnnBitwiseXorTensor.h"
#include "flagos/aclnn/aclnnCeil.h"
#include "flagos/aclnn/aclnnClamp.h"
#include "flagos/aclnn/aclnnClampMax.h"
#include "flagos/aclnn/aclnnClampMaxTensor.h"
#include "flagos/aclnn/aclnnClampMin.h"
#include "flagos/aclnn/aclnnClampMinTensor.h"
#include "flagos/aclnn/aclnnClampTensor.h"
#include "flagos/aclnn/aclnnCosh.h"
#include "flagos/aclnn/aclnnErf.h"
#include "flagos/aclnn/aclnnErfc.h"
#include "flagos/aclnn/aclnnExp2.h"
#include "flagos/aclnn/aclnnExpm1.h"
#include "flagos/aclnn/aclnnFloor.h"
#include "flagos/aclnn/aclnnFmodScalar.h"
#include "flagos/aclnn/aclnnFmodTensor.h"
#include "flagos/aclnn/aclnnLerp.h"
#include "flagos/aclnn/aclnnLerps.h"
#include "flagos/aclnn/aclnnLog10.h"
#include "flagos/aclnn/aclnnLog1p.h"
#include "flagos/aclnn/aclnnLog2.h"
#include "flagos/aclnn/aclnnLogicalAnd.h"
#include "flagos/aclnn/aclnnLogicalNot.h"
#include "flagos/aclnn/aclnnLogicalOr.h"
#include "flagos/aclnn/aclnnLogicalXor.h"
#include "flagos/aclnn/aclnnPowScalarTensor.h"
#include "flagos/aclnn/aclnnPowTensorTensor.h"
#include "flagos/aclnn/aclnnReciprocal.h"
#include "flagos/aclnn/aclnnRemainderTensorScalar.h"
#include "flagos/aclnn/aclnnRemainderTensorTensor.h"
#include "flagos/aclnn/aclnnRound.h"
#include "flagos/aclnn/aclnnSign.h"
#include "flagos/aclnn/aclnnSilu.h"
#include "flagos/aclnn/aclnnSinh.h"
#include "flagos/aclnn/aclnnTan.h"
#include "flagos/aclnn/aclnnTrunc.h"

using namespace fsim::op;

namespace {

inline constexpr DTypes kReal = kNumeric | kBool;
inline constexpr DTypes kBits = kIntegral | kBool;

// Whether `out`'s shape is the broadcast of the present `inputs`' shapes
// (true when a required pointer is null: op.arg reports that).
bool broadcastShape(const aclTensor* out, std::initializer_list<const aclTensor*> inputs) {
  if (out == nullptr) return true;
  const std::optional<std::vector<int64_t>> shape = broadcastDims(inputs);
  return shape.has_value() && *shape == out->viewDims;
}

constexpr const char* kShapeError = "argument 'out' must have the broadcast shape of the inputs";

// `(const aclTensor* self, out)` computed by fn(out, self).
template <typename Fn>
aclnnStatus unary(const char* name, const aclTensor* self, const aclTensor* out, uint64_t* workspaceSize,
                  aclOpExecutor** executor, DTypes inputs, DTypes outputs, Fn fn) {
  Op op(name, workspaceSize, executor);
  op.arg("self", self, inputs).arg("out", out, outputs);
  op.require(self == nullptr || out == nullptr || self->viewDims == out->viewDims,
             "argument 'out' must have the shape of 'self'");
  return op.build([fn](Views& v) { fn(v["out"], v["self"]); });
}

// `(const aclTensor* self, const aclTensor* other, aclTensor* out)`.
template <typename Fn>
aclnnStatus binary(const char* name, const char* otherName, const aclTensor* self, const aclTensor* other,
                   aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor, DTypes inputs,
                   DTypes outputs, Fn fn) {
  Op op(name, workspaceSize, executor);
  op.arg("self", self, inputs).arg(otherName, other, inputs).arg("out", out, outputs);
  op.require(broadcastShape(out, {self, other}), kShapeError);
  return op.build([fn, otherName](Views& v) { fn(v["out"], v["self"], v[otherName]); });
}

// `(const aclTensor* self, const aclScalar* other, aclTensor* out)`.
template <typename Fn>
aclnnStatus tensorScalar(const char* name, const char* otherName, const aclTensor* self, const aclScalar* other,
                         aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor, DTypes inputs,
                         DTypes outputs, Fn fn) {
  Op op(name, workspaceSize, executor);
  op.arg("self", self, inputs).arg(otherName, other).arg("out", out, outputs);
  op.require(self == nullptr || out == nullptr || self->viewDims == out->viewDims,
             "argument 'out' must have the shape of 'self'");
  return op.build([fn, value = scalarOf(other)](Views& v) { fn(v["out"], v["self"], value); });
}

}  // namespace

// ---- unary ------------------------------------------------------------------------

#define FSIM_EW_UNARY(api, out_type, inputs, outputs, aten_out)                                                   \
  aclnnStatus api##GetWorkspaceSize(const aclTensor* self, out_type out, uint64_t* workspaceSize,     \
                                    aclOpExecutor** executor) {                                         \
    return unary(#api, self, out, workspaceSize, executor, inputs, outputs,                             \
                 [](at::Tensor& out, const at::Tensor& self) { aten_out(out, self); });                 \
  }                                                                                                     \
  FSIM_PHASE2(api)

// Float functions: any real input, a floating `out` (ATen: an integer result
// dtype cannot hold them).
FSIM_EW_UNARY(aclnnExp2, aclTensor*, kReal, kFloating, at::exp2_out)
FSIM_EW_UNARY(aclnnExpm1, aclTensor*, kReal, kFloating, at::expm1_out)
FSIM_EW_UNARY(aclnnLog2, const aclTensor*, kReal, kFloating, at::log2_out)
FSIM_EW_UNARY(aclnnLog10, aclTensor*, kReal, kFloating, at::log10_out)
FSIM_EW_UNARY(aclnnLog1p, aclTensor*, kReal, kFloating, at::log1p_out)
FSIM_EW_UNARY(aclnnTan, aclTensor*, kReal, kFloating, at::tan_out)
FSIM_EW_UNARY(aclnnAsin, aclTensor*, kReal, kFloating, at::asin_out)
FSIM_EW_UNARY(aclnnAcos, aclTensor*, kReal, kFloating, at::acos_out)
FSIM_EW_UNARY(aclnnAtan, aclTensor*, kReal, kFloating, at::atan_out)
FSIM_EW_UNARY(aclnnSinh, aclTensor*, kReal, kFloating, at::sinh_out)
FSIM_EW_UNARY(aclnnCosh, aclTensor*, kReal, kFloating, at::cosh_out)
FSIM_EW_UNARY(aclnnErf, aclTensor*, kReal, kFloating, at::erf_out)
FSIM_EW_UNARY(aclnnErfc, aclTensor*, kReal, kFloating, at::erfc_out)
FSIM_EW_UNARY(aclnnReciprocal, aclTensor*, kReal, kFloating, at::reciprocal_out)
// Rounding keeps the dtype; integers pass through, bool is not supported (as in ATen).
FSIM_EW_UNARY(aclnnFloor, aclTensor*, kNumeric, kNumeric, at::floor_out)
FSIM_EW_UNARY(aclnnCeil, aclTensor*, kNumeric, kNumeric, at::ceil_out)
FSIM_EW_UNARY(aclnnRound, aclTensor*, kNumeric, kNumeric, at::round_out)
FSIM_EW_UNARY(aclnnTrunc, aclTensor*, kNumeric, kNumeric, at::trunc_out)
// CANN names Sign's output `result`.
aclnnStatus aclnnSignGetWorkspaceSize(const aclTensor* self, aclTensor* result, uint64_t* workspaceSize,
                                      aclOpExecutor** executor) {
  Op op("aclnnSign", workspaceSize, executor);
  op.arg("self", self, kReal).arg("result", result, kReal);
  op.require(self == nullptr || result == nullptr || self->viewDims == result->viewDims,
             "argument 'result' must have the shape of 'self'");
  return op.build([](Views& v) { at::sign_out(v["result"], v["self"]); });
}
FSIM_PHASE2(aclnnSign)
FSIM_EW_UNARY(aclnnBitwiseNot, aclTensor*, kBits, kBits, at::bitwise_not_out)
FSIM_EW_UNARY(aclnnLogicalNot, aclTensor*, kReal, kReal, at::logical_not_out)
FSIM_EW_UNARY(aclnnSilu, aclTensor*, kFloating, kFloating, at::silu_out)

// ---- binary -----------------------------------------------------------------------

#define FSIM_EW_BINARY(api, other_name, inputs, outputs, aten_out)                                          \
  aclnnStatus api##GetWorkspaceSize(const aclTensor* self, const aclTensor* other_name, aclTensor* out,     \
                                    uint64_t* workspaceSize, aclOpExecutor** executor) {                    \
    return binary(#api, #other_name, self, other_name, out, workspaceSize, executor, inputs, outputs,       \
                  [](at::Tensor& out, const at::Tensor& self, const at::Tensor& other) {                    \
                    aten_out(out, self, other);                                                             \
                  });                                                                                       \
  }                                                                                                         \
  FSIM_PHASE2(api)

#define FSIM_EW_TENSOR_SCALAR(api, other_name, inputs, outputs, aten_out)                                   \
  aclnnStatus api##GetWorkspaceSize(const aclTensor* self, const aclScalar* other_name, aclTensor* out,     \
                                    uint64_t* workspaceSize, aclOpExecutor** executor) {                    \
    return tensorScalar(#api, #other_name, self, other_name, out, workspaceSize, executor, inputs, outputs, \
                        [](at::Tensor& out, const at::Tensor& self, const at::Scalar& other) {              \
                          aten_out(out, self, other);                                                       \
                        });                                                                                 \
  }                                                                                                         \
  FSIM_PHASE2(api)

FSIM_EW_BINARY(aclnnAtan2, other, kReal, kFloating, at::atan2_out)
FSIM_EW_BINARY(aclnnFmodTensor, other, kNumeric, kNumeric, at::fmod_out)
FSIM_EW_TENSOR_SCALAR(aclnnFmodScalar, other, kNumeric, kNumeric, at::fmod_out)
FSIM_EW_BINARY(aclnnRemainderTensorTensor, other, kNumeric, kNumeric, at::remainder_out)
FSIM_EW_TENSOR_SCALAR(aclnnRemainderTensorScalar, other, kNumeric, kNumeric, at::remainder_out)
FSIM_EW_BINARY(aclnnBitwiseAndTensor, other, kBits, kBits, at::bitwise_and_out)
FSIM_EW_TENSOR_SCALAR(aclnnBitwiseAndScalar, other, kBits, kBits, at::bitwise_and_out)
FSIM_EW_BINARY(aclnnBitwiseOrTensor, other, kBits, kBits, at::bitwise_or_out)
FSIM_EW_TENSOR_SCALAR(aclnnBitwiseOrScalar, other, kBits, kBits, at::bitwise_or_out)
FSIM_EW_BINARY(aclnnBitwiseXorTensor, other, kBits, kBits, at::bitwise_xor_out)
FSIM_EW_TENSOR_SCALAR(aclnnBitwiseXorScalar, other, kBits, kBits, at::bitwise_xor_out)
FSIM_EW_BINARY(aclnnLogicalAnd, other, kReal, kReal, at::logical_and_out)
FSIM_EW_BINARY(aclnnLogicalOr, other, kReal, kReal, at::logical_or_out)
FSIM_EW_BINARY(aclnnLogicalXor, other, kReal, kReal, at::logical_xor_out)
FSIM_EW_BINARY(aclnnPowTensorTensor, exponent, kNumeric, kNumeric, at::pow_out)
FSIM_EW_TENSOR_SCALAR(aclnnClampMin, clipValueMin, kNumeric, kNumeric, at::clamp_min_out)
FSIM_EW_TENSOR_SCALAR(aclnnClampMax, clipValueMax, kNumeric, kNumeric, at::clamp_max_out)
FSIM_EW_BINARY(aclnnClampMinTensor, clipValueMin, kNumeric, kNumeric, at::clamp_min_out)
FSIM_EW_BINARY(aclnnClampMaxTensor, max, kNumeric, kNumeric, at::clamp_max_out)

aclnnStatus aclnnPowScalarTensorGetWorkspaceSize(const aclScalar* self, const aclTensor* exponent, const aclTensor* out,
                                                 uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnPowScalarTensor", workspaceSize, executor);
  op.arg("self", self).arg("exponent", exponent, kNumeric).arg("out", out, kNumeric);
  op.require(exponent == nullptr || out == nullptr || exponent->viewDims == out->viewDims,
             "argument 'out' must have the shape of 'exponent'");
  return op.build([base = scalarOf(self)](Views& v) { at::pow_out(v["out"], base, v["exponent"]); });
}
FSIM_PHASE2(aclnnPowScalarTensor)

aclnnStatus aclnnClampTensorGetWorkspaceSize(const aclTensor* self, const aclTensor* clipValueMin,
                                             const aclTensor* clipValueMax, aclTensor* out, uint64_t* workspaceSize,
                                             aclOpExecutor** executor) {
  Op op("aclnnClampTensor", workspaceSize, executor);
  op.arg("self", self, kNumeric)
      .optional("clipValueMin", clipValueMin, kNumeric | kBool)  // bounds may be bool (CANN's doc), self not
      .optional("clipValueMax", clipValueMax, kNumeric | kBool)
      .arg("out", out, kNumeric);
  op.require(clipValueMin != nullptr || clipValueMax != nullptr, "one of 'clipValueMin' and 'clipValueMax' must be given");
  op.require(broadcastShape(out, {self, clipValueMin, clipValueMax}), kShapeError);
  return op.build([](Views& v) {
    const at::Tensor& lo = v["clipValueMin"];
    const at::Tensor& hi = v["clipValueMax"];
    at::clamp_out(v["out"], v["self"], lo.defined() ? std::optional<at::Tensor>(lo) : std::nullopt,
                  hi.defined() ? std::optional<at::Tensor>(hi) : std::nullopt);
  });
}
FSIM_PHASE2(aclnnClampTensor)

// Either bound may be absent (nullptr), not both: that fails with
// ACLNN_ERR_PARAM_NULLPTR. A bool self or out is refused (Atlas A2/A3); a bool
// bound is taken.
aclnnStatus aclnnClampGetWorkspaceSize(const aclTensor* self, const aclScalar* clipValueMin,
                                       const aclScalar* clipValueMax, aclTensor* out, uint64_t* workspaceSize,
                                       aclOpExecutor** executor) {
  Op op("aclnnClamp", workspaceSize, executor);
  op.arg("self", self, kNumeric);
  if (clipValueMin != nullptr || clipValueMax == nullptr) op.arg("clipValueMin", clipValueMin, kNumeric | kBool);
  if (clipValueMax != nullptr) op.arg("clipValueMax", clipValueMax, kNumeric | kBool);
  op.arg("out", out, kNumeric);
  op.require(self == nullptr || out == nullptr || self->viewDims == out->viewDims,
             "argument 'out' must have the shape of 'self'");
  std::optional<at::Scalar> lo, hi;
  if (clipValueMin != nullptr) lo = scalarOf(clipValueMin);
  if (clipValueMax != nullptr) hi = scalarOf(clipValueMax);
  return op.build([lo, hi](Views& v) { at::clamp_out(v["out"], v["self"], lo, hi); });
}
FSIM_PHASE2(aclnnClamp)

// ---- ternary ----------------------------------------------------------------------

aclnnStatus aclnnLerpGetWorkspaceSize(const aclTensor* self, const aclTensor* end, const aclTensor* weight,
                                      aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnLerp", workspaceSize, executor);
  op.arg("self", self, kFloating).arg("end", end, kFloating).arg("weight", weight, kFloating).arg("out", out, kFloating);
  op.require(broadcastShape(out, {self, end, weight}), kShapeError);
  return op.build([](Views& v) { at::lerp_out(v["out"], v["self"], v["end"], v["weight"]); });
}
FSIM_PHASE2(aclnnLerp)

aclnnStatus aclnnLerpsGetWorkspaceSize(const aclTensor* self, const aclTensor* end, const aclScalar* weight,
                                       aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnLerps", workspaceSize, executor);
  op.arg("self", self, kFloating).arg("end", end, kFloating).arg("weight", weight).arg("out", out, kFloating);
  op.require(broadcastShape(out, {self, end}), kShapeError);
  return op.build([weight = scalarOf(weight)](Views& v) { at::lerp_out(v["out"], v["self"], v["end"], weight); });
}
FSIM_PHASE2(aclnnLerps)

#define FSIM_EW_ADDC(api, out_type, inputs, aten_out)                                                                    \
  aclnnStatus api##GetWorkspaceSize(const aclTensor* self, const aclTensor* tensor1, const aclTensor* tensor2, \
                                    const aclScalar* value, out_type out, uint64_t* workspaceSize,           \
                                    aclOpExecutor** executor) {                                                \
    Op op(#api, workspaceSize, executor);                                                                      \
    op.arg("self", self, inputs).arg("tensor1", tensor1, inputs).arg("tensor2", tensor2, inputs);              \
    op.arg("value", value).arg("out", out, inputs);                                                            \
    op.require(broadcastShape(out, {self, tensor1, tensor2}), kShapeError);                                    \
    return op.build([value = scalarOf(value)](Views& v) {                                                      \
      aten_out(v["out"], v["self"], v["tensor1"], v["tensor2"], value);                                        \
    });                                                                                                        \
  }                                                                                                            \
  FSIM_PHASE2(api)

FSIM_EW_ADDC(aclnnAddcmul, aclTensor*, kNumeric, at::addcmul_out)
// ATen's addcdiv refuses integer division (use the floor/trunc forms): floats only.
FSIM_EW_ADDC(aclnnAddcdiv, const aclTensor*, kFloating, at::addcdiv_out)
