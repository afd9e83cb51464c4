// isin: whether each element is among the test elements, in its three forms
// and their out= variants.
//
// Device policy: first-tensor (elements, else test_elements; out on the same
// device; a CPU 0-dim operand, a Python number, is copied there).
//
// - isin.Tensor_Scalar: aclnnIsInTensorScalar, one launch.
// - isin.Scalar_Tensor: aclnnIsInScalarTensor into a 0-dim bool, one launch.
// - isin.Tensor_Tensor: CANN has no tensor-tensor operator. The kernel
//   compares every element with every test element, elements viewed as
//   [..., 1] against the test elements flattened to [M] (aclnnEqTensor, both
//   promoted to their common dtype as ATen does), then reduces the last dim
//   with aclnnAny; invert=True takes aclnnNeTensor and aclnnAll instead. This
//   is ATen's own small-input algorithm; it needs numel(elements) * M bools
//   of workspace. With no test element the answer is `invert` everywhere.
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <c10/core/ScalarType.h>
#include <torch/library.h>

#include <vector>

#include "aten/dtype_fallback.h"
#include "handwritten/support.h"
#include "runtime/launch.h"
#include "generated/aclnn/aclnnAll.h"
#include "generated/aclnn/aclnnAny.h"
#include "generated/aclnn/aclnnEqTensor.h"
#include "generated/aclnn/aclnnInplaceFillScalar.h"
#include "generated/aclnn/aclnnIsInScalarTensor.h"
#include "generated/aclnn/aclnnIsInTensorScalar.h"
#include "generated/aclnn/aclnnNeTensor.h"

namespace flagos {
namespace {

// ATen's rule (and its message): no bool and no complex operand.
void check_dtype(at::ScalarType type) {
  TORCH_CHECK(type != at::kBool && !at::isComplexType(type), "Unsupported input type encountered for isin(): ", type);
}

void check_dtype(const at::Scalar& value) { check_dtype(value.type()); }
void check_dtype(const at::Tensor& value) { check_dtype(value.scalar_type()); }

void launch_tensor_tensor(const LaunchDevice& device, const at::Tensor& elements_in, const at::Tensor& test_in,
                          bool invert, const at::Tensor& out) {
  if (out.numel() == 0) {
    return;
  }
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

at::Tensor isin_tensor_tensor(const at::Tensor& elements, const at::Tensor& test_elements, bool /*assume_unique*/,
                              bool invert) {
  check_same_device("isin.Tensor_Tensor", {{"elements", elements}, {"test_elements", test_elements}});
  check_dtype(elements);
  check_dtype(test_elements);
  const LaunchDevice device = launch_device_of(elements, test_elements);
  at::Tensor out = empty_on(device, elements.sizes(), at::kBool);
  launch_tensor_tensor(device, elements, test_elements, invert, out);
  return out;
}

at::Tensor& isin_tensor_tensor_out(const at::Tensor& elements, const at::Tensor& test_elements,
                                   bool /*assume_unique*/, bool invert, at::Tensor& out) {
  check_same_device("isin.Tensor_Tensor_out",
                    {{"elements", elements}, {"test_elements", test_elements}, {"out", out}});
  check_dtype(elements);
  check_dtype(test_elements);
  hw::check_out_dtype(out, at::kBool);
  const LaunchDevice device = launch_device_of(elements, out, test_elements);
  at::native::resize_output(out, elements.sizes());
  launch_tensor_tensor(device, elements, test_elements, invert, out);
  return out;
}

at::Tensor isin_tensor_scalar(const at::Tensor& elements, const at::Scalar& test_element, bool assume_unique,
                              bool invert) {
  check_dtype(elements);
  check_dtype(test_element);
  const LaunchDevice device = launch_device_of(elements);
  at::Tensor out = empty_on(device, elements.sizes(), at::kBool);
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnIsInTensorScalar, elements, test_element, assume_unique, invert, out);
  }
  return out;
}

at::Tensor& isin_tensor_scalar_out(const at::Tensor& elements, const at::Scalar& test_element, bool assume_unique,
                                   bool invert, at::Tensor& out) {
  check_same_device("isin.Tensor_Scalar_out", {{"elements", elements}, {"out", out}});
  check_dtype(elements);
  check_dtype(test_element);
  hw::check_out_dtype(out, at::kBool);
  const LaunchDevice device = launch_device_of(elements, out);
  at::native::resize_output(out, elements.sizes());
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnIsInTensorScalar, elements, test_element, assume_unique, invert, out);
  }
  return out;
}

at::Tensor isin_scalar_tensor(const at::Scalar& element, const at::Tensor& test_elements, bool assume_unique,
                              bool invert) {
  check_dtype(element);
  check_dtype(test_elements);
  const LaunchDevice device = launch_device_of(test_elements);
  at::Tensor out = empty_on(device, {}, at::kBool);
  FLAGOS_GUARDED_LAUNCH(device, aclnnIsInScalarTensor, element, test_elements, assume_unique, invert, out);
  return out;
}

at::Tensor& isin_scalar_tensor_out(const at::Scalar& element, const at::Tensor& test_elements, bool assume_unique,
                                   bool invert, at::Tensor& out) {
  check_same_device("isin.Scalar_Tensor_out", {{"test_elements", test_elements}, {"out", out}});
  check_dtype(element);
  check_dtype(test_elements);
  hw::check_out_dtype(out, at::kBool);
  const LaunchDevice device = launch_device_of(out, test_elements);
  at::native::resize_output(out, {});
  FLAGOS_GUARDED_LAUNCH(device, aclnnIsInScalarTensor, element, test_elements, assume_unique, invert, out);
  return out;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("isin.Tensor_Tensor", flagos::with_dtype_fallback<"isin.Tensor_Tensor", &isin_tensor_tensor>());
  m.impl("isin.Tensor_Tensor_out", flagos::with_dtype_fallback<"isin.Tensor_Tensor_out", &isin_tensor_tensor_out>());
  m.impl("isin.Tensor_Scalar", flagos::with_dtype_fallback<"isin.Tensor_Scalar", &isin_tensor_scalar>());
  m.impl("isin.Tensor_Scalar_out", flagos::with_dtype_fallback<"isin.Tensor_Scalar_out", &isin_tensor_scalar_out>());
  m.impl("isin.Scalar_Tensor", flagos::with_dtype_fallback<"isin.Scalar_Tensor", &isin_scalar_tensor>());
  m.impl("isin.Scalar_Tensor_out", flagos::with_dtype_fallback<"isin.Scalar_Tensor_out", &isin_scalar_tensor_out>());
}

}  // namespace
}  // namespace flagos
