// Comparisons into a bool `out`: aclnn{Eq,Ne,Lt,Le,Gt,Ge}{Tensor,Scalar}, and
// aclnnEqual (whole tensors, one bool).
#include <ATen/ops/eq.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/ge.h>
#include <ATen/ops/gt.h>
#include <ATen/ops/le.h>
#include <ATen/ops/lt.h>
#include <ATen/ops/ne.h>

#include "sim_op.h"
#include "flagos/aclnn/aclnnEqScalar.h"
#include "flagos/aclnn/aclnnEqTensor.h"
#include "flagos/aclnn/aclnnEqual.h"
#include "flagos/aclnn/aclnnGeScalar.h"
#include "flagos/aclnn/aclnnGeTensor.h"
#include "flagos/aclnn/aclnnGtScalar.h"
#include "flagos/aclnn/aclnnGtTensor.h"
#include "flagos/aclnn/aclnnLeScalar.h"
#include "flagos/aclnn/aclnnLeTensor.h"
#include "flagos/aclnn/aclnnLtScalar.h"
#include "flagos/aclnn/aclnnLtTensor.h"
#include "flagos/aclnn/aclnnNeScalar.h"
#include "flagos/aclnn/aclnnNeTensor.h"

using namespace fsim::op;

#define FSIM_COMPARE(name, aten_out)                                                                          \
  aclnnStatus aclnn##name##TensorGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out, \
                                                  uint64_t* workspaceSize, aclOpExecutor** executor) {        \
    Op op("aclnn" #name "Tensor", workspaceSize, executor);                                                   \
    op.arg("self", self, kNumeric | kBool).arg("other", other, kNumeric | kBool).arg("out", out, kBool);      \
    return op.build([](Views& v) { aten_out(v["out"], v["self"], v["other"]); });                             \
  }                                                                                                           \
  FSIM_PHASE2(aclnn##name##Tensor)                                                                            \
  aclnnStatus aclnn##name##ScalarGetWorkspaceSize(const aclTensor* self, const aclScalar* other, aclTensor* out, \
                                                  uint64_t* workspaceSize, aclOpExecutor** executor) {        \
    Op op("aclnn" #name "Scalar", workspaceSize, executor);                                                   \
    op.arg("self", self, kNumeric | kBool).arg("other", other).arg("out", out, kBool);                        \
    return op.build([other = scalarOf(other)](Views& v) { aten_out(v["out"], v["self"], other); });           \
  }                                                                                                           \
  FSIM_PHASE2(aclnn##name##Scalar)

FSIM_COMPARE(Eq, at::eq_out)
FSIM_COMPARE(Ne, at::ne_out)
FSIM_COMPARE(Lt, at::lt_out)
FSIM_COMPARE(Le, at::le_out)
FSIM_COMPARE(Gt, at::gt_out)
FSIM_COMPARE(Ge, at::ge_out)

// CANN's aclnnEqual: `out` is a bool tensor of shape [1]; operands of other
// shapes are unequal (empty ones of one shape equal), and operands of two
// dtypes compare after promotion.
aclnnStatus aclnnEqualGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                       uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnEqual", workspaceSize, executor);
  op.arg("self", self, kNumeric | kBool).arg("other", other, kNumeric | kBool).arg("out", out, kBool);
  op.require(!out || (out->viewDims.size() == 1 && out->viewDims[0] == 1), "out must have shape [1]");
  return op.build([](Views& v) {
    const at::Tensor& self = v["self"];
    const at::Tensor& other = v["other"];
    bool equal = self.sizes().equals(other.sizes());
    if (equal && self.numel() > 0) {
      const at::ScalarType common = c10::promoteTypes(self.scalar_type(), other.scalar_type());
      equal = at::equal(self.to(common), other.to(common));
    }
    v["out"].fill_(equal);
  });
}
FSIM_PHASE2(aclnnEqual)
