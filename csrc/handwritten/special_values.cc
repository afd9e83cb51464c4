// isposinf and isneginf, functional and out= (aclnnIsPosInf, aclnnIsNegInf).
// Both are structured in ATen: this file defines their bodies, the generator
// writes and registers their wrappers.
//
// Device policy: first-tensor (self; out on self's device).
//
// CANN's operators take floating inputs only; ATen's accept every real dtype
// and call integers and bools finite. For those the kernel writes false
// (aclnnInplaceZero) instead of launching an operator that would refuse them.
#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include "generated/impls.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnInplaceZero.h"
#include "flagos/aclnn/aclnnIsNegInf.h"
#include "flagos/aclnn/aclnnIsPosInf.h"

// ---- the bodies of the generated wrappers ------------------------------------------
// ATen's meta functions (isposinf, isneginf) have refused complex inputs and
// non-bool out= tensors and sized the output.

namespace flagos::impl {

void isposinf(const LaunchDevice& device, const at::Tensor& self, const at::Tensor& out) {
  if (out.numel() == 0) {
    return;
  }
  if (!at::isFloatingType(self.scalar_type())) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceZero, out);  // integers and bools are finite
    return;
  }
  FLAGOS_GUARDED_LAUNCH(device, aclnnIsPosInf, self, out);
}

void isneginf(const LaunchDevice& device, const at::Tensor& self, const at::Tensor& out) {
  if (out.numel() == 0) {
    return;
  }
  if (!at::isFloatingType(self.scalar_type())) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceZero, out);  // integers and bools are finite
    return;
  }
  FLAGOS_GUARDED_LAUNCH(device, aclnnIsNegInf, self, out);
}

}  // namespace flagos::impl
