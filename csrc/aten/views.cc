// The view ops that ATen implements per backend (no composite kernel): a
// flagos view must alias its base, so none of these may run on the CPU
// fallback, where a write through the view would land in a temporary copy.
// Every other view op of ATen is composite and reaches flagos through
// as_strided / view (tests/aten/test_views.py walks them all).
#include <ATen/core/Tensor.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

namespace flagos {
namespace {

// The sparse and nested views take layouts that flagos tensors never have.
[[noreturn]] void no_such_layout(const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "flagos: ", op,
                              " is a view of sparse or nested tensors; flagos tensors are strided");
}

at::Tensor sparse_indices(const at::Tensor&) { no_such_layout("_indices"); }
at::Tensor sparse_values(const at::Tensor&) { no_such_layout("_values"); }
at::Tensor sparse_broadcast_to(const at::Tensor&, at::IntArrayRef) { no_such_layout("_sparse_broadcast_to"); }
at::Tensor nested_view_from_buffer(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&) {
  no_such_layout("_nested_view_from_buffer");
}
at::Tensor nested_view_from_jagged(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                   const std::optional<at::Tensor>&, int64_t, const std::optional<at::Tensor>&,
                                   const std::optional<at::Tensor>&) {
  no_such_layout("_nested_view_from_jagged");
}
at::Tensor nested_get_values(const at::Tensor&) { no_such_layout("_nested_get_values"); }

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("view_as_real", TORCH_FN(at::native::view_as_real));
  m.impl("view_as_complex", TORCH_FN(at::native::view_as_complex));
  m.impl("unfold", TORCH_FN(at::native::unfold));
  m.impl("_indices", TORCH_FN(sparse_indices));
  m.impl("_values", TORCH_FN(sparse_values));
  m.impl("_sparse_broadcast_to", TORCH_FN(sparse_broadcast_to));
  m.impl("_nested_view_from_buffer", TORCH_FN(nested_view_from_buffer));
  m.impl("_nested_view_from_jagged", TORCH_FN(nested_view_from_jagged));
  m.impl("_nested_get_values", TORCH_FN(nested_get_values));
}

}  // namespace
}  // namespace flagos
