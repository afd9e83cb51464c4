// Complex numbers from real parts: aclnnPolar.
#include <ATen/ops/polar.h>

#include "sim_op.h"
#include "flagos/aclnn/aclnnPolar.h"

using namespace fsim::op;

// CANN's checks: float input and angle of one dtype, a complex64 out, shapes
// that broadcast to out's.
aclnnStatus aclnnPolarGetWorkspaceSize(const aclTensor* input, const aclTensor* angle, aclTensor* out,
                                       uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnPolar", workspaceSize, executor);
  op.arg("input", input, DTypes{ACL_FLOAT}).arg("angle", angle, DTypes{ACL_FLOAT});
  op.arg("out", out, DTypes{ACL_COMPLEX64});
  const std::optional<std::vector<int64_t>> shape = broadcastDims({input, angle});
  op.require(!input || !angle || !out || (shape.has_value() && *shape == out->viewDims),
             "input and angle must broadcast to out's shape");
  return op.build([](Views& v) { at::polar_out(v["out"], v["input"], v["angle"]); });
}
FSIM_PHASE2(aclnnPolar)
