// Indexing, triangles, flips, embeddings, the NLL loss and index-shaped
// factories: aclnnIndexSelect, aclnnGather, aclnnScatter*, aclnnScatterAdd,
// aclnnInplaceMaskedFill*, aclnnEmbedding*, aclnnTril/Triu (+ in-place),
// aclnnFlip, aclnnRoll, aclnnNLLLoss(+Backward), aclnnEye, aclnnLinspace.
#include <ATen/ops/embedding.h>
#include <ATen/ops/embedding_dense_backward.h>
#include <ATen/ops/eye.h>
#include <ATen/ops/flip.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/linspace.h>
#include <ATen/ops/masked_fill.h>
#include <ATen/ops/nll_loss_backward.h>
#include <ATen/ops/nll_loss_forward.h>
#include <ATen/ops/roll.h>
#include <ATen/ops/scatter.h>
#include <ATen/ops/scatter_add.h>
#include <ATen/ops/scatter_reduce.h>
#include <ATen/ops/tril.h>
#include <ATen/ops/triu.h>

#include <c10/util/accumulate.h>

#include "sim_op.h"
#include "flagos/aclnn/aclnnEmbedding.h"
#include "flagos/aclnn/aclnnEmbeddingDenseBackward.h"
#include "flagos/aclnn/aclnnEye.h"
#include "flagos/aclnn/aclnnFlip.h"
#include "flagos/aclnn/aclnnGather.h"
#include "flagos/aclnn/aclnnIndexSelect.h"
#include "flagos/aclnn/aclnnInplaceMaskedFillScalar.h"
#include "flagos/aclnn/aclnnInplaceMaskedFillTensor.h"
#include "flagos/aclnn/aclnnInplaceScatter.h"
#include "flagos/aclnn/aclnnInplaceScatterValue.h"
#include "flagos/aclnn/aclnnInplaceTril.h"
#include "flagos/aclnn/aclnnInplaceTriu.h"
#include "flagos/aclnn/aclnnLinspace.h"
#include "flagos/aclnn/aclnnNLLLoss.h"
#include "flagos/aclnn/aclnnRoll.h"
#include "flagos/aclnn/aclnnNLLLossBackward.h"
#include "flagos/aclnn/aclnnScatter.h"
#include "flagos/aclnn/aclnnScatterAdd.h"
#include "flagos/aclnn/aclnnScatterValue.h"
#include "flagos/aclnn/aclnnTril.h"
#include "flagos/aclnn/aclnnTriu.h"

using namespace fsim::op;

namespace {

// Dtypes of CANN's operators (910B lists of their op_api CheckDtypeValid),
// where they are narrower than every dtype: a dtype outside fails phase 1
// with ACLNN_ERR_PARAM_INVALID, as on the device.
// aclnnGather, aclnnTril/Triu: no complex.
constexpr DTypes kRealOrBool = kNumeric | kBool;
// aclnnInplaceMaskedFillScalar/Tensor: no double, int16, uint8 or complex.
constexpr DTypes kMaskedFillTypes{ACL_INT32, ACL_INT8, ACL_BOOL, ACL_INT64, ACL_FLOAT, ACL_FLOAT16, ACL_BF16};

constexpr DTypes kIndexTypes{ACL_INT32, ACL_INT64};

bool same_dtype(const aclTensor* a, const aclTensor* b) { return a == nullptr || b == nullptr || a->dtype == b->dtype; }

// ACLNN's reduce codes: 0 replace, 1 add, 2 multiply.
std::optional<c10::string_view> reduce_name(int64_t reduce) {
  if (reduce == 1) return c10::string_view("add");
  if (reduce == 2) return c10::string_view("multiply");
  return std::nullopt;
}

void scatter_into(at::Tensor& target, int64_t dim, const at::Tensor& index, const at::Tensor& src, int64_t reduce) {
  if (reduce != 0) {
    // scatter's `reduce` with a Tensor src is deprecated in ATen: the same sum / product.
    target.copy_(at::scatter_reduce(target, dim, index, src, reduce == 1 ? "sum" : "prod", /*include_self=*/true));
  } else {
    target.copy_(at::scatter(target, dim, index, src));
  }
}

void scatter_value_into(at::Tensor& target, int64_t dim, const at::Tensor& index, const at::Scalar& value,
                        int64_t reduce) {
  const auto name = reduce_name(reduce);
  if (name.has_value()) {
    target.copy_(at::scatter(target, dim, index, value, *name));
  } else {
    target.copy_(at::scatter(target, dim, index, value));
  }
}

}  // namespace

aclnnStatus aclnnIndexSelectGetWorkspaceSize(const aclTensor* self, int64_t dim, const aclTensor* index, aclTensor* out,
                                             uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnIndexSelect", workspaceSize, executor);
  op.arg("self", self).arg("index", index, kIndexTypes).arg("out", out);
  op.require(same_dtype(self, out), "out must have the dtype of self");
  return op.build([dim](Views& v) { at::index_select_out(v["out"], v["self"], dim, v["index"]); });
}
FSIM_PHASE2(aclnnIndexSelect)

aclnnStatus aclnnGatherGetWorkspaceSize(const aclTensor* self, int64_t dim, const aclTensor* index, aclTensor* out,
                                        uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnGather", workspaceSize, executor);
  op.arg("self", self, kRealOrBool).arg("index", index, kIndexTypes).arg("out", out, kRealOrBool);
  op.require(same_dtype(self, out), "out must have the dtype of self");
  return op.build([dim](Views& v) { at::gather_out(v["out"], v["self"], dim, v["index"]); });
}
FSIM_PHASE2(aclnnGather)

aclnnStatus aclnnScatterGetWorkspaceSize(const aclTensor* self, int64_t dim, const aclTensor* index,
                                         const aclTensor* src, int64_t reduce, aclTensor* out, uint64_t* workspaceSize,
                                         aclOpExecutor** executor) {
  Op op("aclnnScatter", workspaceSize, executor);
  op.arg("self", self).arg("index", index, kIndexTypes).arg("src", src).arg("out", out);
  op.require(same_dtype(self, src) && same_dtype(self, out), "self, src and out must have one dtype");
  op.require(reduce >= 0 && reduce <= 2, "reduce must be 0 (none), 1 (add) or 2 (multiply)");
  return op.build([dim, reduce](Views& v) {
    v["out"].copy_(v["self"]);
    scatter_into(v["out"], dim, v["index"], v["src"], reduce);
  });
}
FSIM_PHASE2(aclnnScatter)

aclnnStatus aclnnScatterValueGetWorkspaceSize(const aclTensor* self, int64_t dim, const aclTensor* index,
                                              const aclScalar* value, int64_t reduce, aclTensor* out,
                                              uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnScatterValue", workspaceSize, executor);
  op.arg("self", self).arg("index", index, kIndexTypes).arg("value", value).arg("out", out);
  op.require(same_dtype(self, out), "out must have the dtype of self");
  op.require(reduce >= 0 && reduce <= 2, "reduce must be 0 (none), 1 (add) or 2 (multiply)");
  return op.build([dim, reduce, value = scalarOf(value)](Views& v) {
    v["out"].copy_(v["self"]);
    scatter_value_into(v["out"], dim, v["index"], value, reduce);
  });
}
FSIM_PHASE2(aclnnScatterValue)

aclnnStatus aclnnInplaceScatterGetWorkspaceSize(aclTensor* selfRef, int64_t dim, const aclTensor* index,
                                                const aclTensor* src, int64_t reduce, uint64_t* workspaceSize,
                                                aclOpExecutor** executor) {
  Op op("aclnnInplaceScatter", workspaceSize, executor);
  op.arg("selfRef", selfRef).arg("index", index, kIndexTypes).arg("src", src);
  op.require(same_dtype(selfRef, src), "src must have the dtype of selfRef");
  op.require(reduce >= 0 && reduce <= 2, "reduce must be 0 (none), 1 (add) or 2 (multiply)");
  return op.build([dim, reduce](Views& v) { scatter_into(v["selfRef"], dim, v["index"], v["src"], reduce); });
}
FSIM_PHASE2(aclnnInplaceScatter)

aclnnStatus aclnnInplaceScatterValueGetWorkspaceSize(aclTensor* selfRef, int64_t dim, const aclTensor* index,
                                                     const aclScalar* value, int64_t reduce, uint64_t* workspaceSize,
                                                     aclOpExecutor** executor) {
  Op op("aclnnInplaceScatterValue", workspaceSize, executor);
  op.arg("selfRef", selfRef).arg("index", index, kIndexTypes).arg("value", value);
  op.require(reduce >= 0 && reduce <= 2, "reduce must be 0 (none), 1 (add) or 2 (multiply)");
  return op.build([dim, reduce, value = scalarOf(value)](Views& v) {
    scatter_value_into(v["selfRef"], dim, v["index"], value, reduce);
  });
}
FSIM_PHASE2(aclnnInplaceScatterValue)

aclnnStatus aclnnScatterAddGetWorkspaceSize(const aclTensor* self, int64_t dim, const aclTensor* index,
                                            const aclTensor* src, aclTensor* out, uint64_t* workspaceSize,
                                            aclOpExecutor** executor) {
  Op op("aclnnScatterAdd", workspaceSize, executor);
  op.arg("self", self).arg("index", index, kIndexTypes).arg("src", src).arg("out", out);
  op.require(same_dtype(self, src) && same_dtype(self, out), "self, src and out must have one dtype");
  return op.build([dim](Views& v) { at::scatter_add_out(v["out"], v["self"], dim, v["index"], v["src"]); });
}
FSIM_PHASE2(aclnnScatterAdd)

aclnnStatus aclnnInplaceMaskedFillScalarGetWorkspaceSize(aclTensor* selfRef, const aclTensor* mask,
                                                         const aclScalar* value, uint64_t* workspaceSize,
                                                         aclOpExecutor** executor) {
  Op op("aclnnInplaceMaskedFillScalar", workspaceSize, executor);
  op.arg("selfRef", selfRef, kMaskedFillTypes).arg("mask", mask, kBool).arg("value", value);
  return op.build([value = scalarOf(value)](Views& v) { v["selfRef"].masked_fill_(v["mask"], value); });
}
FSIM_PHASE2(aclnnInplaceMaskedFillScalar)

aclnnStatus aclnnInplaceMaskedFillTensorGetWorkspaceSize(aclTensor* selfRef, const aclTensor* mask,
                                                         const aclTensor* value, uint64_t* workspaceSize,
                                                         aclOpExecutor** executor) {
  Op op("aclnnInplaceMaskedFillTensor", workspaceSize, executor);
  op.arg("selfRef", selfRef, kMaskedFillTypes).arg("mask", mask, kBool).arg("value", value, kMaskedFillTypes);
  op.require(value == nullptr || c10::multiply_integers(value->viewDims) == 1, "value must hold one element");
  return op.build([](Views& v) { v["selfRef"].masked_fill_(v["mask"], v["value"].reshape({})); });
}
FSIM_PHASE2(aclnnInplaceMaskedFillTensor)

aclnnStatus aclnnEmbeddingGetWorkspaceSize(const aclTensor* weight, const aclTensor* indices, const aclTensor* out,
                                           uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnEmbedding", workspaceSize, executor);
  op.arg("weight", weight).arg("indices", indices, kIndexTypes).arg("out", out);
  op.require(same_dtype(weight, out), "out must have the dtype of weight");
  return op.build([](Views& v) { v["out"].copy_(at::embedding(v["weight"], v["indices"])); });
}
FSIM_PHASE2(aclnnEmbedding)

aclnnStatus aclnnEmbeddingDenseBackwardGetWorkspaceSize(const aclTensor* grad, const aclTensor* indices,
                                                        uint64_t numWeights, uint64_t paddingIdx,
                                                        bool scaleGradByFreq, const aclTensor* out,
                                                        uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnEmbeddingDenseBackward", workspaceSize, executor);
  op.arg("grad", grad, kFloating).arg("indices", indices, kIndexTypes).arg("out", out, kFloating);
  op.require(same_dtype(grad, out), "out must have the dtype of grad");
  // A padding index that does not name a row (PyTorch's -1) means none.
  const int64_t padding = paddingIdx >= numWeights ? -1 : static_cast<int64_t>(paddingIdx);
  return op.build([numWeights, padding, scaleGradByFreq](Views& v) {
    v["out"].copy_(at::embedding_dense_backward(v["grad"], v["indices"], static_cast<int64_t>(numWeights), padding,
                                                scaleGradByFreq));
  });
}
FSIM_PHASE2(aclnnEmbeddingDenseBackward)

aclnnStatus aclnnTrilGetWorkspaceSize(const aclTensor* self, int64_t diagonal, aclTensor* out,
                                      uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnTril", workspaceSize, executor);
  op.arg("self", self, kRealOrBool).arg("out", out, kRealOrBool);
  op.require(same_dtype(self, out), "out must have the dtype of self");
  return op.build([diagonal](Views& v) { at::tril_out(v["out"], v["self"], diagonal); });
}
FSIM_PHASE2(aclnnTril)

aclnnStatus aclnnTriuGetWorkspaceSize(const aclTensor* self, int64_t diagonal, aclTensor* out,
                                      uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnTriu", workspaceSize, executor);
  op.arg("self", self, kRealOrBool).arg("out", out, kRealOrBool);
  op.require(same_dtype(self, out), "out must have the dtype of self");
  return op.build([diagonal](Views& v) { at::triu_out(v["out"], v["self"], diagonal); });
}
FSIM_PHASE2(aclnnTriu)

aclnnStatus aclnnInplaceTrilGetWorkspaceSize(const aclTensor* selfRef, int64_t diagonal, uint64_t* workspaceSize,
                                             aclOpExecutor** executor) {
  Op op("aclnnInplaceTril", workspaceSize, executor);
  op.arg("selfRef", selfRef, kRealOrBool);
  return op.build([diagonal](Views& v) { v["selfRef"].copy_(at::tril(v["selfRef"], diagonal)); });
}
FSIM_PHASE2(aclnnInplaceTril)

aclnnStatus aclnnInplaceTriuGetWorkspaceSize(aclTensor* selfRef, int64_t diagonal, uint64_t* workspaceSize,
                                             aclOpExecutor** executor) {
  Op op("aclnnInplaceTriu", workspaceSize, executor);
  op.arg("selfRef", selfRef, kRealOrBool);
  return op.build([diagonal](Views& v) { v["selfRef"].copy_(at::triu(v["selfRef"], diagonal)); });
}
FSIM_PHASE2(aclnnInplaceTriu)

aclnnStatus aclnnFlipGetWorkspaceSize(const aclTensor* self, const aclIntArray* dims, aclTensor* out,
                                      uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnFlip", workspaceSize, executor);
  op.arg("self", self).arg("dims", dims).arg("out", out);
  op.require(same_dtype(self, out), "out must have the dtype of self");
  // CANN checks the dims at phase 1: each in [-rank, rank - 1] (a 0-d self
  // counts as rank 1), none named twice.
  const std::vector<int64_t> flipDims = intsOf(dims);
  if (self) {
    const int64_t rank = std::max<int64_t>(static_cast<int64_t>(self->viewDims.size()), 1);
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (int64_t d : flipDims) {
      const bool inRange = d >= -rank && d < rank;
      op.require(inRange, "Dimension out of range in dims");
      if (!inRange) break;
      const int64_t wrapped = d < 0 ? d + rank : d;
      op.require(!seen[static_cast<size_t>(wrapped)], "a dim appears multiple times in the list of dims");
      seen[static_cast<size_t>(wrapped)] = true;
    }
  }
  return op.build([dims = flipDims](Views& v) { v["out"].copy_(at::flip(v["self"], dims)); });
}
FSIM_PHASE2(aclnnFlip)

// CANN's checks: one shift per dim, or one shift and no dims (a roll of the
// flattened tensor, the only form a 0-d x takes); dims in [-rank, rank - 1]
// unless x is empty.
aclnnStatus aclnnRollGetWorkspaceSize(const aclTensor* x, const aclIntArray* shifts, const aclIntArray* dims,
                                      aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnRoll", workspaceSize, executor);
  op.arg("x", x).arg("shifts", shifts).arg("dims", dims).arg("out", out);
  op.require(same_dtype(x, out), "out must have the dtype of x");
  const std::vector<int64_t> shiftValues = intsOf(shifts);
  const std::vector<int64_t> rollDims = intsOf(dims);
  op.require(rollDims.empty() ? shiftValues.size() == 1 : shiftValues.size() == rollDims.size(),
             "shifts must have one value per dim, or one value when dims is empty");
  if (x) {
    const int64_t rank = static_cast<int64_t>(x->viewDims.size());
    op.require(rank > 0 || rollDims.empty(), "a 0-d x takes no dims");
    for (int64_t d : rollDims) {
      op.require(rank == 0 || (d >= -rank && d < rank), "The values of dims should be in range [-rank, rank - 1]");
    }
  }
  return op.build([shiftValues, rollDims](Views& v) { v["out"].copy_(at::roll(v["x"], shiftValues, rollDims)); });
}
FSIM_PHASE2(aclnnRoll)

aclnnStatus aclnnNLLLossGetWorkspaceSize(const aclTensor* self, const aclTensor* target, const aclTensor* weight,
                                         int64_t reduction, int64_t ignoreIndex, aclTensor* out,
                                         aclTensor* totalWeightOut, uint64_t* workspaceSize,
                                         aclOpExecutor** executor) {
  Op op("aclnnNLLLoss", workspaceSize, executor);
  op.arg("self", self, kFloating).arg("target", target, kIndexTypes | DTypes{ACL_UINT8});
  op.optional("weight", weight, kFloating).arg("out", out, kFloating).arg("totalWeightOut", totalWeightOut, kFloating);
  op.require(reduction >= 0 && reduction <= 2, "reduction must be 0 (none), 1 (mean) or 2 (sum)");
  return op.build([reduction, ignoreIndex](Views& v) {
    const at::Tensor& weight = v["weight"];
    at::nll_loss_forward_out(v["out"], v["totalWeightOut"], v["self"], v["target"].to(at::kLong),
                             weight.defined() ? std::optional<at::Tensor>(weight) : std::nullopt, reduction,
                             ignoreIndex);
  });
}
FSIM_PHASE2(aclnnNLLLoss)

aclnnStatus aclnnNLLLossBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                 const aclTensor* target, const aclTensor* weight, int64_t reduction,
                                                 int64_t ignoreIndex, const aclTensor* totalWeight, aclTensor* out,
                                                 uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnNLLLossBackward", workspaceSize, executor);
  op.arg("gradOutput", gradOutput, kFloating).arg("self", self, kFloating);
  op.arg("target", target, kIndexTypes | DTypes{ACL_UINT8}).optional("weight", weight, kFloating);
  op.arg("totalWeight", totalWeight, kFloating).arg("out", out, kFloating);
  op.require(reduction >= 0 && reduction <= 2, "reduction must be 0 (none), 1 (mean) or 2 (sum)");
  return op.build([reduction, ignoreIndex](Views& v) {
    const at::Tensor& weight = v["weight"];
    at::nll_loss_backward_out(v["out"], v["gradOutput"], v["self"], v["target"].to(at::kLong),
                              weight.defined() ? std::optional<at::Tensor>(weight) : std::nullopt, reduction,
                              ignoreIndex, v["totalWeight"]);
  });
}
FSIM_PHASE2(aclnnNLLLossBackward)

aclnnStatus aclnnEyeGetWorkspaceSize(int64_t n, int64_t m, aclTensor* out, uint64_t* workspaceSize,
                                     aclOpExecutor** executor) {
  Op op("aclnnEye", workspaceSize, executor);
  op.arg("out", out);
  op.require(n >= 0 && m >= 0, "n and m must be non-negative");
  return op.build([n, m](Views& v) { at::eye_out(v["out"], n, m); });
}
FSIM_PHASE2(aclnnEye)

aclnnStatus aclnnLinspaceGetWorkspaceSize(const aclScalar* start, const aclScalar* end, int64_t steps,
                                          aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnLinspace", workspaceSize, executor);
  op.arg("start", start).arg("end", end).arg("out", out);
  op.require(steps >= 0, "steps must be non-negative");
  return op.build([start = scalarOf(start), end = scalarOf(end), steps](Views& v) {
    at::linspace_out(v["out"], start, end, steps);
  });
}
FSIM_PHASE2(aclnnLinspace)
