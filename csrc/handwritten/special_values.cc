// isposinf and isneginf, functional and out= (aclnnIsPosInf, aclnnIsNegInf).
//
// Device policy: first-tensor (self; out on self's device).
//
// CANN's operators take floating inputs only; ATen's accept every real dtype
// and call integers and bools finite. For those the kernel writes false
// (aclnnInplaceZero) instead of launching an operator that would refuse them.
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <c10/core/ScalarType.h>
#include <torch/library.h>

#include "aten/dtype_fallback.h"
#include "runtime/launch.h"
#include "generated/aclnn/aclnnInplaceZero.h"
#include "generated/aclnn/aclnnIsNegInf.h"
#include "generated/aclnn/aclnnIsPosInf.h"

namespace flagos {
namespace {

void check_real(const char* op, const at::Tensor& self) {
  TORCH_CHECK(!self.is_complex(), op, " does not support complex inputs.");
}

void launch_posinf(const LaunchDevice& device, const at::Tensor& self, const at::Tensor& out) {
  if (out.numel() == 0) {
    return;
  }
  if (!at::isFloatingType(self.scalar_type())) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceZero, out);  // integers and bools are finite
    return;
  }
  FLAGOS_GUARDED_LAUNCH(device, aclnnIsPosInf, self, out);
}

void launch_neginf(const LaunchDevice& device, const at::Tensor& self, const at::Tensor& out) {
  if (out.numel() == 0) {
    return;
  }
  if (!at::isFloatingType(self.scalar_type())) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceZero, out);  // integers and bools are finite
    return;
  }
  FLAGOS_GUARDED_LAUNCH(device, aclnnIsNegInf, self, out);
}

at::Tensor isposinf(const at::Tensor& self) {
  check_real("isposinf", self);
  const LaunchDevice device = launch_device_of(self);
  at::Tensor out = empty_on(device, self.sizes(), at::kBool);
  launch_posinf(device, self, out);
  return out;
}

at::Tensor& isposinf_out(const at::Tensor& self, at::Tensor& out) {
  check_same_device("isposinf.out", {{"self", self}, {"out", out}});
  check_real("isposinf", self);
  TORCH_CHECK(out.scalar_type() == at::kBool, "isposinf does not support non-boolean outputs.");
  const LaunchDevice device = launch_device_of(self, out);
  at::native::resize_output(out, self.sizes());
  launch_posinf(device, self, out);
  return out;
}

at::Tensor isneginf(const at::Tensor& self) {
  check_real("isneginf", self);
  const LaunchDevice device = launch_device_of(self);
  at::Tensor out = empty_on(device, self.sizes(), at::kBool);
  launch_neginf(device, self, out);
  return out;
}

at::Tensor& isneginf_out(const at::Tensor& self, at::Tensor& out) {
  check_same_device("isneginf.out", {{"self", self}, {"out", out}});
  check_real("isneginf", self);
  TORCH_CHECK(out.scalar_type() == at::kBool, "isneginf does not support non-boolean outputs.");
  const LaunchDevice device = launch_device_of(self, out);
  at::native::resize_output(out, self.sizes());
  launch_neginf(device, self, out);
  return out;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("isposinf", flagos::with_dtype_fallback<"isposinf", &isposinf>());
  m.impl("isposinf.out", flagos::with_dtype_fallback<"isposinf.out", &isposinf_out>());
  m.impl("isneginf", flagos::with_dtype_fallback<"isneginf", &isneginf>());
  m.impl("isneginf.out", flagos::with_dtype_fallback<"isneginf.out", &isneginf_out>());
}

}  // namespace
}  // namespace flagos
