// bincount (aclnnBincount): how often each value 0..n-1 occurs in a 1-D
// tensor of non-negative integers, or the sum of the weights at its
// positions.
//
// Device policy: first-tensor (self; weights on the same device).
//
// The length, max(max(self) + 1, minlength), depends on the data. CANN's
// operator takes an out of that length from the caller, so the kernel reads
// self's minimum and maximum back first (a synchronization, as in ATen's
// own kernels), which also makes ATen's check for negative values.
#include <ATen/core/Tensor.h>
#include <ATen/ops/max.h>
#include <ATen/ops/min.h>

#include <algorithm>
#include <optional>

#include "generated/impls.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnBincount.h"

namespace flagos::impl {

at::Tensor bincount(const LaunchDevice& device, const at::Tensor& self, const std::optional<at::Tensor>& weights,
                    int64_t minlength) {
  const bool weighted = weights.has_value() && weights->defined();
  // ATen's order: the dtype (its dispatch), minlength, then the shape.
  TORCH_CHECK(at::isIntegralType(self.scalar_type(), /*includeBool=*/false), "\"bincount\" not implemented for '",
              c10::toString(self.scalar_type()), "'");
  TORCH_CHECK(minlength >= 0, "minlength should be >= 0");
  TORCH_CHECK(self.dim() == 1, "bincount only supports 1-d non-negative integral inputs.");
  TORCH_CHECK(!weighted || (weights->dim() == 1 && weights->size(0) == self.size(0)),
              "weights should be 1-d and have the same length as input");
  // ATen's result dtype: counts (and any empty input's result) are int64; float32 weights
  // sum in float32, any other in float64.
  const at::ScalarType dtype = !weighted || self.numel() == 0 ? at::kLong
                               : weights->scalar_type() == at::kFloat ? at::kFloat
                                                                      : at::kDouble;
  int64_t length = minlength;
  if (self.numel() > 0) {
    TORCH_CHECK(self.min().item<int64_t>() >= 0, "bincount only supports 1-d non-negative integral inputs.");
    length = std::max(length, self.max().item<int64_t>() + 1);
  }
  at::Tensor out = empty_on(device, {length}, dtype);
  if (self.numel() == 0) {
    return out.zero_();
  }
  FLAGOS_GUARDED_LAUNCH(device, aclnnBincount, self, weights, minlength, out);
  return out;
}

}  // namespace flagos::impl
