// Distinct elements: aclnnUnique2.
//
// CANN shrinks valueOut and countsOut to the number of distinct elements at
// execution; the simulator cannot change a caller's shapes, so it takes
// outputs with room for every element and writes the front of each. Like
// aclnnNonzero, the executor cannot be made repeatable.
#include <ATen/ops/_unique2.h>

#include "sim_op.h"
#include "aclnn/aclnnUnique2.h"

using namespace fsim::op;

namespace {
// CANN's list for Atlas A2/A3, less the unsigned types ATen has no kernel for.
constexpr DTypes kUnique{ACL_BOOL,  ACL_UINT8, ACL_INT8,  ACL_INT16,   ACL_INT32,
                         ACL_INT64, ACL_FLOAT, ACL_DOUBLE, ACL_FLOAT16, ACL_BF16};

int64_t elements(const aclTensor* t) {
  int64_t n = 1;
  for (int64_t d : t->viewDims) n *= d;
  return n;
}
}  // namespace

// CANN's checks: self of at most 8 dims; inverseOut (int64) of self's shape
// when the inverse or the counts are asked for; countsOut (int64) of
// valueOut's shape when the counts are.
aclnnStatus aclnnUnique2GetWorkspaceSize(const aclTensor* self, bool sorted, bool returnInverse, bool returnCounts,
                                         aclTensor* valueOut, aclTensor* inverseOut, aclTensor* countsOut,
                                         uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnUnique2", workspaceSize, executor);
  op.arg("self", self, kUnique).arg("valueOut", valueOut, kUnique);
  op.arg("inverseOut", inverseOut, {ACL_INT64}).arg("countsOut", countsOut, {ACL_INT64}).unrepeatable();
  op.require(!self || self->viewDims.size() <= 8, "self must have at most 8 dims");
  op.require(!self || !valueOut || self->dtype == valueOut->dtype, "valueOut must have self's dtype");
  op.require(!self || !valueOut || (valueOut->viewDims.size() == 1 && valueOut->viewDims[0] == elements(self)),
             "valueOut must be 1-D with room for every element of self");
  op.require(!(returnInverse || returnCounts) || !self || !inverseOut || inverseOut->viewDims == self->viewDims,
             "inverseOut must have self's shape");
  op.require(!returnCounts || !valueOut || !countsOut || countsOut->viewDims == valueOut->viewDims,
             "countsOut must have valueOut's shape");
  return op.build([=](Views& v) {
    const auto [values, inverse, counts] = at::_unique2(v["self"], sorted, returnInverse, returnCounts);
    v["valueOut"].narrow(0, 0, values.size(0)).copy_(values);
    if (returnInverse) v["inverseOut"].copy_(inverse.view(v["inverseOut"].sizes()));
    if (returnCounts) v["countsOut"].narrow(0, 0, counts.size(0)).copy_(counts);
  });
}
FSIM_PHASE2(aclnnUnique2)
