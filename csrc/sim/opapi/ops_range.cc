// Ranges: aclnnArange.
#include <ATen/ops/arange.h>

#include "sim_op.h"
#include "flagos/aclnn/aclnnArange.h"

using namespace fsim::op;

aclnnStatus aclnnArangeGetWorkspaceSize(const aclScalar* start, const aclScalar* end, const aclScalar* step,
                                        aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnArange", workspaceSize, executor);
  op.arg("start", start).arg("end", end).arg("step", step).arg("out", out, kNumeric);
  op.require(step == nullptr || scalarOf(step).toDouble() != 0, "step must be nonzero");
  return op.build([start = scalarOf(start), end = scalarOf(end), step = scalarOf(step)](Views& v) {
    at::arange_out(v["out"], start, end, step);
  });
}
FSIM_PHASE2(aclnnArange)
