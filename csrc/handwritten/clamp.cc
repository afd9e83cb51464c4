// clamp with scalar bounds (clamp, clamp_, clamp.out: aclnnClamp) and with
// tensor bounds (clamp.Tensor, clamp_.Tensor, clamp.Tensor_out:
// aclnnClampTensor). Either bound may be absent, not both; an absent bound is
// passed as nullptr (and the executor cache keys on which one is absent).
//
// Both are structured in ATen: this file defines their bodies, the generator
// writes and registers their wrappers (ATen's meta functions decide the
// result's dtype and shape, as on the CPU).
//
// A CPU 0-dim bound raises the same-device error, as on CUDA: ATen's meta
// function (a TensorIterator that takes no CPU scalar) rejects it.
#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include <optional>

#include "generated/impls.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnClamp.h"
#include "flagos/aclnn/aclnnClampTensor.h"

// ---- the bodies of the generated wrappers ----------------------------------
// ATen's meta functions (structured_clamp, structured_clamp_Tensor) have
// checked the bounds (one at least), computed the result's dtype and
// broadcast shape and checked out= / in-place outputs against them.

namespace flagos::impl {
namespace {

// The launch takes an absent bound as nullptr.
std::optional<at::Scalar> scalar_bound(at::OptionalScalarRef bound) {
  return bound.has_value() ? std::optional<at::Scalar>(bound.get()) : std::nullopt;
}

std::optional<at::Tensor> tensor_bound(at::OptionalTensorRef bound) {
  return bound.has_value() ? std::optional<at::Tensor>(*bound) : std::nullopt;
}

}  // namespace

void clamp(const LaunchDevice& device, const at::Tensor& self, at::OptionalScalarRef min, at::OptionalScalarRef max,
           const at::Tensor& out) {
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnClamp, self, scalar_bound(min), scalar_bound(max), out);
  }
}

void clamp_Tensor(const LaunchDevice& device, const at::Tensor& self, at::OptionalTensorRef min,
                  at::OptionalTensorRef max, const at::Tensor& out) {
  // No operand is on the CPU: the meta function's TensorIterator takes no CPU
  // 0-dim tensor here (as on CUDA).
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnClampTensor, self, tensor_bound(min), tensor_bound(max), out);
  }
}

}  // namespace flagos::impl
