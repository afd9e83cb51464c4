// Advanced indexing: aclnnIndex, aclnnIndexPutImpl. `indices` holds one
// tensor per leading dim of self; an empty tensor stands for a dim that is
// not indexed (a `None` / `:` in Python), as op-plugin passes them.
#include <ATen/ops/index.h>
#include <ATen/ops/index_put.h>

#include "sim_op.h"
#include "flagos/aclnn/aclnnIndex.h"
#include "flagos/aclnn/aclnnIndexPutImpl.h"

using namespace fsim::op;

namespace {

constexpr DTypes kHwIndexTypes{ACL_INT32, ACL_INT64, ACL_BOOL};
// The values CANN's aclnnIndex and aclnnIndexPutImpl take (910B): no complex.
constexpr DTypes kValueTypes = kNumeric | kBool;

c10::List<std::optional<at::Tensor>> index_list(const std::vector<at::Tensor>& indices) {
  c10::List<std::optional<at::Tensor>> list;
  for (const at::Tensor& index : indices) {
    list.push_back(index.numel() == 0 ? std::nullopt : std::optional<at::Tensor>(index));
  }
  return list;
}

}  // namespace

aclnnStatus aclnnIndexGetWorkspaceSize(const aclTensor* self, const aclTensorList* indices, aclTensor* out,
                                       uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnIndex", workspaceSize, executor);
  op.arg("self", self, kValueTypes).arg("indices", indices, kHwIndexTypes).arg("out", out, kValueTypes);
  op.require(self == nullptr || out == nullptr || self->dtype == out->dtype, "out must have the dtype of self");
  return op.build([](Views& v) { at::index_out(v["out"], v["self"], index_list(v.list("indices"))); });
}
FSIM_PHASE2(aclnnIndex)

aclnnStatus aclnnIndexPutImplGetWorkspaceSize(aclTensor* selfRef, const aclTensorList* indices,
                                              const aclTensor* values, bool accumulate, bool /*unsafe*/,
                                              uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnIndexPutImpl", workspaceSize, executor);
  op.arg("selfRef", selfRef, kValueTypes).arg("indices", indices, kHwIndexTypes).arg("values", values, kValueTypes);
  op.require(selfRef == nullptr || values == nullptr || selfRef->dtype == values->dtype,
             "values must have the dtype of selfRef");
  // ATen checks the bounds whatever `unsafe` says.
  return op.build([accumulate](Views& v) {
    at::index_put_(v["selfRef"], index_list(v.list("indices")), v["values"], accumulate);
  });
}
FSIM_PHASE2(aclnnIndexPutImpl)
