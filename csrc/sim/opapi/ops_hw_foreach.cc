// Foreach operators: aclnnForeachAddScalarV2, aclnnForeachAddListV2,
// aclnnForeachMulScalarV2, aclnnForeachMulList, aclnnForeachAddcmulScalarV2.
// As in CANN, all tensors of a call share one dtype (float32, float16,
// bfloat16 or int32) and out[i] has the shape of x[i]; no broadcasting.
#include <ATen/ops/add.h>
#include <ATen/ops/addcmul.h>
#include <ATen/ops/mul.h>

#include <initializer_list>

#include "sim_op.h"
#include "aclnn/aclnnForeachAddListV2.h"
#include "aclnn/aclnnForeachAddScalarV2.h"
#include "aclnn/aclnnForeachAddcmulScalarV2.h"
#include "aclnn/aclnnForeachMulList.h"
#include "aclnn/aclnnForeachMulScalarV2.h"

using namespace fsim::op;

namespace {

constexpr DTypes kForeachTypes{ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_INT32};

// Every list as long as the first, element i of each with the shape and dtype of the first's.
bool same_layout(std::initializer_list<const aclTensorList*> lists) {
  const aclTensorList* first = *lists.begin();
  for (const aclTensorList* list : lists) {
    if (first == nullptr || list == nullptr) return true;  // op.arg reports it
    if (list->tensors.size() != first->tensors.size()) return false;
    for (size_t i = 0; i < list->tensors.size(); ++i) {
      const aclTensor* a = first->tensors[i];
      const aclTensor* b = list->tensors[i];
      if (a != nullptr && b != nullptr && (a->viewDims != b->viewDims || a->dtype != b->dtype)) return false;
    }
  }
  return true;
}

constexpr const char* kLayout = "every list must have the length of x, and element i the shape and dtype of x[i]";

}  // namespace

aclnnStatus aclnnForeachAddScalarV2GetWorkspaceSize(const aclTensorList* x, const aclScalar* scalar,
                                                    aclTensorList* out, uint64_t* workspaceSize,
                                                    aclOpExecutor** executor) {
  Op op("aclnnForeachAddScalarV2", workspaceSize, executor);
  op.arg("x", x, kForeachTypes).arg("scalar", scalar).arg("out", out, kForeachTypes);
  op.require(same_layout({x, out}), kLayout);
  return op.build([scalar = scalarOf(scalar)](Views& v) {
    std::vector<at::Tensor>& x = v.list("x");
    std::vector<at::Tensor>& out = v.list("out");
    for (size_t i = 0; i < x.size(); ++i) at::add_out(out[i], x[i], scalar);
  });
}
FSIM_PHASE2(aclnnForeachAddScalarV2)

aclnnStatus aclnnForeachAddListV2GetWorkspaceSize(const aclTensorList* x1, const aclTensorList* x2,
                                                  const aclScalar* alpha, aclTensorList* out,
                                                  uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnForeachAddListV2", workspaceSize, executor);
  op.arg("x1", x1, kForeachTypes).arg("x2", x2, kForeachTypes).arg("alpha", alpha).arg("out", out, kForeachTypes);
  op.require(same_layout({x1, x2, out}), kLayout);
  return op.build([alpha = scalarOf(alpha)](Views& v) {
    std::vector<at::Tensor>& x1 = v.list("x1");
    std::vector<at::Tensor>& x2 = v.list("x2");
    std::vector<at::Tensor>& out = v.list("out");
    for (size_t i = 0; i < x1.size(); ++i) at::add_out(out[i], x1[i], x2[i], alpha);
  });
}
FSIM_PHASE2(aclnnForeachAddListV2)

aclnnStatus aclnnForeachMulScalarV2GetWorkspaceSize(const aclTensorList* x, const aclScalar* scalar,
                                                    aclTensorList* out, uint64_t* workspaceSize,
                                                    aclOpExecutor** executor) {
  Op op("aclnnForeachMulScalarV2", workspaceSize, executor);
  op.arg("x", x, kForeachTypes).arg("scalar", scalar).arg("out", out, kForeachTypes);
  op.require(same_layout({x, out}), kLayout);
  return op.build([scalar = scalarOf(scalar)](Views& v) {
    std::vector<at::Tensor>& x = v.list("x");
    std::vector<at::Tensor>& out = v.list("out");
    for (size_t i = 0; i < x.size(); ++i) at::mul_out(out[i], x[i], scalar);
  });
}
FSIM_PHASE2(aclnnForeachMulScalarV2)

aclnnStatus aclnnForeachMulListGetWorkspaceSize(const aclTensorList* x1, const aclTensorList* x2,
                                                aclTensorList* out, uint64_t* workspaceSize,
                                                aclOpExecutor** executor) {
  Op op("aclnnForeachMulList", workspaceSize, executor);
  op.arg("x1", x1, kForeachTypes).arg("x2", x2, kForeachTypes).arg("out", out, kForeachTypes);
  op.require(same_layout({x1, x2, out}), kLayout);
  return op.build([](Views& v) {
    std::vector<at::Tensor>& x1 = v.list("x1");
    std::vector<at::Tensor>& x2 = v.list("x2");
    std::vector<at::Tensor>& out = v.list("out");
    for (size_t i = 0; i < x1.size(); ++i) at::mul_out(out[i], x1[i], x2[i]);
  });
}
FSIM_PHASE2(aclnnForeachMulList)

aclnnStatus aclnnForeachAddcmulScalarV2GetWorkspaceSize(const aclTensorList* x1, const aclTensorList* x2,
                                                        const aclTensorList* x3, const aclScalar* scalar,
                                                        aclTensorList* out, uint64_t* workspaceSize,
                                                        aclOpExecutor** executor) {
  Op op("aclnnForeachAddcmulScalarV2", workspaceSize, executor);
  op.arg("x1", x1, kForeachTypes).arg("x2", x2, kForeachTypes).arg("x3", x3, kForeachTypes).arg("scalar", scalar)
      .arg("out", out, kForeachTypes);
  op.require(same_layout({x1, x2, x3, out}), kLayout);
  return op.build([scalar = scalarOf(scalar)](Views& v) {
    std::vector<at::Tensor>& x1 = v.list("x1");
    std::vector<at::Tensor>& x2 = v.list("x2");
    std::vector<at::Tensor>& x3 = v.list("x3");
    std::vector<at::Tensor>& out = v.list("out");
    for (size_t i = 0; i < x1.size(); ++i) at::addcmul_out(out[i], x1[i], x2[i], x3[i], scalar);
  });
}
FSIM_PHASE2(aclnnForeachAddcmulScalarV2)
