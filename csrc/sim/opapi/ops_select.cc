// Selection and special values: aclnnSWhere, aclnnIsInf, aclnnIsPosInf,
// aclnnIsNegInf, aclnnNonzero, aclnnIsInTensorScalar, aclnnIsInScalarTensor.
// Dtype sets follow CANN's docs for the Atlas A2/A3 series (a dtype outside
// them fails phase 1 with ACLNN_ERR_PARAM_INVALID).
#include <ATen/ops/isin.h>
#include <ATen/ops/isinf.h>
#include <ATen/ops/isneginf.h>
#include <ATen/ops/isposinf.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/where.h>

#include <initializer_list>
#include <vector>

#include "sim_op.h"
#include "flagos/aclnn/aclnnIsInScalarTensor.h"
#include "flagos/aclnn/aclnnIsInTensorScalar.h"
#include "flagos/aclnn/aclnnIsInf.h"
#include "flagos/aclnn/aclnnIsNegInf.h"
#include "flagos/aclnn/aclnnIsPosInf.h"
#include "flagos/aclnn/aclnnNonzero.h"
#include "flagos/aclnn/aclnnSWhere.h"

using namespace fsim::op;

namespace {

// Whether `out`'s shape is the broadcast of the `inputs`' shapes (true when a
// pointer is null: op.arg reports that).
bool whereBroadcastShape(const aclTensor* out, std::initializer_list<const aclTensor*> inputs) {
  if (out == nullptr) return true;
  for (const aclTensor* t : inputs) {
    if (t == nullptr) return true;
  }
  const std::optional<std::vector<int64_t>> shape = broadcastDims(inputs);
  return shape.has_value() && *shape == out->viewDims;
}

bool sameShape(const aclTensor* a, const aclTensor* b) { return a == nullptr || b == nullptr || a->viewDims == b->viewDims; }

int64_t numelOf(const aclTensor& t) {
  int64_t numel = 1;
  for (int64_t size : t.viewDims) numel *= size;
  return numel;
}

// aclnnSWhere: every dtype but the condition's (BOOL, UINT8).
constexpr DTypes kWhere = kAll;
constexpr DTypes kCondition{ACL_BOOL, ACL_UINT8};
// aclnnIsInf: floats, integers and bool.
constexpr DTypes kIsInf{ACL_FLOAT, ACL_FLOAT16, ACL_DOUBLE, ACL_BF16, ACL_INT8,
                        ACL_INT16, ACL_INT32,   ACL_INT64,  ACL_UINT8, ACL_BOOL};
// aclnnIsPosInf / aclnnIsNegInf: floats only.
constexpr DTypes kInfSign{ACL_FLOAT, ACL_FLOAT16, ACL_DOUBLE, ACL_BF16};
// aclnnNonzero (Atlas A2/A3).
constexpr DTypes kNonzero{ACL_FLOAT, ACL_FLOAT16, ACL_DOUBLE, ACL_INT32, ACL_INT64,
                          ACL_INT16, ACL_INT8,    ACL_UINT8,  ACL_BOOL,  ACL_BF16};
// aclnnIsInTensorScalar / aclnnIsInScalarTensor (Atlas A2/A3): no bool, no complex.
constexpr DTypes kIsIn{ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_INT8,
                       ACL_INT16, ACL_INT32,   ACL_INT64, ACL_UINT8};

}  // namespace

aclnnStatus aclnnSWhereGetWorkspaceSize(const aclTensor* condition, const aclTensor* self, const aclTensor* other,
                                        aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnSWhere", workspaceSize, executor);
  op.arg("condition", condition, kCondition).arg("self", self, kWhere).arg("other", other, kWhere)
      .arg("out", out, kWhere);
  op.require(whereBroadcastShape(out, {condition, self, other}),
             "argument 'out' must have the broadcast shape of condition, self and other");
  return op.build([](Views& v) {
    at::Tensor& out = v["out"];
    // The selected value is cast to out's dtype (the promoted type of self and other).
    const at::Tensor picked = at::where(v["condition"].to(at::kBool), v["self"], v["other"]);
    out.copy_(picked);
  });
}
FSIM_PHASE2(aclnnSWhere)

aclnnStatus aclnnIsInfGetWorkspaceSize(const aclTensor* x, const aclTensor* out, uint64_t* workspaceSize,
                                       aclOpExecutor** executor) {
  Op op("aclnnIsInf", workspaceSize, executor);
  op.arg("x", x, kIsInf).arg("out", out, kBool);
  op.require(sameShape(x, out), "argument 'out' must have the shape of 'x'");
  return op.build([](Views& v) { v["out"].copy_(at::isinf(v["x"])); });
}
FSIM_PHASE2(aclnnIsInf)

#define FSIM_INF_SIGN(api, aten_out)                                                                       \
  aclnnStatus api##GetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* workspaceSize,         \
                                    aclOpExecutor** executor) {                                             \
    Op op(#api, workspaceSize, executor);                                                                   \
    op.arg("self", self, kInfSign).arg("out", out, kBool);                                                  \
    op.require(sameShape(self, out), "argument 'out' must have the shape of 'self'");                       \
    return op.build([](Views& v) { aten_out(v["out"], v["self"]); });                                       \
  }                                                                                                         \
  FSIM_PHASE2(api)

FSIM_INF_SIGN(aclnnIsPosInf, at::isposinf_out)
FSIM_INF_SIGN(aclnnIsNegInf, at::isneginf_out)

// out is [numel(self), dim(self)] int64, room for every element; the indices of
// the nonzero elements fill its first rows, one row per element in row-major
// order (CANN then reports the real row count as out's shape; the caller here
// counts them first). The output shape depends on the data, so the executor
// cannot be made repeatable.
aclnnStatus aclnnNonzeroGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* workspaceSize,
                                         aclOpExecutor** executor) {
  Op op("aclnnNonzero", workspaceSize, executor);
  op.arg("self", self, kNonzero).arg("out", out, {ACL_INT64}).unrepeatable();
  op.require(self == nullptr || out == nullptr ||
                 (out->viewDims.size() == 2 && out->viewDims[0] == numelOf(*self) &&
                  out->viewDims[1] == static_cast<int64_t>(self->viewDims.size())),
             "argument 'out' must be 2-D [numel(self), dim(self)]: room for every element's indices");
  return op.build([](Views& v) {
    const at::Tensor indices = at::nonzero(v["self"]);
    v["out"].narrow(0, 0, indices.size(0)).copy_(indices);
  });
}
FSIM_PHASE2(aclnnNonzero)

aclnnStatus aclnnIsInTensorScalarGetWorkspaceSize(const aclTensor* element, const aclScalar* testElement,
                                                  bool assumeUnique, bool invert, aclTensor* out,
                                                  uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnIsInTensorScalar", workspaceSize, executor);
  op.arg("element", element, kIsIn).arg("testElement", testElement, kIsIn).arg("out", out, kBool);
  op.require(sameShape(element, out), "argument 'out' must have the shape of 'element'");
  return op.build([test = scalarOf(testElement), assumeUnique, invert](Views& v) {
    v["out"].copy_(at::isin(v["element"], test, assumeUnique, invert));
  });
}
FSIM_PHASE2(aclnnIsInTensorScalar)

aclnnStatus aclnnIsInScalarTensorGetWorkspaceSize(const aclScalar* element, const aclTensor* testElements,
                                                  bool assumeUnique, bool invert, aclTensor* out,
                                                  uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnIsInScalarTensor", workspaceSize, executor);
  op.arg("element", element, kIsIn).arg("testElements", testElements, kIsIn).arg("out", out, kBool);
  op.require(out == nullptr || out->viewDims.empty(), "argument 'out' must be 0-dim");
  return op.build([element = scalarOf(element), assumeUnique, invert](Views& v) {
    v["out"].copy_(at::isin(element, v["testElements"], assumeUnique, invert));
  });
}
FSIM_PHASE2(aclnnIsInScalarTensor)
