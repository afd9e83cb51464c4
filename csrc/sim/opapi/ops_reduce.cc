// Reductions and softmax: aclnnReduceSum, aclnnMean, aclnnAmax, aclnnAmin,
// aclnnSoftmax, aclnnLogSoftmax.
#include <ATen/ops/_log_softmax.h>
#include <ATen/ops/_softmax.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/amin.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/sum.h>

#include <algorithm>

#include "sim_op.h"
#include "flagos/aclnn/aclnnAmax.h"
#include "flagos/aclnn/aclnnAmin.h"
#include "flagos/aclnn/aclnnLogSoftmax.h"
#include "flagos/aclnn/aclnnMean.h"
#include "flagos/aclnn/aclnnReduceSum.h"
#include "flagos/aclnn/aclnnSoftmax.h"

using namespace fsim::op;

aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim,
                                           aclDataType dtype, aclTensor* out, uint64_t* workspaceSize,
                                           aclOpExecutor** executor) {
  Op op("aclnnReduceSum", workspaceSize, executor);
  op.arg("self", self, kNumeric | kBool).arg("dim", dim).dtype("dtype", dtype, kNumeric).arg("out", out, kNumeric);
  op.require(out == nullptr || out->dtype == dtype, "argument 'out' must have the dtype given by 'dtype'");
  return op.build([dims = intsOf(dim), keepDim, type = scalarTypeOf(dtype)](Views& v) {
    at::sum_out(v["out"], v["self"], dims, keepDim, type);
  });
}
FSIM_PHASE2(aclnnReduceSum)

aclnnStatus aclnnMeanGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim,
                                      aclDataType dtype, aclTensor* out, uint64_t* workspaceSize,
                                      aclOpExecutor** executor) {
  Op op("aclnnMean", workspaceSize, executor);
  op.arg("self", self, kFloating | kComplex).arg("dim", dim).dtype("dtype", dtype, kFloating | kComplex)
      .arg("out", out, kFloating | kComplex);
  op.require(out == nullptr || out->dtype == dtype, "argument 'out' must have the dtype given by 'dtype'");
  return op.build([dims = intsOf(dim), keepDim, type = scalarTypeOf(dtype)](Views& v) {
    at::mean_out(v["out"], v["self"], dims, keepDim, type);
  });
}
FSIM_PHASE2(aclnnMean)

aclnnStatus aclnnAmaxGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim, aclTensor* out,
                                      uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnAmax", workspaceSize, executor);
  op.arg("self", self, kNumeric | kBool).arg("dim", dim).arg("out", out, kNumeric | kBool);
  return op.build([dims = intsOf(dim), keepDim](Views& v) { at::amax_out(v["out"], v["self"], dims, keepDim); });
}
FSIM_PHASE2(aclnnAmax)

aclnnStatus aclnnAminGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim, aclTensor* out,
                                      uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnAmin", workspaceSize, executor);
  op.arg("self", self, kNumeric | kBool).arg("dim", dim).arg("out", out, kNumeric | kBool);
  return op.build([dims = intsOf(dim), keepDim](Views& v) { at::amin_out(v["out"], v["self"], dims, keepDim); });
}
FSIM_PHASE2(aclnnAmin)

aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor* self, int64_t dim, aclTensor* out,
                                         uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnSoftmax", workspaceSize, executor);
  op.arg("self", self, kFloating).arg("out", out, kFloating);
  op.require(self == nullptr || (dim >= -static_cast<int64_t>(self->viewDims.size()) &&
                                 dim < std::max<int64_t>(self->viewDims.size(), 1)),
             "dim is out of range");
  return op.build([dim](Views& v) { v["out"].copy_(at::_softmax(v["self"], dim, false)); });
}
FSIM_PHASE2(aclnnSoftmax)

aclnnStatus aclnnLogSoftmaxGetWorkspaceSize(const aclTensor* self, int64_t dim, aclTensor* out,
                                            uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnLogSoftmax", workspaceSize, executor);
  op.arg("self", self, kFloating).arg("out", out, kFloating);
  op.require(self == nullptr || (dim >= -static_cast<int64_t>(self->viewDims.size()) &&
                                 dim < std::max<int64_t>(self->viewDims.size(), 1)),
             "dim is out of range");
  return op.build([dim](Views& v) { v["out"].copy_(at::_log_softmax(v["self"], dim, false)); });
}
FSIM_PHASE2(aclnnLogSoftmax)
