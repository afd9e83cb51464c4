// The sparse and nested views of ATen that have no composite kernel: a
// flagos view must alias its base, so none may run on the CPU fallback
// (yaml/aten.yaml registers these bodies, and ATen's own kernels for the
// strided views).
#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include "generated/aten_kernels.h"

namespace flagos {
namespace {

// The sparse and nested views take layouts that flagos tensors never have.
[[noreturn]] void no_such_layout(const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "flagos: ", op,
                              " is a view of sparse or nested tensors; flagos tensors are strided");
}

}  // namespace

at::Tensor aten::sparse_indices(const at::Tensor&) { no_such_layout("_indices"); }
at::Tensor aten::sparse_values(const at::Tensor&) { no_such_layout("_values"); }
at::Tensor aten::sparse_broadcast_to(const at::Tensor&, at::IntArrayRef) { no_such_layout("_sparse_broadcast_to"); }
at::Tensor aten::nested_view_from_buffer(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&) {
  no_such_layout("_nested_view_from_buffer");
}
at::Tensor aten::nested_view_from_jagged(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                         const std::optional<at::Tensor>&, int64_t, const std::optional<at::Tensor>&,
                                         const std::optional<at::Tensor>&) {
  no_such_layout("_nested_view_from_jagged");
}
at::Tensor aten::nested_get_values(const at::Tensor&) { no_such_layout("_nested_get_values"); }

}  // namespace flagos
