// clamp with scalar bounds (clamp, clamp_, clamp.out: aclnnClamp) and with
// tensor bounds (clamp.Tensor, clamp_.Tensor, clamp.Tensor_out:
// aclnnClampTensor). Either bound may be absent, not both; an absent bound is
// passed as nullptr (and the executor cache keys on which one is absent).
//
// Device policy: first-tensor (self; bounds and out on self's device; a CPU
// 0-dim bound, a Python number, is copied there).
//
// Result dtype, as ATen: scalar bounds promote an integral self (a float
// bound makes the result floating) and leave a floating self's dtype alone;
// tensor bounds promote with self to their common dtype. clamp.out wants
// exactly that dtype; the other in-place and out= forms one it casts to.
#include <ATen/ExpandUtils.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <c10/core/ScalarType.h>
#include <torch/library.h>

#include <optional>
#include <vector>

#include "aten/dtype_fallback.h"
#include "runtime/launch.h"
#include "generated/aclnn/aclnnClamp.h"
#include "generated/aclnn/aclnnClampTensor.h"

namespace flagos {
namespace {

void check_bounds(bool has_min, bool has_max) {
  TORCH_CHECK(has_min || has_max, "torch.clamp: At least one of 'min' or 'max' must not be None");
}

void check_castable(at::ScalarType result, const at::Tensor& written) {
  TORCH_CHECK(at::canCast(result, written.scalar_type()), "result type ", result,
              " can't be cast to the desired output type ", written.scalar_type());
}

// ---- scalar bounds ---------------------------------------------------------

at::ScalarType scalar_clamp_type(const at::Tensor& self, const std::optional<at::Scalar>& min,
                                 const std::optional<at::Scalar>& max) {
  at::ScalarType result = self.scalar_type();
  TORCH_CHECK(!at::isComplexType(result), "clamp is not supported for complex types");
  if (!at::isFloatingType(result)) {
    at::native::ResultTypeState state{};
    state = at::native::update_result_type_state(self, state);
    if (min.has_value()) {
      state = at::native::update_result_type_state(*min, state);
    }
    if (max.has_value()) {
      state = at::native::update_result_type_state(*max, state);
    }
    result = at::native::result_type(state);
  }
  TORCH_CHECK(!at::isComplexType(result), "clamp is not supported for complex types");
  return result;
}

at::Tensor clamp(const at::Tensor& self, const std::optional<at::Scalar>& min, const std::optional<at::Scalar>& max) {
  check_bounds(min.has_value(), max.has_value());
  const LaunchDevice device = launch_device_of(self);
  at::Tensor out = empty_on(device, self.sizes(), scalar_clamp_type(self, min, max));
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnClamp, self, min, max, out);
  }
  return out;
}

at::Tensor& clamp_(at::Tensor& self, const std::optional<at::Scalar>& min, const std::optional<at::Scalar>& max) {
  check_bounds(min.has_value(), max.has_value());
  TORCH_CHECK(scalar_clamp_type(self, min, max) == self.scalar_type(), "result type ",
              scalar_clamp_type(self, min, max), " can't be cast to the desired output type ", self.scalar_type());
  const LaunchDevice device = launch_device_of(self);
  if (self.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnClamp, self, min, max, self);
  }
  return self;
}

at::Tensor& clamp_out(const at::Tensor& self, const std::optional<at::Scalar>& min,
                      const std::optional<at::Scalar>& max, at::Tensor& out) {
  check_same_device("clamp.out", {{"self", self}, {"out", out}});
  check_bounds(min.has_value(), max.has_value());
  const at::ScalarType result = scalar_clamp_type(self, min, max);
  TORCH_CHECK(out.scalar_type() == result, "Found dtype ", out.scalar_type(), " but expected ", result);
  const LaunchDevice device = launch_device_of(self, out);
  at::native::resize_output(out, self.sizes());
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnClamp, self, min, max, out);
  }
  return out;
}

// ---- tensor bounds ---------------------------------------------------------

bool given(const std::optional<at::Tensor>& bound) { return bound.has_value() && bound->defined(); }

at::ScalarType tensor_clamp_type(const at::Tensor& self, const std::optional<at::Tensor>& min,
                                 const std::optional<at::Tensor>& max) {
  TORCH_CHECK(!at::isComplexType(self.scalar_type()), "clamp is not supported for complex types");
  at::native::ResultTypeState state{};
  state = at::native::update_result_type_state(self, state);
  if (given(min)) {
    state = at::native::update_result_type_state(*min, state);
  }
  if (given(max)) {
    state = at::native::update_result_type_state(*max, state);
  }
  return at::native::result_type(state);
}

std::vector<int64_t> tensor_clamp_sizes(const at::Tensor& self, const std::optional<at::Tensor>& min,
                                        const std::optional<at::Tensor>& max) {
  std::vector<int64_t> sizes = self.sizes().vec();
  if (given(min)) {
    sizes = at::infer_size(sizes, min->sizes());
  }
  if (given(max)) {
    sizes = at::infer_size(sizes, max->sizes());
  }
  return sizes;
}

// A bound on the launch device (a CPU 0-dim bound is copied), nullopt if absent.
std::optional<at::Tensor> bound_on(const std::optional<at::Tensor>& bound, const LaunchDevice& device) {
  return given(bound) ? std::optional<at::Tensor>(on_launch_device(*bound, device)) : std::nullopt;
}

at::Tensor clamp_tensor(const at::Tensor& self, const std::optional<at::Tensor>& min,
                        const std::optional<at::Tensor>& max) {
  check_same_device("clamp.Tensor", {{"self", self}, {"min", min}, {"max", max}});
  check_bounds(given(min), given(max));
  const LaunchDevice device = launch_device_of(self, min, max);
  at::Tensor out = empty_on(device, tensor_clamp_sizes(self, min, max), tensor_clamp_type(self, min, max));
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnClampTensor, on_launch_device(self, device), bound_on(min, device),
                          bound_on(max, device), out);
  }
  return out;
}

at::Tensor& clamp_tensor_(at::Tensor& self, const std::optional<at::Tensor>& min,
                          const std::optional<at::Tensor>& max) {
  check_same_device("clamp_.Tensor", {{"self", self}, {"min", min}, {"max", max}});
  check_bounds(given(min), given(max));
  check_castable(tensor_clamp_type(self, min, max), self);
  TORCH_CHECK(tensor_clamp_sizes(self, min, max) == self.sizes().vec(), "output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", tensor_clamp_sizes(self, min, max));
  const LaunchDevice device = launch_device_of(self);
  if (self.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnClampTensor, self, bound_on(min, device), bound_on(max, device), self);
  }
  return self;
}

at::Tensor& clamp_tensor_out(const at::Tensor& self, const std::optional<at::Tensor>& min,
                             const std::optional<at::Tensor>& max, at::Tensor& out) {
  check_same_device("clamp.Tensor_out", {{"self", self}, {"min", min}, {"max", max}, {"out", out}});
  check_bounds(given(min), given(max));
  check_castable(tensor_clamp_type(self, min, max), out);
  const LaunchDevice device = launch_device_of(self, out, min, max);
  at::native::resize_output(out, tensor_clamp_sizes(self, min, max));
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnClampTensor, on_launch_device(self, device), bound_on(min, device),
                          bound_on(max, device), out);
  }
  return out;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("clamp", flagos::with_dtype_fallback<"clamp", &clamp>());
  m.impl("clamp_", flagos::with_dtype_fallback<"clamp_", &clamp_>());
  m.impl("clamp.out", flagos::with_dtype_fallback<"clamp.out", &clamp_out>());
  m.impl("clamp.Tensor", flagos::with_dtype_fallback<"clamp.Tensor", &clamp_tensor>());
  m.impl("clamp_.Tensor", flagos::with_dtype_fallback<"clamp_.Tensor", &clamp_tensor_>());
  m.impl("clamp.Tensor_out", flagos::with_dtype_fallback<"clamp.Tensor_out", &clamp_tensor_out>());
}

}  // namespace
}  // namespace flagos
