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
// Device policy: first-tensor (self; grad_output for the backward); all
// operands on one device.
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>
#include <vector>

#include "aten/dtype_fallback.h"
#include "handwritten/support.h"
#include "runtime/launch.h"
#include "generated/aclnn/aclnnMaxPool2dWithIndices.h"
#include "generated/aclnn/aclnnMaxPool2dWithIndicesBackward.h"
#include "generated/aclnn/aclnnAvgPool2d.h"
#include "generated/aclnn/aclnnAvgPool2dBackward.h"

namespace flagos {
namespace {

// One pooling's geometry, checked as ATen's max_pool2d_with_indices meta
// function does, plus CANN's limits.
struct Pool2d {
  std::vector<int64_t> kernel, stride, padding, dilation;

  Pool2d(const char* op, const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride_,
         at::IntArrayRef padding_, at::IntArrayRef dilation_) {
    TORCH_CHECK(kernel_size.size() == 1 || kernel_size.size() == 2, op,
                ": kernel_size must either be a single int, or a tuple of two ints");
    TORCH_CHECK(stride_.empty() || stride_.size() == 1 || stride_.size() == 2, op,
                ": stride must either be omitted, a single int, or a tuple of two ints");
    TORCH_CHECK(padding_.size() == 1 || padding_.size() == 2, op,
                ": padding must either be a single int, or a tuple of two ints");
    TORCH_CHECK(dilation_.size() == 1 || dilation_.size() == 2, op,
                ": dilation must be either a single int, or a tuple of two ints");
    kernel = {kernel_size[0], kernel_size.back()};
    stride = stride_.empty() ? kernel : std::vector<int64_t>{stride_[0], stride_.back()};
    padding = {padding_[0], padding_.back()};
    dilation = {dilation_[0], dilation_.back()};
    TORCH_CHECK(kernel[0] > 0 && kernel[1] > 0, op, ": kernel size should be greater than zero, but got kH: ",
                kernel[0], " kW: ", kernel[1]);
    TORCH_CHECK(stride[0] > 0 && stride[1] > 0, op, ": stride should be greater than zero, but got dH: ", stride[0],
                " dW: ", stride[1]);
    TORCH_CHECK(dilation[0] > 0 && dilation[1] > 0, op, ": dilation should be greater than zero, but got dilationH: ",
                dilation[0], " dilationW: ", dilation[1]);
    TORCH_CHECK(padding[0] >= 0 && padding[1] >= 0 && padding[0] <= kernel[0] / 2 && padding[1] <= kernel[1] / 2, op,
                ": pad should be at most half of effective kernel size, but got pad=(", padding[0], ", ", padding[1],
                ") and kernel_size=(", kernel[0], ", ", kernel[1], ")");
    TORCH_CHECK(dilation[0] == 1 && dilation[1] == 1, op, " on flagos: dilation (", dilation[0], ", ", dilation[1],
                ") is not supported: CANN's 2-d max pooling takes dilation 1 only on Atlas A2/A3");
    TORCH_CHECK((self.dim() == 3 || self.dim() == 4) && self.size(-1) > 0 && self.size(-2) > 0 &&
                    self.size(-3) > 0,
                op, ": Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got ",
                self.sizes());
    // Dtypes: CANN's pooling takes float, half and bfloat16 and rejects
    // others at phase 1; that call then runs on the CPU (with_dtype_fallback).
  }

  static int64_t out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil) {
    const int64_t span = in + 2 * pad - dilation * (k - 1) - 1 + (ceil ? stride - 1 : 0);
    int64_t out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
    if (ceil && (out - 1) * stride >= in + pad) {
      --out;  // the last window would start in the padding
    }
    return out;
  }

  std::vector<int64_t> output_sizes(const char* op, const at::Tensor& self, bool ceil) const {
    const int64_t oh = out_size(self.size(-2), kernel[0], padding[0], stride[0], dilation[0], ceil);
    const int64_t ow = out_size(self.size(-1), kernel[1], padding[1], stride[1], dilation[1], ceil);
    TORCH_CHECK(oh >= 1 && ow >= 1, op, ": Given input size: (", self.size(-3), "x", self.size(-2), "x",
                self.size(-1), "). Calculated output size: (", self.size(-3), "x", oh, "x", ow,
                "). Output size is too small");
    std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end() - 2);
    sizes.push_back(oh);
    sizes.push_back(ow);
    return sizes;
  }
};

// An out= tensor must be on the op's device: a CPU 0-dim one is no wrapped number.
void check_out_device(const char* op, const at::Tensor& self, const at::Tensor& out) {
  TORCH_CHECK(out.device() == self.device(), "Expected all tensors to be on the same device, but found at least two "
              "devices, ", self.device(), " and ", out.device(), "! (", op, ")");
}

void pool_forward(const LaunchDevice& device, const Pool2d& pool, const at::Tensor& self, bool ceil_mode,
                  const at::Tensor& out, const at::Tensor& indices) {
  if (out.numel() == 0) {
    return;  // a zero batch
  }
  FLAGOS_GUARDED_LAUNCH(device, aclnnMaxPool2dWithIndices, self, pool.kernel, pool.stride, pool.padding,
                        pool.dilation, ceil_mode, out, indices);
}

std::tuple<at::Tensor, at::Tensor> max_pool2d_with_indices(const at::Tensor& self, at::IntArrayRef kernel_size,
                                                           at::IntArrayRef stride, at::IntArrayRef padding,
                                                           at::IntArrayRef dilation, bool ceil_mode) {
  constexpr const char* op = "max_pool2d_with_indices";
  const Pool2d pool(op, self, kernel_size, stride, padding, dilation);
  const std::vector<int64_t> sizes = pool.output_sizes(op, self, ceil_mode);
  const LaunchDevice device = launch_device_of(self);
  at::Tensor out = empty_on(device, sizes, self.scalar_type());
  at::Tensor indices = empty_on(device, sizes, at::kLong);
  pool_forward(device, pool, self, ceil_mode, out, indices);
  return {out, indices};
}

std::tuple<at::Tensor&, at::Tensor&> max_pool2d_with_indices_out(const at::Tensor& self, at::IntArrayRef kernel_size,
                                                                 at::IntArrayRef stride, at::IntArrayRef padding,
                                                                 at::IntArrayRef dilation, bool ceil_mode,
                                                                 at::Tensor& out, at::Tensor& indices) {
  constexpr const char* op = "max_pool2d_with_indices.out";
  check_same_device(op, {{"self", self}, {"out", out}, {"indices", indices}});
  check_out_device(op, self, out);
  check_out_device(op, self, indices);
  const Pool2d pool(op, self, kernel_size, stride, padding, dilation);
  hw::check_out_dtype(out, self.scalar_type());
  hw::check_out_dtype(indices, at::kLong);
  const std::vector<int64_t> sizes = pool.output_sizes(op, self, ceil_mode);
  at::native::resize_output(out, sizes);
  at::native::resize_output(indices, sizes);
  const LaunchDevice device = launch_device_of(self, out, indices);
  pool_forward(device, pool, self, ceil_mode, out, indices);
  return {out, indices};
}

void pool_backward(const char* op, const LaunchDevice& device, const at::Tensor& grad_output, const at::Tensor& self,
                   at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding,
                   at::IntArrayRef dilation, bool ceil_mode, const at::Tensor& indices, const at::Tensor& grad_input) {
  const Pool2d pool(op, self, kernel_size, stride, padding, dilation);
  const std::vector<int64_t> sizes = pool.output_sizes(op, self, ceil_mode);
  TORCH_CHECK(grad_output.sizes() == at::IntArrayRef(sizes), op, ": expected grad_output of sizes ",
              at::IntArrayRef(sizes), ", got ", grad_output.sizes());
  TORCH_CHECK(indices.sizes() == at::IntArrayRef(sizes), op, ": expected indices of sizes ", at::IntArrayRef(sizes),
              ", got ", indices.sizes());
  TORCH_CHECK(indices.scalar_type() == at::kLong, op, ": expected int64 indices, got ", indices.scalar_type());
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type(), op, ": grad_output is ", grad_output.scalar_type(),
              ", self is ", self.scalar_type());
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

at::Tensor max_pool2d_with_indices_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                            at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                            at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
                                            const at::Tensor& indices) {
  constexpr const char* op = "max_pool2d_with_indices_backward";
  check_same_device(op, {{"grad_output", grad_output}, {"self", self}, {"indices", indices}});
  const LaunchDevice device = launch_device_of(grad_output, self, indices);
  at::Tensor grad_input = empty_on(device, self.sizes(), self.scalar_type());
  pool_backward(op, device, grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices, grad_input);
  return grad_input;
}

at::Tensor& max_pool2d_with_indices_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                                 at::IntArrayRef kernel_size, at::IntArrayRef stride,
                                                 at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
                                                 const at::Tensor& indices, at::Tensor& grad_input) {
  constexpr const char* op = "max_pool2d_with_indices_backward.grad_input";
  check_same_device(op, {{"grad_output", grad_output}, {"self", self}, {"indices", indices},
                         {"grad_input", grad_input}});
  check_out_device(op, self, grad_input);
  hw::check_out_dtype(grad_input, self.scalar_type());
  at::native::resize_output(grad_input, self.sizes());
  const LaunchDevice device = launch_device_of(grad_output, self, indices, grad_input);
  pool_backward(op, device, grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices, grad_input);
  return grad_input;
}

// ATen's avg_pool2d has no dilation: the geometry with dilation 1.
Pool2d avg_pool(const char* op, const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                at::IntArrayRef padding, std::optional<int64_t> divisor_override) {
  TORCH_CHECK(!divisor_override.has_value() || *divisor_override != 0, op, ": divisor must be not zero");
  const int64_t unit = 1;
  return Pool2d(op, self, kernel_size, stride, padding, at::IntArrayRef(unit));
}

// CANN's "no override" is 0, which ATen refuses as a divisor.
int64_t divisor_of(std::optional<int64_t> divisor_override) { return divisor_override.value_or(0); }

constexpr int8_t kPoolKeepDtype = 0;  // cubeMathType KEEP_DTYPE

void avg_forward(const LaunchDevice& device, const Pool2d& pool, const at::Tensor& self, bool ceil_mode,
                 bool count_include_pad, std::optional<int64_t> divisor_override, const at::Tensor& out) {
  if (out.numel() == 0) {
    return;  // a zero batch: CANN takes no empty tensor
  }
  FLAGOS_GUARDED_LAUNCH(device, aclnnAvgPool2d, self, pool.kernel, pool.stride, pool.padding, ceil_mode,
                        count_include_pad, divisor_of(divisor_override), kPoolKeepDtype, out);
}

at::Tensor avg_pool2d(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                      at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                      std::optional<int64_t> divisor_override) {
  constexpr const char* op = "avg_pool2d";
  const Pool2d pool = avg_pool(op, self, kernel_size, stride, padding, divisor_override);
  const LaunchDevice device = launch_device_of(self);
  at::Tensor out = empty_on(device, pool.output_sizes(op, self, ceil_mode), self.scalar_type());
  avg_forward(device, pool, self, ceil_mode, count_include_pad, divisor_override, out);
  return out;
}

at::Tensor& avg_pool2d_out(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                           at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override, at::Tensor& out) {
  constexpr const char* op = "avg_pool2d.out";
  check_same_device(op, {{"self", self}, {"out", out}});
  check_out_device(op, self, out);
  const Pool2d pool = avg_pool(op, self, kernel_size, stride, padding, divisor_override);
  hw::check_out_dtype(out, self.scalar_type());
  at::native::resize_output(out, pool.output_sizes(op, self, ceil_mode));
  const LaunchDevice device = launch_device_of(self, out);
  avg_forward(device, pool, self, ceil_mode, count_include_pad, divisor_override, out);
  return out;
}

void avg_backward(const char* op, const LaunchDevice& device, const at::Tensor& grad_output, const at::Tensor& self,
                  at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override, const at::Tensor& grad_input) {
  const Pool2d pool = avg_pool(op, self, kernel_size, stride, padding, divisor_override);
  const std::vector<int64_t> sizes = pool.output_sizes(op, self, ceil_mode);
  TORCH_CHECK(grad_output.sizes() == at::IntArrayRef(sizes), op, ": expected grad_output of sizes ",
              at::IntArrayRef(sizes), ", got ", grad_output.sizes());
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type(), op, ": grad_output is ", grad_output.scalar_type(),
              ", self is ", self.scalar_type());
  if (grad_input.numel() == 0) {
    return;
  }
  FLAGOS_GUARDED_LAUNCH(device, aclnnAvgPool2dBackward, grad_output, self, pool.kernel, pool.stride, pool.padding,
                        ceil_mode, count_include_pad, divisor_of(divisor_override), kPoolKeepDtype, grad_input);
}

at::Tensor avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self, at::IntArrayRef kernel_size,
                               at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode,
                               bool count_include_pad, std::optional<int64_t> divisor_override) {
  constexpr const char* op = "avg_pool2d_backward";
  check_same_device(op, {{"grad_output", grad_output}, {"self", self}});
  const LaunchDevice device = launch_device_of(grad_output, self);
  at::Tensor grad_input = empty_on(device, self.sizes(), self.scalar_type());
  avg_backward(op, device, grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
               divisor_override, grad_input);
  return grad_input;
}

at::Tensor& avg_pool2d_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                    at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding,
                                    bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override,
                                    at::Tensor& grad_input) {
  constexpr const char* op = "avg_pool2d_backward.grad_input";
  check_same_device(op, {{"grad_output", grad_output}, {"self", self}, {"grad_input", grad_input}});
  check_out_device(op, self, grad_input);
  hw::check_out_dtype(grad_input, self.scalar_type());
  at::native::resize_output(grad_input, self.sizes());
  const LaunchDevice device = launch_device_of(grad_output, self, grad_input);
  avg_backward(op, device, grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
               divisor_override, grad_input);
  return grad_input;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("max_pool2d_with_indices", flagos::with_dtype_fallback<"max_pool2d_with_indices", &max_pool2d_with_indices>());
  m.impl("max_pool2d_with_indices.out", flagos::with_dtype_fallback<"max_pool2d_with_indices.out", &max_pool2d_with_indices_out>());
  m.impl("max_pool2d_with_indices_backward", flagos::with_dtype_fallback<"max_pool2d_with_indices_backward", &max_pool2d_with_indices_backward>());
  m.impl("max_pool2d_with_indices_backward.grad_input", flagos::with_dtype_fallback<"max_pool2d_with_indices_backward.grad_input", &max_pool2d_with_indices_backward_out>());
  m.impl("avg_pool2d", flagos::with_dtype_fallback<"avg_pool2d", &avg_pool2d>());
  m.impl("avg_pool2d.out", flagos::with_dtype_fallback<"avg_pool2d.out", &avg_pool2d_out>());
  m.impl("avg_pool2d_backward", flagos::with_dtype_fallback<"avg_pool2d_backward", &avg_pool2d_backward>());
  m.impl("avg_pool2d_backward.grad_input", flagos::with_dtype_fallback<"avg_pool2d_backward.grad_input", &avg_pool2d_backward_out>());
}

}  // namespace
}  // namespace flagos
