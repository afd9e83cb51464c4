// _unique2 (aclnnUnique2), which torch.unique reaches without a dim: the
// distinct elements of self, with each element's index among them (inverse)
// and each one's count.
//
// Device policy: first-tensor (self).
//
// The number of distinct elements depends on the data. CANN's operator
// shrinks valueOut and countsOut to it at execution and the caller reads
// their shapes back, which this runtime does not do. So the kernel always
// asks for the counts, launches into outputs with room for every element
// (counts zeroed first), and reads back how many counts are nonzero: every
// distinct element occurs at least once. The outputs are then shrunk to
// that number; their storage keeps its size. The launch reads the counts
// back (a synchronization), as ATen's own kernels do for unique.
#include <ATen/core/Tensor.h>
#include <ATen/ops/gt.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <tuple>

#include "aten/dtype_fallback.h"
#include "handwritten/support.h"
#include "runtime/launch.h"
#include "generated/aclnn/aclnnUnique2.h"

namespace flagos {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique2(const at::Tensor& self, bool sorted, bool return_inverse,
                                                       bool return_counts) {
  const LaunchDevice device = launch_device_of(self);
  const LaunchGuard device_current(device);  // before any allocation
  const int64_t n = self.numel();
  at::Tensor values = empty_on(device, {n}, self.scalar_type());
  // CANN's operator gives inverseOut self's shape whenever counts are asked for.
  at::Tensor inverse = empty_on(device, self.sizes(), at::kLong);
  at::Tensor counts = empty_on(device, {n}, at::kLong);
  int64_t distinct = 0;
  if (n > 0) {
    counts.zero_();
    // CANN's operator takes 1 to 8 dims: a 0-dim self is viewed as 1-D.
    const at::Tensor input = self.dim() == 0 ? self.view({1}) : self;
    const at::Tensor inverse_out = self.dim() == 0 ? inverse.view({1}) : inverse;
    FLAGOS_GUARDED_LAUNCH(device, aclnnUnique2, input, sorted, return_inverse, true, values, inverse_out, counts);
    distinct = hw::count_true(counts.gt(0), device);
  }
  values.resize_({distinct});  // keeps the storage: its front holds the distinct elements
  counts.resize_({return_counts ? distinct : 0});
  if (!return_inverse) {
    inverse.resize_({0});
  }
  return {values, inverse, counts};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_unique2", flagos::with_dtype_fallback<"_unique2", &unique2>());
}

}  // namespace
}  // namespace flagos
