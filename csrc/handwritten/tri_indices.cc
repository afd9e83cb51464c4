// tril_indices and triu_indices: the [2, N] coordinates (row, then column,
// in row-major order) of a row x col matrix's lower / upper triangle.
// CANN has no operator for them. The kernel builds the triangle of a bool
// matrix of ones on the device (aclnnInplaceTril / Triu through the tril_ /
// triu_ kernels) and takes its nonzero coordinates (the nonzero kernel,
// which orders them row-major, as ATen's kernels do), so nothing runs on the
// CPU. It costs row x col bytes of scratch: these matrices are small (an
// attention mask's, a pairwise loss's).
//
// Device policy: explicit-arg on `device` (absent: the current flagos
// device); the ops it calls guard their own launches.
#include <ATen/core/Tensor.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/ones.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <optional>

#include "aten/dtype_fallback.h"
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

at::Tensor tri_indices(bool lower, int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                       std::optional<at::Layout> layout, std::optional<at::Device> device) {
  check_tri_indices_args(row, col, layout);
  const at::Device on = device.value_or(at::Device(c10::DeviceType::PrivateUse1));
  const c10::OptionalDeviceGuard device_current(on);
  at::Tensor mask = at::ones({row, col}, at::TensorOptions().dtype(at::kBool).device(on));
  if (lower) {
    mask.tril_(offset);
  } else {
    mask.triu_(offset);
  }
  return at::nonzero(mask).t().to(dtype.value_or(at::kLong), /*non_blocking=*/false, /*copy=*/false,
                                   at::MemoryFormat::Contiguous);
}

at::Tensor tril_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout> layout, std::optional<at::Device> device,
                        std::optional<bool> /*pin_memory*/) {
  return tri_indices(true, row, col, offset, dtype, layout, device);
}

at::Tensor triu_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout> layout, std::optional<at::Device> device,
                        std::optional<bool> /*pin_memory*/) {
  return tri_indices(false, row, col, offset, dtype, layout, device);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("tril_indices", flagos::with_dtype_fallback<"tril_indices", &tril_indices>());
  m.impl("triu_indices", flagos::with_dtype_fallback<"triu_indices", &triu_indices>());
}

}  // namespace
}  // namespace flagos
