// Sorting and selection: sort (stable flag, descending) and topk, with their
// out= forms (aclnnSort, aclnnTopk). Both return (values, indices).
//
// Device policy: first-tensor (self); the out= tensors on self's device.
#include <ATen/WrapDimUtils.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <optional>
#include <tuple>
#include <vector>

#include "aten/dtype_fallback.h"
#include "handwritten/support.h"
#include "runtime/launch.h"
#include "generated/aclnn/aclnnSort.h"
#include "generated/aclnn/aclnnTopk.h"

namespace flagos {
namespace {

// ACLNN sorts tensors of 1 dim or more; a 0-dim tensor sorts as its 1-element view.
at::Tensor at_least_1d(const at::Tensor& t) { return t.dim() == 0 ? t.view({1}) : t; }

void launch_sort(const at::Tensor& self, bool stable, int64_t dim, bool descending, const at::Tensor& values,
                 const at::Tensor& indices) {
  if (self.numel() == 0) {
    return;
  }
  const LaunchDevice device = launch_device_of(self);
  FLAGOS_GUARDED_LAUNCH(device, aclnnSort, at_least_1d(self), stable, at::maybe_wrap_dim(dim, self.dim()), descending,
                        at_least_1d(values), at_least_1d(indices));
}

std::tuple<at::Tensor, at::Tensor> sort_stable(const at::Tensor& self, std::optional<bool> stable, int64_t dim,
                                               bool descending) {
  const LaunchDevice device = launch_device_of(self);
  at::Tensor values = empty_on(device, self.sizes(), self.scalar_type());
  at::Tensor indices = empty_on(device, self.sizes(), at::kLong);
  launch_sort(self, stable.value_or(false), dim, descending, values, indices);
  return {values, indices};
}

std::tuple<at::Tensor&, at::Tensor&> sort_values_stable(const at::Tensor& self, std::optional<bool> stable,
                                                        int64_t dim, bool descending, at::Tensor& values,
                                                        at::Tensor& indices) {
  check_same_device("sort.values_stable", {{"self", self}, {"values", values}, {"indices", indices}});
  hw::check_out_dtype(values, self.scalar_type());
  hw::check_out_dtype(indices, at::kLong);
  at::native::resize_output(values, self.sizes());
  at::native::resize_output(indices, self.sizes());
  launch_sort(self, stable.value_or(false), dim, descending, values, indices);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> sort(const at::Tensor& self, int64_t dim, bool descending) {
  return sort_stable(self, false, dim, descending);
}

std::tuple<at::Tensor&, at::Tensor&> sort_values(const at::Tensor& self, int64_t dim, bool descending,
                                                 at::Tensor& values, at::Tensor& indices) {
  return sort_values_stable(self, false, dim, descending, values, indices);
}

// topk's result: self's shape with k elements along `dim`.
std::vector<int64_t> topk_sizes(const at::Tensor& self, int64_t k, int64_t dim) {
  const int64_t wrapped = at::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(k >= 0 && k <= (self.dim() > 0 ? self.size(wrapped) : 1), "selected index k out of range");
  std::vector<int64_t> sizes = self.sizes().vec();
  if (self.dim() > 0) {
    sizes[wrapped] = k;
  }
  return sizes;
}

void launch_topk(const at::Tensor& self, int64_t k, int64_t dim, bool largest, const at::Tensor& values,
                 const at::Tensor& indices) {
  if (values.numel() == 0) {
    return;
  }
  // CANN's aclnnTopk supports sorted=true only; sorted results are a valid
  // answer to sorted=false too.
  const LaunchDevice device = launch_device_of(self);
  FLAGOS_GUARDED_LAUNCH(device, aclnnTopk, at_least_1d(self), k, at::maybe_wrap_dim(dim, self.dim()), largest,
                        /*sorted=*/true, at_least_1d(values), at_least_1d(indices));
}

std::tuple<at::Tensor, at::Tensor> topk(const at::Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  const std::vector<int64_t> sizes = topk_sizes(self, k, dim);
  const LaunchDevice device = launch_device_of(self);
  at::Tensor values = empty_on(device, sizes, self.scalar_type());
  at::Tensor indices = empty_on(device, sizes, at::kLong);
  launch_topk(self, k, dim, largest, values, indices);
  return {values, indices};
}

std::tuple<at::Tensor&, at::Tensor&> topk_values(const at::Tensor& self, int64_t k, int64_t dim, bool largest,
                                                 bool sorted, at::Tensor& values, at::Tensor& indices) {
  check_same_device("topk.values", {{"self", self}, {"values", values}, {"indices", indices}});
  hw::check_out_dtype(values, self.scalar_type());
  hw::check_out_dtype(indices, at::kLong);
  const std::vector<int64_t> sizes = topk_sizes(self, k, dim);
  at::native::resize_output(values, sizes);
  at::native::resize_output(indices, sizes);
  launch_topk(self, k, dim, largest, values, indices);
  return {values, indices};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("sort", flagos::with_dtype_fallback<"sort", &sort>());
  m.impl("sort.stable", flagos::with_dtype_fallback<"sort.stable", &sort_stable>());
  m.impl("sort.values", flagos::with_dtype_fallback<"sort.values", &sort_values>());
  m.impl("sort.values_stable", flagos::with_dtype_fallback<"sort.values_stable", &sort_values_stable>());
  m.impl("topk", flagos::with_dtype_fallback<"topk", &topk>());
  m.impl("topk.values", flagos::with_dtype_fallback<"topk.values", &topk_values>());
}

}  // namespace
}  // namespace flagos
