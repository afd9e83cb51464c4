// isin of a tensor's elements among another tensor's (isin.Tensor_Tensor and
// its out= form): the body of their generated wrappers. ATen's meta
// function has checked the operands' dtypes and sized the bool output (an
// out= one checked and resized). The other two forms, one launch each, are
// registry entries (yaml/ops/selection.yaml).
//
// CANN has no tensor-tensor operator. The kernel compares every element
// with every test element, elements viewed as [..., 1] against the test
// elements flattened to [M] (aclnnEqTensor, both promoted to their common
// dtype as ATen does), then reduces the last dim with aclnnAny;
// invert=True takes aclnnNeTensor and aclnnAll instead. This is ATen's own
// small-input algorithm; it needs numel(elements) * M bools of workspace.
// With no test element the answer is `invert` everywhere.
#include <ATen/core/Tensor.h>

#include <vector>

#include "generated/impls.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnAll.h"
#include "flagos/aclnn/aclnnAny.h"
#include "flagos/aclnn/aclnnEqTensor.h"
#include "flagos/aclnn/aclnnInplaceFillScalar.h"
#include "flagos/aclnn/aclnnNeTensor.h"

namespace flagos::impl {

void isin_Tensor_Tensor(const LaunchDevice& device, const at::Tensor& elements_in, const at::Tensor& test_in,
                        bool /*assume_unique*/, bool invert, const at::Tensor& out) {
  if (out.numel() == 0) {
    return;
  }
  // Either operand may be a CPU 0-dim tensor (a number): copied to the device.
  const at::Tensor elements = on_launch_device(elements_in, device);
  const at::Tensor test = on_launch_device(test_in, device).reshape({-1});
  if (test.numel() == 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceFillScalar, out, at::Scalar(invert));
    return;
  }
  const at::Tensor column = elements.unsqueeze(-1);  // [..., 1] against [M]
  std::vector<int64_t> pair_sizes = elements.sizes().vec();
  pair_sizes.push_back(test.numel());
  const at::Tensor pairs = empty_on(device, pair_sizes, at::kBool);
  const std::vector<int64_t> last{elements.dim()};
  if (invert) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnNeTensor, column, test, pairs);
    FLAGOS_GUARDED_LAUNCH(device, aclnnAll, pairs, last, false, out);
  } else {
    FLAGOS_GUARDED_LAUNCH(device, aclnnEqTensor, column, test, pairs);
    FLAGOS_GUARDED_LAUNCH(device, aclnnAny, pairs, last, false, out);
  }
}

}  // namespace flagos::impl
