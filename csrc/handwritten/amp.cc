// What torch.amp.GradScaler("flagos") launches: unscaling the gradients while
// checking them for inf/NaN, and updating the scale. Both compose flagos
// kernels (each guarded on the tensors' device) and never read a value back
// to the host, so a training step does not synchronize. The generated
// wrappers make the device current once for all of them.
#include <ATen/core/Tensor.h>
#include <ATen/ops/isfinite.h>
#include <ATen/ops/maximum.h>
#include <c10/util/Exception.h>

#include "generated/impls.h"
#include "runtime/launch.h"

namespace flagos::impl {

// Each tensor *= inv_scale; found_inf becomes 1 if any value is inf or NaN.
void non_finite_check_and_unscale(const LaunchDevice& device, at::TensorList self, at::Tensor& found_inf,
                                  const at::Tensor& inv_scale) {
  TORCH_CHECK(inv_scale.numel() == 1 && found_inf.numel() == 1,
              "flagos: _amp_foreach_non_finite_check_and_unscale_: inv_scale and found_inf must be 1-element tensors");
  TORCH_CHECK(inv_scale.scalar_type() == at::kFloat && found_inf.scalar_type() == at::kFloat,
              "flagos: _amp_foreach_non_finite_check_and_unscale_: inv_scale and found_inf must be float32");
  for (const at::Tensor& t : self) {
    if (t.numel() == 0) continue;
    const at::Tensor bad = at::isfinite(t).logical_not().any().to(at::kFloat).reshape(found_inf.sizes());
    found_inf.copy_(at::maximum(found_inf, bad));
    t.mul_(inv_scale.to(t.scalar_type()));
  }
}

// After an inf/NaN: scale *= backoff and the tracker restarts; otherwise
// the tracker counts, and every growth_interval steps scale *= growth.
// Computed with arithmetic on the device (no branch on a device value).
at::Tensor& update_scale(const LaunchDevice& device, at::Tensor& scale, at::Tensor& growth_tracker,
                         const at::Tensor& found_inf, double growth_factor, double backoff_factor,
                         int64_t growth_interval) {
  TORCH_CHECK(scale.numel() == 1 && growth_tracker.numel() == 1 && found_inf.numel() == 1,
              "flagos: _amp_update_scale_: scale, growth_tracker and found_inf must be 1-element tensors");
  const at::Tensor inf = found_inf.gt(0).to(at::kFloat);                               // 1 after an inf
  const at::Tensor counted = growth_tracker.to(at::kFloat).add(1).mul(inf.neg().add(1));  // 0 after an inf
  const at::Tensor grow = counted.ge(static_cast<double>(growth_interval)).to(at::kFloat);
  const at::Tensor factor = inf.mul(backoff_factor)
                                .add(inf.neg().add(1).mul(grow.mul(growth_factor).add(grow.neg().add(1))));
  scale.mul_(factor);
  growth_tracker.copy_(counted.mul(grow.neg().add(1)));
  return scale;
}

}  // namespace flagos::impl
