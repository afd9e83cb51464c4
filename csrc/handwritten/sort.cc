// Sorting and selection: sort (stable flag, descending) and topk, with their
// out= forms (aclnnSort, aclnnTopk). Both return (values, indices).
//
// sort.stable (with sort.values_stable) and topk (with topk.values) are
// structured in ATen: this file defines their bodies, the generator writes
// and registers their wrappers.
#include <ATen/WrapDimUtils.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/sort.h>

#include <optional>
#include <tuple>

#include "generated/impls.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnSort.h"
#include "flagos/aclnn/aclnnTopk.h"

namespace flagos {
namespace {

// ACLNN sorts tensors of 1 dim or more; a 0-dim tensor sorts as its 1-element view.
at::Tensor at_least_1d(const at::Tensor& t) { return t.dim() == 0 ? t.view({1}) : t; }

}  // namespace
}  // namespace flagos

// ---- the bodies of the generated wrappers ------------------------------------------
// ATen's meta functions (sort_stable, topk) have checked dim and k and sized
// the values and indices (out= ones checked and resized).

namespace flagos::impl {

// sort and sort.values are sort.stable and sort.values_stable with stable
// false, as in ATen: the calls reach the generated structured wrappers.
std::tuple<at::Tensor, at::Tensor> sort(const LaunchDevice& /*device*/, const at::Tensor& self, int64_t dim,
                                        bool descending) {
  return at::sort(self, /*stable=*/false, dim, descending);
}

std::tuple<at::Tensor&, at::Tensor&> sort(const LaunchDevice& /*device*/, const at::Tensor& self, int64_t dim,
                                          bool descending, at::Tensor& values, at::Tensor& indices) {
  return at::sort_out(values, indices, self, /*stable=*/false, dim, descending);
}

void sort_stable(const LaunchDevice& device, const at::Tensor& self, std::optional<bool> stable, int64_t dim,
                 bool descending, const at::Tensor& values, const at::Tensor& indices) {
  if (self.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnSort, at_least_1d(self), stable.value_or(false),
                          at::maybe_wrap_dim(dim, self.dim()), descending, at_least_1d(values), at_least_1d(indices));
  }
}

void topk(const LaunchDevice& device, const at::Tensor& self, int64_t k, int64_t dim, bool largest, bool /*sorted*/,
          const at::Tensor& values, const at::Tensor& indices) {
  // CANN's aclnnTopk supports sorted=true only; sorted results are a valid
  // answer to sorted=false too.
  if (values.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnTopk, at_least_1d(self), k, at::maybe_wrap_dim(dim, self.dim()), largest,
                          /*sorted=*/true, at_least_1d(values), at_least_1d(indices));
  }
}

}  // namespace flagos::impl
