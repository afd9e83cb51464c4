// Division with a rounding mode, and in place: aclnnDivMod(s),
// aclnnInplaceDivMod(s), aclnnInplaceDiv(s), aclnnFloorDivide(s) and
// aclnnInplaceFloorDivide(s).
//
// DivMod's `mode`: 0 true division, 1 trunc, 2 floor; any other value, and a
// rounding mode (1, 2) on complex operands, fail phase 1 with
// ACLNN_ERR_PARAM_INVALID (CANN's doc). True division writes a floating or
// complex `out`.
#include <ATen/ScalarOps.h>
#include <ATen/ops/div.h>
#include <ATen/ops/floor_divide.h>

#include <optional>
#include <string_view>

#include "sim_op.h"
#include "flagos/aclnn/aclnnDivMod.h"
#include "flagos/aclnn/aclnnDivMods.h"
#include "flagos/aclnn/aclnnFloorDivide.h"
#include "flagos/aclnn/aclnnFloorDivides.h"
#include "flagos/aclnn/aclnnInplaceDiv.h"
#include "flagos/aclnn/aclnnInplaceDivMod.h"
#include "flagos/aclnn/aclnnInplaceDivMods.h"
#include "flagos/aclnn/aclnnInplaceDivs.h"
#include "flagos/aclnn/aclnnInplaceFloorDivide.h"
#include "flagos/aclnn/aclnnInplaceFloorDivides.h"

using namespace fsim::op;

namespace {

constexpr DTypes kTrueDivOut = kFloating | kComplex;

std::optional<std::string_view> roundingOf(int mode) {
  if (mode == 1) return "trunc";
  if (mode == 2) return "floor";
  return std::nullopt;
}

bool isComplex(aclDataType dtype) { return dtype == ACL_COMPLEX64 || dtype == ACL_COMPLEX128; }

// The checks every DivMod form shares; `other` is null for the scalar forms
// (and `otherDtype` then the scalar's dtype).
void checkMode(Op& op, int mode, const aclTensor* self, aclDataType otherDtype) {
  op.require(mode == 0 || mode == 1 || mode == 2, "mode must be 0 (none), 1 (trunc) or 2 (floor)");
  op.require(mode == 0 || self == nullptr || (!isComplex(self->dtype) && !isComplex(otherDtype)),
             "mode 1 (trunc) and 2 (floor) do not take complex operands");
}

bool broadcastable(const aclTensor* a, const aclTensor* b) {
  if (a == nullptr || b == nullptr) return true;
  const auto& x = a->viewDims;
  const auto& y = b->viewDims;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    const int64_t p = x[x.size() - 1 - i], q = y[y.size() - 1 - i];
    if (p != q && p != 1 && q != 1) return false;
  }
  return true;
}

}  // namespace

aclnnStatus aclnnDivModGetWorkspaceSize(const aclTensor* self, const aclTensor* other, int mode, aclTensor* out,
                                        uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnDivMod", workspaceSize, executor);
  op.arg("self", self).arg("other", other).arg("out", out, mode == 0 ? kTrueDivOut : kAll);
  checkMode(op, mode, self, other != nullptr ? other->dtype : ACL_FLOAT);
  op.require(broadcastable(self, other), "self and other cannot be broadcast together");
  return op.build([rounding = roundingOf(mode)](Views& v) { at::div_out(v["out"], v["self"], v["other"], rounding); });
}
FSIM_PHASE2(aclnnDivMod)

aclnnStatus aclnnDivModsGetWorkspaceSize(const aclTensor* self, const aclScalar* other, int mode, aclTensor* out,
                                         uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnDivMods", workspaceSize, executor);
  op.arg("self", self).arg("other", other).arg("out", out, mode == 0 ? kTrueDivOut : kAll);
  checkMode(op, mode, self, other != nullptr ? other->dtype : ACL_FLOAT);
  op.require(self == nullptr || out == nullptr || self->viewDims == out->viewDims,
             "argument 'out' must have the shape of 'self'");
  return op.build([other = scalarOf(other), rounding = roundingOf(mode)](Views& v) {
    v["out"].copy_(at::div(v["self"], other, rounding));
  });
}
FSIM_PHASE2(aclnnDivMods)

aclnnStatus aclnnInplaceDivModGetWorkspaceSize(aclTensor* selfRef, const aclTensor* other, int mode,
                                               uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnInplaceDivMod", workspaceSize, executor);
  op.arg("selfRef", selfRef, mode == 0 ? kTrueDivOut : kAll).arg("other", other);
  checkMode(op, mode, selfRef, other != nullptr ? other->dtype : ACL_FLOAT);
  op.require(broadcastable(selfRef, other), "selfRef and other cannot be broadcast together");
  return op.build([rounding = roundingOf(mode)](Views& v) { v["selfRef"].div_(v["other"], rounding); });
}
FSIM_PHASE2(aclnnInplaceDivMod)

aclnnStatus aclnnInplaceDivModsGetWorkspaceSize(aclTensor* selfRef, const aclScalar* other, int mode,
                                                uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnInplaceDivMods", workspaceSize, executor);
  op.arg("selfRef", selfRef, mode == 0 ? kTrueDivOut : kAll).arg("other", other);
  checkMode(op, mode, selfRef, other != nullptr ? other->dtype : ACL_FLOAT);
  return op.build([other = scalarOf(other), rounding = roundingOf(mode)](Views& v) {
    v["selfRef"].div_(other, rounding);
  });
}
FSIM_PHASE2(aclnnInplaceDivMods)

aclnnStatus aclnnInplaceDivGetWorkspaceSize(aclTensor* selfRef, const aclTensor* other, uint64_t* workspaceSize,
                                            aclOpExecutor** executor) {
  Op op("aclnnInplaceDiv", workspaceSize, executor);
  op.arg("selfRef", selfRef, kTrueDivOut).arg("other", other);
  op.require(broadcastable(selfRef, other), "selfRef and other cannot be broadcast together");
  return op.build([](Views& v) { v["selfRef"].div_(v["other"]); });
}
FSIM_PHASE2(aclnnInplaceDiv)

aclnnStatus aclnnInplaceDivsGetWorkspaceSize(aclTensor* selfRef, const aclScalar* other, uint64_t* workspaceSize,
                                             aclOpExecutor** executor) {
  Op op("aclnnInplaceDivs", workspaceSize, executor);
  op.arg("selfRef", selfRef, kTrueDivOut).arg("other", other);
  return op.build([other = scalarOf(other)](Views& v) { v["selfRef"].div_(other); });
}
FSIM_PHASE2(aclnnInplaceDivs)

// Floor division: CANN's doc lists real dtypes only (no bool, no complex).
aclnnStatus aclnnFloorDivideGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                             uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnFloorDivide", workspaceSize, executor);
  op.arg("self", self, kNumeric).arg("other", other, kNumeric).arg("out", out, kNumeric);
  return op.build([](Views& v) { at::floor_divide_out(v["out"], v["self"], v["other"]); });
}
FSIM_PHASE2(aclnnFloorDivide)

aclnnStatus aclnnFloorDividesGetWorkspaceSize(const aclTensor* self, const aclScalar* other, aclTensor* out,
                                              uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnFloorDivides", workspaceSize, executor);
  op.arg("self", self, kNumeric).arg("other", other, kNumeric).arg("out", out, kNumeric);
  return op.build([other = scalarOf(other)](Views& v) {
    at::floor_divide_out(v["out"], v["self"], at::native::wrapped_scalar_tensor(other));
  });
}
FSIM_PHASE2(aclnnFloorDivides)

aclnnStatus aclnnInplaceFloorDivideGetWorkspaceSize(aclTensor* selfRef, const aclTensor* other,
                                                    uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnInplaceFloorDivide", workspaceSize, executor);
  op.arg("selfRef", selfRef, kNumeric).arg("other", other, kNumeric);
  return op.build([](Views& v) { v["selfRef"].floor_divide_(v["other"]); });
}
FSIM_PHASE2(aclnnInplaceFloorDivide)

aclnnStatus aclnnInplaceFloorDividesGetWorkspaceSize(aclTensor* selfRef, const aclScalar* other,
                                                     uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnInplaceFloorDivides", workspaceSize, executor);
  op.arg("selfRef", selfRef, kNumeric).arg("other", other, kNumeric);
  return op.build([other = scalarOf(other)](Views& v) { v["selfRef"].floor_divide_(other); });
}
FSIM_PHASE2(aclnnInplaceFloorDivides)
