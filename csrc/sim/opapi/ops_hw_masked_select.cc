// aclnnMaskedSelect: the elements of self where mask is true, as a 1-D tensor.
#include <ATen/ops/masked_select.h>

#include <algorithm>

#include "sim_op.h"
#include "flagos/aclnn/aclnnMaskedSelect.h"

using namespace fsim::op;

namespace {

// The element count of `a` and `b` broadcast together; -1 if they do not broadcast.
int64_t broadcast_numel(const aclTensor& a, const aclTensor& b) {
  const size_t rank = std::max(a.viewDims.size(), b.viewDims.size());
  int64_t numel = 1;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i < a.viewDims.size() ? a.viewDims[a.viewDims.size() - 1 - i] : 1;
    const int64_t y = i < b.viewDims.size() ? b.viewDims[b.viewDims.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) return -1;
    numel *= x == 1 ? y : x;
  }
  return numel;
}

int64_t numel_of(const aclTensor& t) {
  int64_t numel = 1;
  for (int64_t size : t.viewDims) numel *= size;
  return numel;
}

}  // namespace

// out is 1-D with room for every element of the broadcast shape (as in CANN);
// the selected elements fill its front. Its output shape depends on the
// data, so CANN's executor cannot be made repeatable.
aclnnStatus aclnnMaskedSelectGetWorkspaceSize(const aclTensor* self, const aclTensor* mask, aclTensor* out,
                                              uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnMaskedSelect", workspaceSize, executor);
  op.arg("self", self).arg("mask", mask, {ACL_BOOL, ACL_UINT8}).arg("out", out).unrepeatable();
  op.require(self == nullptr || mask == nullptr || broadcast_numel(*self, *mask) >= 0,
             "self and mask cannot be broadcast together");
  op.require(self == nullptr || mask == nullptr || out == nullptr ||
                 (out->viewDims.size() == 1 && numel_of(*out) == broadcast_numel(*self, *mask)),
             "out must be 1-D with as many elements as self and mask broadcast together");
  op.require(self == nullptr || out == nullptr || self->dtype == out->dtype, "out must have the dtype of self");
  return op.build([](Views& v) {
    const at::Tensor selected = at::masked_select(v["self"], v["mask"].to(at::kBool));
    v["out"].narrow(0, 0, selected.numel()).copy_(selected);
  });
}
FSIM_PHASE2(aclnnMaskedSelect)
