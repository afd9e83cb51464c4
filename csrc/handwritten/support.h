// Helpers shared by the handwritten kernels.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "runtime/device.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnReduceSum.h"

namespace flagos::hw {

// The number of true elements of a bool tensor that lives on `device`:
// counted there (aclnnReduceSum), then read back. For ops whose output size
// depends on the data.
inline int64_t count_true(const at::Tensor& mask, const LaunchDevice& device) {
  if (mask.numel() == 0) {
    return 0;
  }
  std::vector<int64_t> dims(mask.dim());
  std::iota(dims.begin(), dims.end(), int64_t{0});
  const at::Tensor count = empty_on(device, {}, at::kLong);
  FLAGOS_GUARDED_LAUNCH(device, aclnnReduceSum, mask, dims, false, at::kLong, count);
  return count.item<int64_t>();
}

// PyTorch's error for an out= tensor of the wrong dtype (with its dtype
// names: "float", "long int").
inline void check_out_dtype(const at::Tensor& out, at::ScalarType expected) {
  TORCH_CHECK(out.scalar_type() == expected, "Expected out tensor to have dtype ",
              c10::scalarTypeToTypeMeta(expected), ", but got ", out.dtype(), " instead");
}

}  // namespace flagos::hw
