// Distinct elements: aclnnUnique2, aclnnUniqueConsecutive, aclnnUniqueDim.
//
// CANN shrinks valueOut and countsOut to the number of distinct elements at
// execution; the simulator cannot change a caller's shapes, so it takes
// outputs with room for every element and writes the front of each. Like
// aclnnNonzero, the executor cannot be made repeatable.
#include <ATen/ops/_unique2.h>
#include <ATen/ops/unique_consecutive.h>
#include <ATen/ops/unique_dim.h>

#include <algorithm>
#include <vector>

#include "sim_op.h"
#include "flagos/aclnn/aclnnUnique2.h"
#include "flagos/aclnn/aclnnUniqueConsecutive.h"
#include "flagos/aclnn/aclnnUniqueDim.h"

using namespace fsim::op;

namespace {
// CANN's list for Atlas A2/A3, less the unsigned types ATen has no kernel for
// (and, for aclnnUniqueConsecutive, the complex types ATen's unique does not take).
constexpr DTypes kUnique{ACL_BOOL,  ACL_UINT8, ACL_INT8,  ACL_INT16,   ACL_INT32,
                         ACL_INT64, ACL_FLOAT, ACL_DOUBLE, ACL_FLOAT16, ACL_BF16};

// aclnnUniqueConsecutive's dim for "no dim".
constexpr int64_t kNoDim = 1000;

// CANN's range for dim: [-rank, rank - 1] (and 0 for a 0-dim self).
bool unique_dim_in_range(const aclTensor* self, int64_t dim) {
  const auto rank = static_cast<int64_t>(self->viewDims.size());
  return dim >= std::min(-rank, rank - 1) && dim <= std::max(-rank, rank - 1);
}

// The caller's outputs for distinct slices along dim: valueOut of self's
// shape, inverseOut and countsOut with one element per slice.
bool room_for_slices(const aclTensor* self, int64_t dim, const aclTensor* value, const aclTensor* inverse,
                     const aclTensor* counts) {
  const int64_t rank = static_cast<int64_t>(self->viewDims.size());
  const int64_t slices = rank == 0 ? 1 : self->viewDims[dim < 0 ? dim + rank : dim];
  const std::vector<int64_t> per_slice{slices};
  return value->viewDims == self->viewDims && inverse->viewDims == per_slice && counts->viewDims == per_slice;
}

// Writes a result of fewer slices into the front of an output with room for
// all of them, contiguous in the result's shape, as CANN leaves valueOut.
void write_front(at::Tensor out, const at::Tensor& result) {
  out.view(-1).narrow(0, 0, result.numel()).copy_(result.reshape(-1));
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
  op.require(!self || !valueOut || (valueOut->viewDims.size() == 1 && valueOut->viewDims[0] == viewElements(self)),
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

// CANN's checks: self of at most 8 dims; valueOut of self's dtype; inverseOut
// and countsOut int64; dim in range unless 1000 (no dim).
aclnnStatus aclnnUniqueConsecutiveGetWorkspaceSize(const aclTensor* self, bool returnInverse, bool returnCounts,
                                                   int64_t dim, aclTensor* valueOut, aclTensor* inverseOut,
                                                   aclTensor* countsOut, uint64_t* workspaceSize,
                                                   aclOpExecutor** executor) {
  Op op("aclnnUniqueConsecutive", workspaceSize, executor);
  op.arg("self", self, kUnique).arg("valueOut", valueOut, kUnique);
  op.arg("inverseOut", inverseOut, {ACL_INT64}).arg("countsOut", countsOut, {ACL_INT64}).unrepeatable();
  op.require(!self || self->viewDims.size() <= 8, "self must have at most 8 dims");
  op.require(!self || !valueOut || self->dtype == valueOut->dtype, "valueOut must have self's dtype");
  op.require(!self || dim == kNoDim || unique_dim_in_range(self, dim), "dim out of range");
  if (dim == kNoDim) {
    op.require(!self || !valueOut || (valueOut->viewDims.size() == 1 && valueOut->viewDims[0] == viewElements(self)),
               "valueOut must be 1-D with room for every element of self");
    op.require(!self || !inverseOut || inverseOut->viewDims == self->viewDims, "inverseOut must have self's shape");
    op.require(!returnCounts || !valueOut || !countsOut || countsOut->viewDims == valueOut->viewDims,
               "countsOut must have valueOut's shape");
  } else {
    op.require(!self || !valueOut || !inverseOut || !countsOut || !unique_dim_in_range(self, dim) ||
                   room_for_slices(self, dim, valueOut, inverseOut, countsOut),
               "valueOut must have self's shape, inverseOut and countsOut one element per slice along dim");
  }
  return op.build([=](Views& v) {
    if (dim == kNoDim) {
      const auto [values, inverse, counts] = at::unique_consecutive(v["self"], returnInverse, returnCounts);
      write_front(v["valueOut"], values);
      if (returnInverse) v["inverseOut"].copy_(inverse.view(v["inverseOut"].sizes()));
      if (returnCounts) write_front(v["countsOut"], counts);
      return;
    }
    const auto [values, inverse, counts] = at::unique_consecutive(v["self"], returnInverse, returnCounts, dim);
    write_front(v["valueOut"], values);
    v["inverseOut"].copy_(inverse);
    write_front(v["countsOut"], counts);
  });
}
FSIM_PHASE2(aclnnUniqueConsecutive)

// CANN's checks: self of at most 8 dims; valueOut of self's dtype; inverseOut
// and countsOut int64; dim in range. The counts are always written.
aclnnStatus aclnnUniqueDimGetWorkspaceSize(const aclTensor* self, bool sorted, bool returnInverse, int64_t dim,
                                           aclTensor* valueOut, aclTensor* inverseOut, aclTensor* countsOut,
                                           uint64_t* workspaceSize, aclOpExecutor** executor) {
  Op op("aclnnUniqueDim", workspaceSize, executor);
  op.arg("self", self, kUnique).arg("valueOut", valueOut, kUnique);
  op.arg("inverseOut", inverseOut, {ACL_INT64}).arg("countsOut", countsOut, {ACL_INT64}).unrepeatable();
  op.require(!self || self->viewDims.size() <= 8, "self must have at most 8 dims");
  op.require(!self || !valueOut || self->dtype == valueOut->dtype, "valueOut must have self's dtype");
  op.require(!self || unique_dim_in_range(self, dim), "dim out of range");
  op.require(!self || !valueOut || !inverseOut || !countsOut || !unique_dim_in_range(self, dim) ||
                 room_for_slices(self, dim, valueOut, inverseOut, countsOut),
             "valueOut must have self's shape, inverseOut and countsOut one element per slice along dim");
  return op.build([=](Views& v) {
    const auto [values, inverse, counts] = at::unique_dim(v["self"], dim, sorted, returnInverse, true);
    write_front(v["valueOut"], values);
    if (returnInverse) v["inverseOut"].copy_(inverse);
    write_front(v["countsOut"], counts);
  });
}
FSIM_PHASE2(aclnnUniqueDim)
