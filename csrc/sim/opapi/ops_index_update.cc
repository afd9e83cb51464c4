// Writes along one dim at the positions an index lists: aclnnIndexCopy
// (index_copy: self with source's slices, into out), aclnnInplaceIndexCopy
// (index_copy_), aclnnIndexAdd (index_add with alpha).
#include <ATen/ops/index_add.h>
#include <ATen/ops/index_copy.h>

#include <algorithm>

#include "sim_op.h"
#include "flagos/aclnn/aclnnIndexAdd.h"
#include "flagos/aclnn/aclnnIndexCopy.h"
#include "flagos/aclnn/aclnnInplaceIndexCopy.h"

using namespace fsim::op;

namespace {

constexpr DTypes kIndexUpdateIndex{ACL_INT32, ACL_INT64};

bool sameIndexUpdateDtype(const aclTensor* a, const aclTensor* b) {
  return a == nullptr || b == nullptr || a->dtype == b->dtype;
}

// dim in [-rank, rank - 1]; a 0-d tensor counts as rank 1.
bool indexUpdateDimInRange(const aclTensor* self, int64_t dim) {
  if (self == nullptr) return true;
  const int64_t rank = std::max<int64_t>(static_cast<int64_t>(self->viewDims.size()), 1);
  return dim >= -rank && dim < rank;
}

}  // namespace

aclnnStatus aclnnInplaceIndexCopyGetWorkspaceSize(aclTensor* selfRef, int64_t dim, const aclTensor* index,
                                                  const aclTensor* source, uint64_t* workspaceSize,
                                                  aclOpExecutor** executor) {
  Op op("aclnnInplaceIndexCopy", workspaceSize, executor);
  op.arg("selfRef", selfRef).arg("index", index, kIndexUpdateIndex).arg("source", source);
  op.require(sameIndexUpdateDtype(selfRef, source), "source must have the dtype of selfRef");
  op.require(indexUpdateDimInRange(selfRef, dim), "dim out of range");
  return op.build([dim](Views& v) { v["selfRef"].index_copy_(dim, v["index"], v["source"]); });
}
FSIM_PHASE2(aclnnInplaceIndexCopy)

aclnnStatus aclnnIndexCopyGetWorkspaceSize(aclTensor* selfRef, int64_t dim, const aclTensor* index,
                                           const aclTensor* source, aclTensor* outRef, uint64_t* workspaceSize,
                                           aclOpExecutor** executor) {
  Op op("aclnnIndexCopy", workspaceSize, executor);
  op.arg("selfRef", selfRef).arg("index", index, kIndexUpdateIndex).arg("source", source).arg("outRef", outRef);
  op.require(sameIndexUpdateDtype(selfRef, source) && sameIndexUpdateDtype(selfRef, outRef),
             "selfRef, source and outRef must have one dtype");
  op.require(indexUpdateDimInRange(selfRef, dim), "dim out of range");
  return op.build([dim](Views& v) { at::index_copy_out(v["outRef"], v["selfRef"], dim, v["index"], v["source"]); });
}
FSIM_PHASE2(aclnnIndexCopy)

aclnnStatus aclnnIndexAddGetWorkspaceSize(const aclTensor* self, const int64_t dim, const aclTensor* index,
                                          const aclTensor* source, const aclScalar* alpha, aclTensor* out,
                                          uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnIndexAdd", workspaceSize, executor);
  op.arg("self", self, kNumeric).arg("index", index, kIndexUpdateIndex).arg("source", source, kNumeric);
  op.arg("alpha", alpha).arg("out", out, kNumeric);
  op.require(sameIndexUpdateDtype(self, source) && sameIndexUpdateDtype(self, out),
             "self, source and out must have one dtype");
  op.require(indexUpdateDimInRange(self, dim), "dim out of range");
  return op.build([dim, alpha = scalarOf(alpha)](Views& v) {
    at::index_add_out(v["out"], v["self"], dim, v["index"], v["source"], alpha);
  });
}
FSIM_PHASE2(aclnnIndexAdd)
