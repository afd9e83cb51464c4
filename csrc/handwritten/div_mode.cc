// Division with a rounding mode: div.Tensor_mode, div_.Tensor_mode,
// div.out_mode, div.Scalar_mode, div_.Scalar_mode (aclnnDivMod, aclnnDivMods
// and their in-place forms). The generator has no mapping for the `str?
// rounding_mode` argument; CANN takes it as `int mode`: 0 for None (true
// division), 1 for "trunc", 2 for "floor". div.Tensor_mode is structured in
// ATen: this file defines its body, the generator writes and registers its
// wrappers (div.Tensor_mode, div.out_mode, div_.Tensor_mode), and those of
// the Scalar forms.
//
// Result dtype of div.Scalar_mode, as ATen: the promoted type of self and
// other, made floating (the default float type for integers and bools) by
// true division.
#include <ATen/core/Tensor.h>
#include <ATen/ops/result_type.h>
#include <c10/core/DefaultDtype.h>
#include <c10/core/ScalarType.h>

#include <optional>
#include <string_view>

#include "generated/impls.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnDivMod.h"
#include "flagos/aclnn/aclnnDivMods.h"
#include "flagos/aclnn/aclnnInplaceDivMod.h"
#include "flagos/aclnn/aclnnInplaceDivMods.h"

namespace flagos {
namespace {

// CANN's mode for ATen's rounding_mode, with ATen's error for anything else.
int mode_of(std::optional<std::string_view> rounding_mode) {
  if (!rounding_mode.has_value()) {
    return 0;
  }
  if (*rounding_mode == "trunc") {
    return 1;
  }
  if (*rounding_mode == "floor") {
    return 2;
  }
  TORCH_CHECK(false, "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *rounding_mode,
              "'");
}

at::ScalarType div_type(at::ScalarType promoted, int mode) {
  if (mode == 0 && (at::isIntegralType(promoted, /*includeBool=*/true))) {
    return c10::get_default_dtype_as_scalartype();
  }
  return promoted;
}

}  // namespace
}  // namespace flagos

namespace flagos::impl {

at::Tensor div_scalar_mode(const LaunchDevice& device, const at::Tensor& self, const at::Scalar& other,
                           std::optional<std::string_view> rounding_mode) {
  const int mode = mode_of(rounding_mode);
  at::Tensor out = empty_on(device, self.sizes(), div_type(at::result_type(self, other), mode));
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnDivMods, self, other, mode, out);
  }
  return out;
}

at::Tensor& div_scalar_mode_(const LaunchDevice& device, at::Tensor& self, const at::Scalar& other,
                             std::optional<std::string_view> rounding_mode) {
  const int mode = mode_of(rounding_mode);
  if (self.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceDivMods, self, other, mode);
  }
  return self;
}

// ---- div.Tensor_mode ---------------------------------------------------------------
// ATen's meta function (structured_div_Tensor_mode) has checked the
// rounding mode, computed the result's dtype and broadcast shape and
// checked out= and in-place outputs; an in-place call passes `self` as `out`.

void div_Tensor_mode(const LaunchDevice& device, const at::Tensor& self, const at::Tensor& other,
                     std::optional<c10::string_view> rounding_mode, const at::Tensor& out) {
  if (out.numel() == 0) {
    return;
  }
  const int mode = mode_of(rounding_mode);
  // A Python number (a CPU 0-dim `other`) launches the Scalar entry point
  // with its value; a CPU 0-dim `self` is copied to the launch device.
  if (out.is_same(self)) {
    if (is_cpu_scalar(other)) {
      FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceDivMods, self, other.item(), mode);
    } else {
      FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceDivMod, self, other, mode);
    }
  } else if (is_cpu_scalar(other)) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnDivMods, on_launch_device(self, device), other.item(), mode, out);
  } else {
    FLAGOS_GUARDED_LAUNCH(device, aclnnDivMod, on_launch_device(self, device), other, mode, out);
  }
}

}  // namespace flagos::impl
