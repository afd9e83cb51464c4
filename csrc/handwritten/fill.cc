// fill_ and zero_: in-place writes of self, on the launch device.
#include <ATen/core/Tensor.h>

#include "generated/impls.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnInplaceFillScalar.h"
#include "flagos/aclnn/aclnnInplaceZero.h"

namespace flagos::impl {

at::Tensor& fill_(const LaunchDevice& device, at::Tensor& self, const at::Scalar& value) {
  if (self.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceFillScalar, self, value);
  }
  return self;
}

at::Tensor& fill_(const LaunchDevice& device, at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ",
              value.dim(), " dimensions.");
  // item() reads the value back from whichever device holds it.
  return fill_(device, self, value.item());
}

at::Tensor& zero_(const LaunchDevice& device, at::Tensor& self) {
  if (self.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceZero, self);
  }
  return self;
}

}  // namespace flagos::impl
