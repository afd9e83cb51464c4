// Foreach operators: aclnnForeachAddScalarV2, aclnnForeachAddListV2,
// aclnnForeachMulScalarV2, aclnnForeachMulScalar, aclnnForeachMulList,
// aclnnForeachAddcmulScalarV2, aclnnForeachDivScalar,
// aclnnForeachAddcdivScalarList.
// As in CANN, all tensors of a call share one dtype (float32, float16,
// bfloat16 or int32) and out[i] has the shape of x[i]; no broadcasting.
// aclnnForeachMulScalar and the last two take their scalars as a device tensor, read when the kernel
// runs (phase 2), unlike an aclScalar, which phase 1 reads.
#include <ATen/ops/add.h>
#include <ATen/ops/addcdiv.h>
#include <ATen/ops/addcmul.h>
#include <ATen/ops/div.h>
#include <ATen/ops/mul.h>

#include <initializer_list>

#include "sim_op.h"
#include "flagos/aclnn/aclnnForeachAddListV2.h"
#include "flagos/aclnn/aclnnForeachAddScalarV2.h"
#include "flagos/aclnn/aclnnForeachAddcdivScalarList.h"
#include "flagos/aclnn/aclnnForeachAddcmulScalarV2.h"
#include "flagos/aclnn/aclnnForeachDivScalar.h"
#include "flagos/aclnn/aclnnForeachMulList.h"
#include "flagos/aclnn/aclnnForeachMulScalar.h"
#include "flagos/aclnn/aclnnForeachMulScalarV2.h"

using namespace fsim::op;

namespace {

constexpr DTypes kForeachTypes{ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_INT32};
constexpr DTypes kForeachFloatTypes{ACL_FLOAT, ACL_FLOAT16, ACL_BF16};

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

aclnnStatus aclnnForeachMulScalarGetWorkspaceSize(const aclTensorList* x, const aclTensor* scalar,
                                                  const aclTensorList* out, uint64_t* workspaceSize,
                                                  aclOpExecutor** executor) {
  Op op("aclnnForeachMulScalar", workspaceSize, executor);
  op.arg("x", x, kForeachTypes).arg("scalar", scalar, DTypes{ACL_FLOAT, ACL_FLOAT16, ACL_INT32}).arg("out", out,
                                                                                                    kForeachTypes);
  op.require(same_layout({x, out}), kLayout);
  op.require(viewElements(scalar) == 1, "scalar must have one element");
  // CANN (A2/A3): the scalar has the list's dtype; a bfloat16 list takes a float32 one.
  op.require(!x || x->tensors.empty() || !scalar || x->tensors[0] == nullptr ||
                 scalar->dtype == (x->tensors[0]->dtype == ACL_BF16 ? ACL_FLOAT : x->tensors[0]->dtype),
             "scalar must have the list's dtype, or be float32 for a bfloat16 list");
  return op.build([](Views& v) {
    std::vector<at::Tensor>& x = v.list("x");
    std::vector<at::Tensor>& out = v.list("out");
    const at::Scalar factor = v["scalar"].item();
    for (size_t i = 0; i < x.size(); ++i) at::mul_out(out[i], x[i], factor);
  });
}
FSIM_PHASE2(aclnnForeachMulScalar)

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

aclnnStatus aclnnForeachDivScalarGetWorkspaceSize(const aclTensorList* x, const aclTensor* scalar,
                                                  aclTensorList* out, uint64_t* workspaceSize,
                                                  aclOpExecutor** executor) {
  Op op("aclnnForeachDivScalar", workspaceSize, executor);
  op.arg("x", x, kForeachFloatTypes).arg("scalar", scalar, DTypes{ACL_FLOAT, ACL_FLOAT16}).arg("out", out,
                                                                                               kForeachFloatTypes);
  op.require(same_layout({x, out}), kLayout);
  op.require(viewElements(scalar) == 1, "scalar must have one element");
  // CANN: a float16 list takes a float16 scalar, float32 and bfloat16 lists a float32 one.
  op.require(!x || x->tensors.empty() || !scalar || x->tensors[0] == nullptr ||
                 scalar->dtype == (x->tensors[0]->dtype == ACL_FLOAT16 ? ACL_FLOAT16 : ACL_FLOAT),
             "scalar must be float16 for a float16 list, float32 otherwise");
  return op.build([](Views& v) {
    std::vector<at::Tensor>& x = v.list("x");
    std::vector<at::Tensor>& out = v.list("out");
    const at::Tensor divisor = v["scalar"].reshape({});
    for (size_t i = 0; i < x.size(); ++i) at::div_out(out[i], x[i], divisor);
  });
}
FSIM_PHASE2(aclnnForeachDivScalar)

aclnnStatus aclnnForeachAddcdivScalarListGetWorkspaceSize(const aclTensorList* x1, const aclTensorList* x2,
                                                          const aclTensorList* x3, const aclTensor* scalars,
                                                          aclTensorList* out, uint64_t* workspaceSize,
                                                          aclOpExecutor** executor) {
  Op op("aclnnForeachAddcdivScalarList", workspaceSize, executor);
  op.arg("x1", x1, kForeachFloatTypes).arg("x2", x2, kForeachFloatTypes).arg("x3", x3, kForeachFloatTypes)
      .arg("scalars", scalars, kForeachFloatTypes).arg("out", out, kForeachFloatTypes);
  op.require(same_layout({x1, x2, x3, out}), kLayout);
  op.require(!x1 || viewElements(scalars) == static_cast<int64_t>(x1->tensors.size()),
             "scalars must have one element per tensor of x1");
  return op.build([](Views& v) {
    std::vector<at::Tensor>& x1 = v.list("x1");
    std::vector<at::Tensor>& x2 = v.list("x2");
    std::vector<at::Tensor>& x3 = v.list("x3");
    std::vector<at::Tensor>& out = v.list("out");
    // Read now, at phase 2: the value of this launch, wherever the cache rebound the tensor.
    const at::Tensor values = v["scalars"].reshape({-1}).to(at::kDouble);
    const double* value = values.const_data_ptr<double>();
    for (size_t i = 0; i < x1.size(); ++i) at::addcdiv_out(out[i], x1[i], x2[i], x3[i], value[i]);
  });
}
FSIM_PHASE2(aclnnForeachAddcdivScalarList)
