// _cdist_forward (aclnnCdist): the p-norm distance between each row of x1
// and each row of x2, batched over the broadcast leading dims:
// [..., r1, c] x [..., r2, c] -> [..., r1, r2]. torch.cdist reaches it
// (ATen's composite sends p=2 with many rows to _euclidean_dist, a matmul
// decomposition that runs on flagos kernels already).
#include <ATen/ExpandUtils.h>
#include <ATen/core/Tensor.h>

#include <optional>
#include <vector>

#include "generated/impls.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnCdist.h"

namespace flagos::impl {

// The checks of ATen's _cdist_forward and cdist_impl (Distance.cpp), in
// their order: an empty row count needs none of the later ones.
at::Tensor cdist_forward(const LaunchDevice& device, const at::Tensor& x1, const at::Tensor& x2, double p,
                         std::optional<int64_t> compute_mode) {
  TORCH_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  TORCH_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  TORCH_CHECK(x1.size(-1) == x2.size(-1), "X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
              " X2: ", x2.size(-1));
  const int64_t r1 = x1.size(-2);
  const int64_t r2 = x2.size(-2);
  std::vector<int64_t> sizes =
      at::infer_size(x1.sizes().slice(0, x1.dim() - 2), x2.sizes().slice(0, x2.dim() - 2));
  sizes.push_back(r1);
  sizes.push_back(r2);
  at::Tensor out = empty_on(device, sizes, x1.scalar_type());
  if (r1 == 0 || r2 == 0) {
    return out;
  }
  TORCH_CHECK(at::isFloatingType(x1.scalar_type()), "cdist only supports floating-point dtypes, X1 got: ",
              x1.scalar_type());
  TORCH_CHECK(at::isFloatingType(x2.scalar_type()), "cdist only supports floating-point dtypes, X2 got: ",
              x2.scalar_type());
  TORCH_CHECK(p >= 0, "cdist only supports non-negative p values");
  const int64_t mode = compute_mode.value_or(0);
  TORCH_CHECK(mode >= 0 && mode <= 2, "possible modes: 0, 1, 2, but was: ", mode);
  TORCH_CHECK(x1.scalar_type() == x2.scalar_type(), "expected scalar type ", x1.scalar_type(), " but found ",
              x2.scalar_type());
  if (out.numel() == 0) {
    return out;
  }
  FLAGOS_GUARDED_LAUNCH(device, aclnnCdist, x1, x2, static_cast<float>(p), mode, out);
  return out;
}

}  // namespace flagos::impl
