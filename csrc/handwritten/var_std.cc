// var, std, var_mean and std_mean (correction overloads): aclnnVarCorrection,
// aclnnStd, aclnnVarMean, aclnnStdMeanCorrection.
//
// CANN's operators take an integral correction (int64_t). ATen's correction
// is any number (var = sum((x - mean)^2) / max(N - correction, 0) over the N
// reduced elements). An integral correction launches the operator with it; a
// non-integral one launches it with correction 0 (the population variance,
// sum / N) and scales the result by N / max(N - correction, 0) (its square
// root for std) with aclnnInplaceMuls: the same quotient, with the same inf
// and NaN where N - correction <= 0.
#include <ATen/WrapDimUtils.h>
#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>
#include <c10/util/OptionalArrayRef.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>
#include <vector>

#include "generated/impls.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnInplaceMuls.h"
#include "flagos/aclnn/aclnnStd.h"
#include "flagos/aclnn/aclnnStdMeanCorrection.h"
#include "flagos/aclnn/aclnnVarCorrection.h"
#include "flagos/aclnn/aclnnVarMean.h"

namespace flagos {
namespace {

// The reduction: its dims (all of them when `dim` is absent or empty), the
// result's sizes, and N, the number of elements each result reduces.
struct Reduction {
  std::vector<int64_t> dims;
  std::vector<int64_t> sizes;
  int64_t count = 1;
};

Reduction reduction_of(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  Reduction r;
  std::vector<bool> reduced(self.dim(), false);
  if (dim.has_value() && !dim->empty()) {
    for (const int64_t d : *dim) {
      reduced[at::maybe_wrap_dim(d, self.dim())] = true;
    }
  } else {
    std::fill(reduced.begin(), reduced.end(), true);
  }
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (reduced[d]) {
      r.dims.push_back(d);
      r.count *= self.size(d);
      if (keepdim) {
        r.sizes.push_back(1);
      }
    } else {
      r.sizes.push_back(self.size(d));
    }
  }
  return r;
}

// The correction to launch with, and the factor the result still needs
// (nullopt: none, the correction is integral).
struct Correction {
  int64_t launched = 1;
  std::optional<double> variance_scale;
};

Correction correction_of(const std::optional<at::Scalar>& correction, int64_t count) {
  const double value = correction.has_value() ? correction->toDouble() : 1.0;
  if (value == std::trunc(value) && std::abs(value) < 9.0e18) {
    return {static_cast<int64_t>(value), std::nullopt};
  }
  const double n = static_cast<double>(count);
  return {0, n / std::max(n - value, 0.0)};
}

at::ScalarType result_type(const at::Tensor& self) { return c10::toRealValueType(self.scalar_type()); }

}  // namespace
}  // namespace flagos

namespace flagos::impl {

at::Tensor var_correction(const LaunchDevice& device, const at::Tensor& self, at::OptionalIntArrayRef dim,
                          const std::optional<at::Scalar>& correction, bool keepdim) {
  const Reduction r = reduction_of(self, dim, keepdim);
  const Correction c = correction_of(correction, r.count);
  at::Tensor out = empty_on(device, r.sizes, result_type(self));
  if (out.numel() == 0) {
    return out;
  }
  FLAGOS_GUARDED_LAUNCH(device, aclnnVarCorrection, self, r.dims, c.launched, keepdim, out);
  if (c.variance_scale.has_value()) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceMuls, out, at::Scalar(*c.variance_scale));
  }
  return out;
}

at::Tensor std_correction(const LaunchDevice& device, const at::Tensor& self, at::OptionalIntArrayRef dim,
                          const std::optional<at::Scalar>& correction, bool keepdim) {
  const Reduction r = reduction_of(self, dim, keepdim);
  const Correction c = correction_of(correction, r.count);
  at::Tensor out = empty_on(device, r.sizes, result_type(self));
  if (out.numel() == 0) {
    return out;
  }
  FLAGOS_GUARDED_LAUNCH(device, aclnnStd, self, r.dims, c.launched, keepdim, out);
  if (c.variance_scale.has_value()) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceMuls, out, at::Scalar(std::sqrt(*c.variance_scale)));
  }
  return out;
}

std::tuple<at::Tensor, at::Tensor> var_mean_correction(const LaunchDevice& device, const at::Tensor& self,
                                                       at::OptionalIntArrayRef dim,
                                                       const std::optional<at::Scalar>& correction, bool keepdim) {
  const Reduction r = reduction_of(self, dim, keepdim);
  const Correction c = correction_of(correction, r.count);
  at::Tensor var = empty_on(device, r.sizes, result_type(self));
  at::Tensor mean = empty_on(device, r.sizes, self.scalar_type());
  if (var.numel() == 0) {
    return {var, mean};
  }
  FLAGOS_GUARDED_LAUNCH(device, aclnnVarMean, self, r.dims, c.launched, keepdim, var, mean);
  if (c.variance_scale.has_value()) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceMuls, var, at::Scalar(*c.variance_scale));
  }
  return {var, mean};
}

std::tuple<at::Tensor, at::Tensor> std_mean_correction(const LaunchDevice& device, const at::Tensor& self,
                                                       at::OptionalIntArrayRef dim,
                                                       const std::optional<at::Scalar>& correction, bool keepdim) {
  const Reduction r = reduction_of(self, dim, keepdim);
  const Correction c = correction_of(correction, r.count);
  at::Tensor std = empty_on(device, r.sizes, result_type(self));
  at::Tensor mean = empty_on(device, r.sizes, self.scalar_type());
  if (std.numel() == 0) {
    return {std, mean};
  }
  FLAGOS_GUARDED_LAUNCH(device, aclnnStdMeanCorrection, self, r.dims, c.launched, keepdim, std, mean);
  if (c.variance_scale.has_value()) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceMuls, std, at::Scalar(std::sqrt(*c.variance_scale)));
  }
  return {std, mean};
}

}  // namespace flagos::impl
