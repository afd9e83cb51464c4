// Sorting and selection: aclnnSort, aclnnTopk.
#include <ATen/ops/sort.h>
#include <ATen/ops/topk.h>

#include "sim_op.h"
#include "flagos/aclnn/aclnnSort.h"
#include "flagos/aclnn/aclnnTopk.h"

using namespace fsim::op;

namespace {

constexpr DTypes kSortable = kNumeric | kBool;

bool sort_dim_in_range(const aclTensor* self, int64_t dim) {
  if (self == nullptr) return true;
  const auto rank = static_cast<int64_t>(self->viewDims.size());
  return rank > 0 && dim >= -rank && dim < rank;
}

int64_t size_at(const aclTensor& self, int64_t dim) {
  const auto rank = static_cast<int64_t>(self.viewDims.size());
  return self.viewDims[dim < 0 ? dim + rank : dim];
}

}  // namespace

aclnnStatus aclnnSortGetWorkspaceSize(const aclTensor* self, bool stable, int64_t dim, bool descending,
                                      aclTensor* valuesOut, aclTensor* indicesOut, uint64_t* workspaceSize,
                                      aclOpExecutor** executor) {
  Op op("aclnnSort", workspaceSize, executor);
  op.arg("self", self, kSortable).arg("valuesOut", valuesOut, kSortable).arg("indicesOut", indicesOut, {ACL_INT64});
  op.require(sort_dim_in_range(self, dim), "dim is out of range (self must be 1-D or more)");
  return op.build([stable, dim, descending](Views& v) {
    at::sort_out(v["valuesOut"], v["indicesOut"], v["self"], stable, dim, descending);
  });
}
FSIM_PHASE2(aclnnSort)

aclnnStatus aclnnTopkGetWorkspaceSize(const aclTensor* self, int64_t k, int64_t dim, bool largest, bool sorted,
                                      aclTensor* valuesOut, aclTensor* indicesOut, uint64_t* workspaceSize,
                                      aclOpExecutor** executor) {
  Op op("aclnnTopk", workspaceSize, executor);
  op.arg("self", self, kNumeric).arg("valuesOut", valuesOut, kNumeric).arg("indicesOut", indicesOut, {ACL_INT64});
  op.require(sort_dim_in_range(self, dim), "dim is out of range (self must be 1-D or more)");
  op.require(self == nullptr || !sort_dim_in_range(self, dim) || (k >= 0 && k <= size_at(*self, dim)),
             "k must be in [0, self.size(dim)]");
  // CANN supports sorted=true only.
  op.require(sorted, "sorted must be true");
  return op.build([k, dim, largest](Views& v) {
    at::topk_out(v["valuesOut"], v["indicesOut"], v["self"], k, dim, largest, /*sorted=*/true);
  });
}
FSIM_PHASE2(aclnnTopk)
