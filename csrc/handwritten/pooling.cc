// 2-d max pooling, forward and backward: max_pool2d_with_indices (and .out),
// max_pool2d_with_indices_backward (and .grad_input), on
// aclnnMaxPool2dWithIndices and aclnnMaxPool2dWithIndicesBackward; and 2-d
// average pooling: avg_pool2d (and .out), avg_pool2d_backward (and
// .grad_input), on aclnnAvgPool2d and aclnnAvgPool2dBackward (float, half and
// bfloat16 on A2/A3; divisor_override None is CANN's 0).
//
// F.max_pool2d of a flagos tensor reaches max_pool2d_with_indices (ATen's
// max_pool2d composite keeps its own kernel for CPU tensors only).
//
// Indices: ATen's are int64, the flat index h * W + w of the maximum in its
// input plane; CANN's forward writes that same index in INT32 or INT64 (we
// ask for INT64). CANN's backward on Atlas A2/A3 takes INT32 indices and
// FLOAT gradients only: the backward narrows the indices (they are < H * W,
// checked to fit) and runs half/bfloat16 gradients in float.
//
// Limits, raised as errors naming the op (never a wrong result): dilation
// other than 1 (A2/A3's operators refuse it). Double tensors (no CANN dtype)
// are rejected at phase 1 and run on the CPU (aten/dtype_fallback.h).
//
// All four are structured in ATen: this file defines their bodies (ATen's
// meta functions check the arguments and size the outputs), the generator
// writes and registers their wrappers.
//
// Device policy: first-tensor (self; grad_output for the backward); all
// operands on one device.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "generated/impls.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnMaxPool2dWithIndices.h"
#include "flagos/aclnn/aclnnMaxPool2dWithIndicesBackward.h"
#include "flagos/aclnn/aclnnAvgPool2d.h"
#include "flagos/aclnn/aclnnAvgPool2dBackward.h"

namespace flagos {
namespace {

// One pooling's geometry as CANN takes it: each a pair (ATen takes a single
// int for both dims; an empty stride is the kernel size), after ATen's meta
// function checked it. CANN's limit: dilation 1.
struct Pool2d {
  std::vector<int64_t> kernel, stride, padding, dilation;

  Pool2d(const char* op, at::IntArrayRef kernel_size, at::IntArrayRef stride_, at::IntArrayRef padding_,
         at::IntArrayRef dilation_)
      : kernel{kernel_size[0], kernel_size.back()},
        stride(stride_.empty() ? kernel : std::vector<int64_t>{stride_[0], stride_.back()}),
        padding{padding_[0], padding_.back()},
        dilation{dilation_[0], dilation_.back()} {
    TORCH_CHECK(dilation[0] == 1 && dilation[1] == 1, op, " on flagos: dilation (", dilation[0], ", ", dilation[1],
                ") is not supported: CANN's 2-d max pooling takes dilation 1 only on Atlas A2/A3");
    // Dtypes: CANN's pooling takes float, half and bfloat16 and rejects
    // others at phase 1; that call then runs on the CPU (with_dtype_fallback).
  }
};

// ATen's avg_pool2d has no dilation: the geometry with dilation 1.
Pool2d avg_pool(const char* op, at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding) {
  const int64_t unit = 1;
  return Pool2d(op, kernel_size, stride, padding, at::IntArrayRef(unit));
}

// CANN's "no override" is 0, which ATen refuses as a divisor.
int64_t divisor_of(std::optional<int64_t> divisor_override) { return divisor_override.value_or(0); }

constexpr int8_t kPoolKeepDtype = 0;  // cubeMathType KEEP_DTYPE

// What ATen's kernels check of a backward's operands (its meta functions check their sizes).
void check_grad_dtype(const char* op, const at::Tensor& grad_output, const at::Tensor& self) {
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type(), op, ": grad_output is ", grad_output.scalar_type(),
              ", self is ", self.scalar_type());
}

}  // namespace
}  // namespace flagos

// ---- the bodies of the generated wrappers ------------------------------------------
// ATen's meta functions (max_pool2d_with_indices, avg_pool2d and their
// backwards) have checked the geometry (kernel, stride, padding, dilation,
// the input's rank, a positive output size, a nonzero divisor) and the
// gradient's and indices' sizes, and sized the outputs (out= ones checked
// and resized).

namespace flagos::impl {

void max_pool2d_with_indices(const LaunchDevice& device, const at::Tensor& self, at::IntArrayRef kernel_size,
                             at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                             bool ceil_mode, const at::Tensor& out, const at::Tensor& indices) {
  const Pool2d pool("max_pool2d_with_indices", kernel_size, stride, padding, dilation);
  if (out.numel() > 0) {  // else a zero batch
    FLAGOS_GUARDED_LAUNCH(device, aclnnMaxPool2dWithIndices, self, pool.kernel, pool.stride, pool.padding,
                          pool.dilation, ceil_mode, out, indices);
  }
}

void max_pool2d_with_indices_backward(const LaunchDevice& device, const at::Tensor& grad_output,
                                      const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                      at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
                                      const at::Tensor& indices, const at::Tensor& grad_input) {
  constexpr const char* op = "max_pool2d_with_indices_backward";
  const Pool2d pool(op, kernel_size, stride, padding, dilation);
  TORCH_CHECK(indices.scalar_type() == at::kLong, op, ": expected int64 indices, got ", indices.scalar_type());
  check_grad_dtype(op, grad_output, self);
  if (grad_input.numel() == 0) {
    return;
  }
  if (grad_output.numel() == 0) {
    grad_input.zero_();
    return;
  }
  // A2/A3: INT32 indices (an index is < H * W) and FLOAT gradients.
  TORCH_CHECK(self.size(-1) * self.size(-2) <= std::numeric_limits<int32_t>::max(), op,
              " on flagos: an input plane of more than 2^31 - 1 elements does not fit CANN's int32 indices");
  const at::Tensor narrow_indices = indices.to(at::kInt);
  const bool widen = self.scalar_type() != at::kFloat;
  const at::Tensor g = widen ? grad_output.to(at::kFloat) : grad_output;
  const at::Tensor x = widen ? self.to(at::kFloat) : self;
  const at::Tensor result = widen ? empty_on(device, self.sizes(), at::kFloat) : grad_input;
  FLAGOS_GUARDED_LAUNCH(device, aclnnMaxPool2dWithIndicesBackward, g, x, narrow_indices, pool.kernel, pool.stride,
                        pool.padding, pool.dilation, ceil_mode, result);
  if (widen) {
    grad_input.copy_(result);
  }
}

void avg_pool2d(const LaunchDevice& device, const at::Tensor& self, at::IntArrayRef kernel_size,
                at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                std::optional<int64_t> divisor_override, const at::Tensor& out) {
  const Pool2d pool = avg_pool("avg_pool2d", kernel_size, stride, padding);
  if (out.numel() > 0) {  // else a zero batch: CANN takes no empty tensor
    FLAGOS_GUARDED_LAUNCH(device, aclnnAvgPool2d, self, pool.kernel, pool.stride, pool.padding, ceil_mode,
                          count_include_pad, divisor_of(divisor_override), kPoolKeepDtype, out);
  }
}

void avg_pool2d_backward(const LaunchDevice& device, const at::Tensor& grad_output, const at::Tensor& self,
                         at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode,
                         bool count_include_pad, std::optional<int64_t> divisor_override,
                         const at::Tensor& grad_input) {
  constexpr const char* op = "avg_pool2d_backward";
  const Pool2d pool = avg_pool(op, kernel_size, stride, padding);
  check_grad_dtype(op, grad_output, self);
  if (grad_input.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnAvgPool2dBackward, grad_output, self, pool.kernel, pool.stride, pool.padding,
                          ceil_mode, count_include_pad, divisor_of(divisor_override), kPoolKeepDtype, grad_input);
  }
}

}  // namespace flagos::impl
