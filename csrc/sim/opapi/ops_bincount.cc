// Value counts: aclnnBincount.
#include <ATen/ops/bincount.h>

#include <algorithm>

#include "sim_op.h"
#include "flagos/aclnn/aclnnBincount.h"

using namespace fsim::op;

namespace {
constexpr DTypes kBincountSelf{ACL_INT8, ACL_INT16, ACL_INT32, ACL_INT64, ACL_UINT8};
constexpr DTypes kBincountWeights{ACL_FLOAT, ACL_FLOAT16, ACL_DOUBLE, ACL_INT8, ACL_INT16,
                                  ACL_INT32, ACL_INT64, ACL_UINT8, ACL_BOOL};
constexpr DTypes kBincountOut{ACL_INT32, ACL_INT64, ACL_FLOAT, ACL_DOUBLE};
}  // namespace

// CANN's checks: a 1-D self of non-negative integers, weights (optional) of
// self's shape, a 1-D out the caller sized max(max(self) + 1, minlength).
aclnnStatus aclnnBincountGetWorkspaceSize(const aclTensor* self, const aclTensor* weights, int64_t minlength,
                                          aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnBincount", workspaceSize, executor);
  op.arg("self", self, kBincountSelf).optional("weights", weights, kBincountWeights).arg("out", out, kBincountOut);
  op.require(!self || self->viewDims.size() == 1, "self must be 1-D");
  op.require(!self || !weights || weights->viewDims == self->viewDims, "weights must have self's shape");
  op.require(!out || out->viewDims.size() == 1, "out must be 1-D");
  op.require(minlength >= 0, "minlength must be non-negative");
  return op.build([minlength](Views& v) {
    // ATen sums float32 and float64 weights in their dtype, others in float64.
    at::Tensor weights = v["weights"];
    if (weights.defined() && weights.scalar_type() != at::kFloat && weights.scalar_type() != at::kDouble) {
      weights = weights.to(at::kDouble);
    }
    const at::Tensor counts = at::bincount(v["self"], weights, minlength);
    at::Tensor out = v["out"];
    out.zero_();
    const int64_t n = std::min(out.size(0), counts.size(0));
    out.narrow(0, 0, n).copy_(counts.narrow(0, 0, n));
  });
}
FSIM_PHASE2(aclnnBincount)
