// More reductions and scans: aclnnProd, aclnnProdDim, aclnnMax, aclnnMin,
// aclnnMaxDim, aclnnMinDim, aclnnArgMax, aclnnArgMin, aclnnAny, aclnnAll,
// aclnnNorm, aclnnLinalgVectorNorm, aclnnVarCorrection, aclnnStd,
// aclnnVarMean, aclnnStdMeanCorrection, aclnnLogSumExp, aclnnCumsum,
// aclnnCumprod.
#include <ATen/ops/all.h>
#include <ATen/ops/any.h>
#include <ATen/ops/argmax.h>
#include <ATen/ops/argmin.h>
#include <ATen/ops/cumprod.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/ops/logsumexp.h>
#include <ATen/ops/max.h>
#include <ATen/ops/min.h>
#include <ATen/ops/norm.h>
#include <ATen/ops/prod.h>
#include <ATen/ops/std.h>
#include <ATen/ops/std_mean.h>
#include <ATen/ops/var.h>
#include <ATen/ops/var_mean.h>

#include <algorithm>

#include "sim_op.h"
#include "flagos/aclnn/aclnnAll.h"
#include "flagos/aclnn/aclnnAny.h"
#include "flagos/aclnn/aclnnArgMax.h"
#include "flagos/aclnn/aclnnArgMin.h"
#include "flagos/aclnn/aclnnCumprod.h"
#include "flagos/aclnn/aclnnCumsum.h"
#include "flagos/aclnn/aclnnLinalgVectorNorm.h"
#include "flagos/aclnn/aclnnLogSumExp.h"
#include "flagos/aclnn/aclnnMax.h"
#include "flagos/aclnn/aclnnMaxDim.h"
#include "flagos/aclnn/aclnnMin.h"
#include "flagos/aclnn/aclnnMinDim.h"
#include "flagos/aclnn/aclnnNorm.h"
#include "flagos/aclnn/aclnnProd.h"
#include "flagos/aclnn/aclnnProdDim.h"
#include "flagos/aclnn/aclnnStd.h"
#include "flagos/aclnn/aclnnStdMeanCorrection.h"
#include "flagos/aclnn/aclnnVarCorrection.h"
#include "flagos/aclnn/aclnnVarMean.h"

using namespace fsim::op;

namespace {

constexpr DTypes kOrdered = kNumeric | kBool;

bool dim_in_range(const aclTensor* self, int64_t dim) {
  if (self == nullptr) return true;
  const auto rank = std::max<int64_t>(static_cast<int64_t>(self->viewDims.size()), 1);
  return dim >= -rank && dim < rank;
}

bool out_has(const aclTensor* out, aclDataType dtype) { return out == nullptr || out->dtype == dtype; }

}  // namespace

aclnnStatus aclnnProdGetWorkspaceSize(const aclTensor* self, aclDataType dtype, aclTensor* out,
                                      uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnProd", workspaceSize, executor);
  op.arg("self", self, kNumeric | kBool).dtype("dtype", dtype, kNumeric).arg("out", out, kNumeric);
  op.require(out_has(out, dtype), "argument 'out' must have the dtype given by 'dtype'");
  return op.build([type = scalarTypeOf(dtype)](Views& v) { at::prod_out(v["out"], v["self"], type); });
}
FSIM_PHASE2(aclnnProd)

aclnnStatus aclnnProdDimGetWorkspaceSize(const aclTensor* self, int64_t dim, bool keepDim, aclDataType dtype,
                                         aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnProdDim", workspaceSize, executor);
  op.arg("self", self, kNumeric | kBool).dtype("dtype", dtype, kNumeric).arg("out", out, kNumeric);
  op.require(dim_in_range(self, dim), "dim is out of range");
  op.require(out_has(out, dtype), "argument 'out' must have the dtype given by 'dtype'");
  return op.build([dim, keepDim, type = scalarTypeOf(dtype)](Views& v) {
    at::prod_out(v["out"], v["self"], dim, keepDim, type);
  });
}
FSIM_PHASE2(aclnnProdDim)

// aclnnMax, aclnnMin: the extreme of all of self.
#define FSIM_EXTREME_OF_ALL(api, aten_out)                                                                      \
  aclnnStatus api##GetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* workspaceSize,            \
                                    aclOpExecutor** executor) {                                                \
    Op op(#api, workspaceSize, executor);                                                                      \
    op.arg("self", self, kOrdered).arg("out", out, kOrdered);                                                  \
    return op.build([](Views& v) { aten_out(v["out"], v["self"]); });                                          \
  }                                                                                                            \
  FSIM_PHASE2(api)

FSIM_EXTREME_OF_ALL(aclnnMax, at::max_out)
FSIM_EXTREME_OF_ALL(aclnnMin, at::min_out)

// aclnnMaxDim, aclnnMinDim: values and their indices along `dim`.
#define FSIM_EXTREME_ALONG_DIM(api, aten_out)                                                                   \
  aclnnStatus api##GetWorkspaceSize(const aclTensor* self, int64_t dim, bool keepdim, aclTensor* out,          \
                                    aclTensor* indices, uint64_t* workspaceSize, aclOpExecutor** executor) {   \
    Op op(#api, workspaceSize, executor);                                                                      \
    op.arg("self", self, kOrdered).arg("out", out, kOrdered).arg("indices", indices, {ACL_INT64});             \
    op.require(dim_in_range(self, dim), "dim is out of range");                                                \
    return op.build([dim, keepdim](Views& v) { aten_out(v["out"], v["indices"], v["self"], dim, keepdim); });  \
  }                                                                                                            \
  FSIM_PHASE2(api)

FSIM_EXTREME_ALONG_DIM(aclnnMaxDim, at::max_out)
FSIM_EXTREME_ALONG_DIM(aclnnMinDim, at::min_out)

// aclnnArgMax, aclnnArgMin: the indices along `dim`.
#define FSIM_INDEX_OF_EXTREME(api, aten_out)                                                                    \
  aclnnStatus api##GetWorkspaceSize(const aclTensor* self, int64_t dim, bool keepdim, aclTensor* out,          \
                                    uint64_t* workspaceSize, aclOpExecutor** executor) {                       \
    Op op(#api, workspaceSize, executor);                                                                      \
    op.arg("self", self, kNumeric).arg("out", out, {ACL_INT64});                                               \
    op.require(dim_in_range(self, dim), "dim is out of range");                                                \
    return op.build([dim, keepdim](Views& v) { aten_out(v["out"], v["self"], dim, keepdim); });                \
  }                                                                                                            \
  FSIM_PHASE2(api)

FSIM_INDEX_OF_EXTREME(aclnnArgMax, at::argmax_out)
FSIM_INDEX_OF_EXTREME(aclnnArgMin, at::argmin_out)

// aclnnAny, aclnnAll: a bool (or uint8) result over `dim`.
#define FSIM_TRUTH_OVER_DIMS(api, aten_out)                                                                     \
  aclnnStatus api##GetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepdim, aclTensor* out, \
                                    uint64_t* workspaceSize, aclOpExecutor** executor) {                       \
    Op op(#api, workspaceSize, executor);                                                                      \
    op.arg("self", self, kNumeric | kBool).arg("dim", dim).arg("out", out, kBool | DTypes{ACL_UINT8});         \
    return op.build([dims = intsOf(dim), keepdim](Views& v) {                                                  \
      aten_out(v["out"], v["self"], at::OptionalIntArrayRef(dims), keepdim);                                   \
    });                                                                                                        \
  }                                                                                                            \
  FSIM_PHASE2(api)

FSIM_TRUTH_OVER_DIMS(aclnnAny, at::any_out)
FSIM_TRUTH_OVER_DIMS(aclnnAll, at::all_out)

aclnnStatus aclnnNormGetWorkspaceSize(const aclTensor* self, const aclScalar* pScalar, const aclIntArray* dim,
                                      bool keepdim, aclTensor* out, uint64_t* workspaceSize,
                                      aclOpExecutor** executor) {
  Op op("aclnnNorm", workspaceSize, executor);
  op.arg("self", self, kFloating).arg("pScalar", pScalar).arg("dim", dim).arg("out", out, kFloating);
  return op.build([p = scalarOf(pScalar), dims = intsOf(dim), keepdim](Views& v) {
    at::norm_out(v["out"], v["self"], std::optional<at::Scalar>(p), dims, keepdim);
  });
}
FSIM_PHASE2(aclnnNorm)

aclnnStatus aclnnLinalgVectorNormGetWorkspaceSize(const aclTensor* self, const aclScalar* ord,
                                                  const aclIntArray* dims, bool keepDim, aclDataType dtype,
                                                  aclTensor* out, uint64_t* workspaceSize,
                                                  aclOpExecutor** executor) {
  Op op("aclnnLinalgVectorNorm", workspaceSize, executor);
  op.arg("self", self, kFloating).arg("ord", ord).arg("dims", dims).dtype("dtype", dtype, kFloating)
      .arg("out", out, kFloating);
  op.require(out_has(out, dtype), "argument 'out' must have the dtype given by 'dtype'");
  return op.build([o = scalarOf(ord), d = intsOf(dims), keepDim, type = scalarTypeOf(dtype)](Views& v) {
    at::linalg_vector_norm_out(v["out"], v["self"], o, at::OptionalIntArrayRef(d), keepDim, type);
  });
}
FSIM_PHASE2(aclnnLinalgVectorNorm)

// aclnnVarCorrection, aclnnStd: a statistic over `dim` with a correction.
#define FSIM_CORRECTED_STATISTIC(api, aten_out)                                                                 \
  aclnnStatus api##GetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, int64_t correction,         \
                                    bool keepdim, aclTensor* out, uint64_t* workspaceSize,                     \
                                    aclOpExecutor** executor) {                                                \
    Op op(#api, workspaceSize, executor);                                                                      \
    op.arg("self", self, kFloating).arg("dim", dim).arg("out", out, kFloating);                                \
    return op.build([dims = intsOf(dim), correction, keepdim](Views& v) {                                      \
      aten_out(v["out"], v["self"], at::OptionalIntArrayRef(dims), at::Scalar(correction), keepdim);           \
    });                                                                                                        \
  }                                                                                                            \
  FSIM_PHASE2(api)

FSIM_CORRECTED_STATISTIC(aclnnVarCorrection, at::var_out)
FSIM_CORRECTED_STATISTIC(aclnnStd, at::std_out)

// aclnnVarMean, aclnnStdMeanCorrection: the statistic (into `stat_out`, CANN's
// name) and the mean.
#define FSIM_CORRECTED_STATISTIC_AND_MEAN(api, stat_out, aten_out)                                              \
  aclnnStatus api##GetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, int64_t correction,         \
                                    bool keepdim, aclTensor* stat_out, aclTensor* meanOut,                     \
                                    uint64_t* workspaceSize, aclOpExecutor** executor) {                       \
    Op op(#api, workspaceSize, executor);                                                                      \
    op.arg("self", self, kFloating).arg("dim", dim).arg(#stat_out, stat_out, kFloating)                        \
        .arg("meanOut", meanOut, kFloating);                                                                   \
    return op.build([dims = intsOf(dim), correction, keepdim](Views& v) {                                      \
      aten_out(v[#stat_out], v["meanOut"], v["self"], at::OptionalIntArrayRef(dims), at::Scalar(correction),   \
               keepdim);                                                                                       \
    });                                                                                                        \
  }                                                                                                            \
  FSIM_PHASE2(api)

FSIM_CORRECTED_STATISTIC_AND_MEAN(aclnnVarMean, varOut, at::var_mean_out)
FSIM_CORRECTED_STATISTIC_AND_MEAN(aclnnStdMeanCorrection, stdOut, at::std_mean_out)

aclnnStatus aclnnLogSumExpGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim,
                                           aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnLogSumExp", workspaceSize, executor);
  op.arg("self", self, kNumeric | kBool).arg("dim", dim).arg("out", out, kFloating);
  return op.build([dims = intsOf(dim), keepDim](Views& v) { at::logsumexp_out(v["out"], v["self"], dims, keepDim); });
}
FSIM_PHASE2(aclnnLogSumExp)

aclnnStatus aclnnCumsumGetWorkspaceSize(const aclTensor* self, int64_t dim, aclDataType dtype, aclTensor* out,
                                        uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnCumsum", workspaceSize, executor);
  op.arg("self", self, kNumeric | kBool).dtype("dtype", dtype, kNumeric).arg("out", out, kNumeric);
  op.require(dim_in_range(self, dim), "dim is out of range");
  op.require(out_has(out, dtype), "argument 'out' must have the dtype given by 'dtype'");
  return op.build([dim, type = scalarTypeOf(dtype)](Views& v) { at::cumsum_out(v["out"], v["self"], dim, type); });
}
FSIM_PHASE2(aclnnCumsum)

aclnnStatus aclnnCumprodGetWorkspaceSize(const aclTensor* input, const aclScalar* dim, aclDataType dtype,
                                         aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnCumprod", workspaceSize, executor);
  op.arg("input", input, kNumeric | kBool).arg("dim", dim, kIntegral).dtype("dtype", dtype, kNumeric)
      .arg("out", out, kNumeric);
  op.require(out_has(out, dtype), "argument 'out' must have the dtype given by 'dtype'");
  return op.build([d = scalarOf(dim).toLong(), type = scalarTypeOf(dtype)](Views& v) {
    at::cumprod_out(v["out"], v["input"], d, type);
  });
}
FSIM_PHASE2(aclnnCumprod)
