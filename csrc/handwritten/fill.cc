// fill_ and zero_: in-place writes guarded on the written tensor.
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include "aten/dtype_fallback.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnInplaceFillScalar.h"
#include "flagos/aclnn/aclnnInplaceZero.h"

namespace flagos {
namespace {

at::Tensor& fill_scalar(at::Tensor& self, const at::Scalar& value) {
  if (self.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(self, aclnnInplaceFillScalar, self, value);
  }
  return self;
}

at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ",
              value.dim(), " dimensions.");
  // item() reads a device value back wherever it lives; the fill itself runs
  // on self's device.
  return fill_scalar(self, value.item());
}

at::Tensor& zero(at::Tensor& self) {
  if (self.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(self, aclnnInplaceZero, self);
  }
  return self;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("fill_.Scalar", flagos::with_dtype_fallback<"fill_.Scalar", &fill_scalar>());
  m.impl("fill_.Tensor", flagos::with_dtype_fallback<"fill_.Tensor", &fill_tensor>());
  m.impl("zero_", flagos::with_dtype_fallback<"zero_", &zero>());
}

}  // namespace
}  // namespace flagos
