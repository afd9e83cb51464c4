// tril_indices and triu_indices: the [2, N] coordinates (row, then column,
// in row-major order) of a row x col matrix's lower / upper triangle.
// CANN has no operator for them. The kernel builds the triangle of a bool
// matrix of ones on the device (aclnnInplaceTril / Triu through the tril_ /
// triu_ kernels) and takes its nonzero coordinates (the nonzero kernel,
// which orders them row-major, as ATen's kernels do), so nothing runs on the
// CPU. It costs row x col bytes of scratch: these matrices are small (an
// attention mask's, a pairwise loss's).
#include <ATen/core/Tensor.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/ones.h>

#include <optional>

#include "generated/impls.h"
#include "runtime/launch.h"

namespace flagos {
namespace {

// TensorFactories.h check_args (tril_indices, triu_indices).
void check_tri_indices_args(int64_t row, int64_t col, std::optional<at::Layout> layout) {
  TORCH_CHECK(row >= 0, "row must be non-negative, got", row);
  TORCH_CHECK(col >= 0, "col must be non-negative, got", col);
  TORCH_CHECK(!layout.has_value() || *layout == at::kStrided, "only support layout=torch.strided, got",
              layout.value_or(at::kStrided));
}

at::Tensor tri_indices(const LaunchDevice& device, bool lower, int64_t row, int64_t col, int64_t offset,
                       std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout) {
  check_tri_indices_args(row, col, layout);
  at::Tensor mask = at::ones({row, col}, at::TensorOptions().dtype(at::kBool).device(flagos_device(device.index)));
  if (lower) {
    mask.tril_(offset);
  } else {
    mask.triu_(offset);
  }
  return at::nonzero(mask).t().to(dtype.value_or(at::kLong), /*non_blocking=*/false, /*copy=*/false,
                                   at::MemoryFormat::Contiguous);
}

}  // namespace
}  // namespace flagos

namespace flagos::impl {

at::Tensor tril_indices(const LaunchDevice& device, int64_t row, int64_t col, int64_t offset,
                        std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                        std::optional<at::Device> /*device*/, std::optional<bool> /*pin_memory*/) {
  return tri_indices(device, true, row, col, offset, dtype, layout);
}

at::Tensor triu_indices(const LaunchDevice& device, int64_t row, int64_t col, int64_t offset,
                        std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                        std::optional<at::Device> /*device*/, std::optional<bool> /*pin_memory*/) {
  return tri_indices(device, false, row, col, offset, dtype, layout);
}

}  // namespace flagos::impl
