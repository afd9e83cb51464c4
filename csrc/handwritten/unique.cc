// The unique ops: _unique2 (aclnnUnique2), which torch.unique reaches
// without a dim: the distinct elements of self, with each element's index
// among them (inverse) and each one's count; unique_dim (aclnnUniqueDim): the
// distinct slices along a dim; unique_consecutive and unique_dim_consecutive
// (aclnnUniqueConsecutive): the same for runs of equal neighbours only.
//
// Device policy: first-tensor (self).
//
// The number of distinct elements (or slices) depends on the data. CANN's
// operators shrink valueOut and countsOut to it at execution and the caller
// reads their shapes back, which this runtime does not do. So the kernels
// always ask for the counts, launch into outputs with room for every element
// (or slice; counts zeroed first), and read back how many counts are
// nonzero: every distinct element occurs at least once. The outputs are then
// shrunk to that number; their storage keeps its size. The launch reads the
// counts back (a synchronization), as ATen's own kernels do for unique.
#include <ATen/WrapDimUtils.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/gt.h>
#include <ATen/ops/zeros.h>

#include <optional>
#include <tuple>
#include <vector>

#include "generated/impls.h"
#include "handwritten/support.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnUnique2.h"
#include "flagos/aclnn/aclnnUniqueConsecutive.h"
#include "flagos/aclnn/aclnnUniqueDim.h"

namespace flagos {
namespace {

using UniqueResult = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

// aclnnUniqueConsecutive's dim for "no dim": the flattened input.
constexpr int64_t kNoDim = 1000;

// CANN's operators take 1 to 8 dims: a 0-dim tensor is viewed as 1-D.
at::Tensor at_least_1d_view(const at::Tensor& t) { return t.dim() == 0 ? t.view({1}) : t; }

// The outputs of a flattened unique, with room for every element of self:
// values and counts 1-D (counts zeroed), inverse of self's shape, which CANN
// gives inverseOut whenever counts are asked for (the kernels always ask).
struct RoomForElements {
  at::Tensor values, inverse, counts;
};

RoomForElements room_for_elements(const LaunchDevice& device, const at::Tensor& self) {
  const int64_t n = self.numel();
  RoomForElements room{empty_on(device, {n}, self.scalar_type()), empty_on(device, self.sizes(), at::kLong),
                        empty_on(device, {n}, at::kLong)};
  if (n > 0) {
    room.counts.zero_();
  }
  return room;
}

// Shrinks the outputs to the distinct elements, as many as nonzero counts:
// each occurs at least once. The storages keep their size; their front holds
// the result.
UniqueResult shrink_to_distinct(const RoomForElements& room, const LaunchDevice& device, bool return_inverse,
                                bool return_counts) {
  const int64_t distinct = hw::count_true(room.counts.gt(0), device);
  room.values.resize_({distinct});
  room.counts.resize_({return_counts ? distinct : 0});
  if (!return_inverse) {
    room.inverse.resize_({0});
  }
  return {room.values, room.inverse, room.counts};
}

}  // namespace
}  // namespace flagos

namespace flagos::impl {

UniqueResult unique2(const LaunchDevice& device, const at::Tensor& self, bool sorted, bool return_inverse,
                     bool return_counts) {
  const RoomForElements room = room_for_elements(device, self);
  if (self.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUnique2, at_least_1d_view(self), sorted, return_inverse, true, room.values,
                          at_least_1d_view(room.inverse), room.counts);
  }
  return shrink_to_distinct(room, device, return_inverse, return_counts);
}

// unique_consecutive without a dim: as unique2, with runs for values.
}  // namespace flagos::impl

namespace flagos {
namespace {

UniqueResult unique_consecutive_flat(const LaunchDevice& device, const at::Tensor& self, bool return_inverse,
                                     bool return_counts) {
  const RoomForElements room = room_for_elements(device, self);
  if (self.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUniqueConsecutive, at_least_1d_view(self), return_inverse, true, kNoDim,
                          room.values, at_least_1d_view(room.inverse), room.counts);
  }
  return shrink_to_distinct(room, device, return_inverse, return_counts);
}

// The distinct slices of self along dim (consecutive ones only or all),
// always with the inverse and the counts, as ATen's kernels give them. The
// launch fills the front of outputs with room for every slice: valueOut has
// self's shape and receives the result contiguous in its shrunk shape, which
// resize_ then gives it.
UniqueResult unique_slices(const LaunchDevice& device, const at::Tensor& self, int64_t dim, bool consecutive,
                           bool sorted) {
  dim = at::maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/false);
  const int64_t slices = self.size(dim);
  if (self.numel() == 0) {
    // ATen's checks and results for an empty self.
    int64_t zero_dims = 0;
    for (int64_t size : self.sizes()) {
      zero_dims += size == 0;
    }
    TORCH_CHECK(zero_dims <= 1, "Number of zero sized dimensions is more than one, so unique cannot be applied ");
    TORCH_CHECK(slices == 0, "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
    return {empty_on(device, self.sizes(), self.scalar_type()), empty_on(device, {0}, at::kLong),
            empty_on(device, {0}, at::kLong)};
  }
  at::Tensor values = empty_on(device, self.sizes(), self.scalar_type());
  at::Tensor inverse = empty_on(device, {slices}, at::kLong);
  at::Tensor counts = empty_on(device, {slices}, at::kLong);
  counts.zero_();
  if (consecutive) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUniqueConsecutive, self, true, true, dim, values, inverse, counts);
  } else {
    FLAGOS_GUARDED_LAUNCH(device, aclnnUniqueDim, self, sorted, true, dim, values, inverse, counts);
  }
  const int64_t distinct = hw::count_true(counts.gt(0), device);
  std::vector<int64_t> sizes = self.sizes().vec();
  sizes[dim] = distinct;
  values.resize_(sizes);  // contiguous, so the front of the storage in order
  counts.resize_({distinct});
  return {values, inverse, counts};
}

}  // namespace
}  // namespace flagos

namespace flagos::impl {

UniqueResult unique_consecutive(const LaunchDevice& device, const at::Tensor& self, bool return_inverse,
                                bool return_counts, std::optional<int64_t> dim) {
  if (!dim.has_value()) {
    return unique_consecutive_flat(device, self, return_inverse, return_counts);
  }
  return unique_slices(device, self, *dim, /*consecutive=*/true, /*sorted=*/true);
}

UniqueResult unique_dim(const LaunchDevice& device, const at::Tensor& self, int64_t dim, bool sorted,
                        bool /*return_inverse*/, bool /*return_counts*/) {
  return unique_slices(device, self, dim, /*consecutive=*/false, sorted);
}

UniqueResult unique_dim_consecutive(const LaunchDevice& device, const at::Tensor& self, int64_t dim,
                                    bool /*return_inverse*/, bool /*return_counts*/) {
  return unique_slices(device, self, dim, /*consecutive=*/true, /*sorted=*/true);
}

}  // namespace flagos::impl
