// Convolution forward and backward: convolution_overrideable and
// convolution_backward_overrideable (aclnnConvolution,
// aclnnConvolutionBackward).
//
// ATen sends every convolution of a PrivateUse1 tensor here: at::convolution
// checks the arguments, views a 1-d convolution as 2-d, pads the input of
// padding="same" when its total padding is odd, and calls
// convolution_overrideable; autograd's convolution_backward calls
// convolution_backward_overrideable with the gradients it needs
// (output_mask: input, weight, bias).
//
// cubeMathType is KEEP_DTYPE: a float convolution is computed in float,
// never in HF32.
#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>
#include <vector>

#include "generated/impls.h"
#include "handwritten/support.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnConvolution.h"
#include "flagos/aclnn/aclnnConvolutionBackward.h"

namespace flagos {
namespace {

constexpr int8_t kKeepDtype = 0;

// The geometry of one convolution, checked as CANN needs it.
struct Conv {
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed;
  int64_t groups;

  Conv(const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride_, at::IntArrayRef padding_,
       at::IntArrayRef dilation_, bool transposed_, at::IntArrayRef output_padding_, int64_t groups_)
      : stride(stride_.vec()), padding(padding_.vec()), dilation(dilation_.vec()),
        output_padding(output_padding_.vec()), transposed(transposed_), groups(groups_) {
    TORCH_CHECK(input.dim() >= 3 && input.dim() <= 5, "flagos convolution: expected a 3-d, 4-d or 5-d input, got ",
                input.dim(), "-d");
    TORCH_CHECK(weight.dim() == input.dim(), "flagos convolution: weight has ", weight.dim(),
                " dims, input has ", input.dim());
    const size_t spatial = static_cast<size_t>(input.dim() - 2);
    TORCH_CHECK(stride.size() == spatial && padding.size() == spatial && dilation.size() == spatial,
                "flagos convolution: expected ", spatial, " values of stride, padding and dilation");
    // A non-transposed convolution ignores output_padding: CANN's backward wants it 0.
    if (!transposed) {
      output_padding.assign(spatial, 0);
    }
    TORCH_CHECK(output_padding.size() == spatial, "flagos convolution: expected ", spatial,
                " values of output_padding");
    TORCH_CHECK(groups > 0, "non-positive groups is not supported");
    TORCH_CHECK(groups <= std::numeric_limits<int>::max(), "flagos convolution: groups ", groups, " is too large");
    TORCH_CHECK(input.scalar_type() == weight.scalar_type(), "Input type (", input.scalar_type(),
                ") and weight type (", weight.scalar_type(), ") should be the same");
  }

  int64_t out_channels(const at::Tensor& weight) const { return transposed ? weight.size(1) * groups : weight.size(0); }

  std::vector<int64_t> output_sizes(const at::Tensor& input, const at::Tensor& weight) const {
    std::vector<int64_t> sizes{input.size(0), out_channels(weight)};
    for (size_t i = 0; i < stride.size(); ++i) {
      const int64_t in = input.size(i + 2), kernel = weight.size(i + 2);
      const int64_t size = transposed
                               ? (in - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel - 1) + output_padding[i] + 1
                               : (in + 2 * padding[i] - dilation[i] * (kernel - 1) - 1) / stride[i] + 1;
      TORCH_CHECK(size >= 0, "flagos convolution: the output's spatial dim ", i, " would be ", size,
                  ": the input is too small for the kernel");
      sizes.push_back(size);
    }
    return sizes;
  }

  // The dims a bias gradient sums over: batch and spatial.
  std::vector<int64_t> bias_reduction_dims(int64_t rank) const {
    std::vector<int64_t> dims{0};
    for (int64_t d = 2; d < rank; ++d) {
      dims.push_back(d);
    }
    return dims;
  }
};

}  // namespace
}  // namespace flagos

namespace flagos::impl {

at::Tensor convolution(const LaunchDevice& device, const at::Tensor& input, const at::Tensor& weight,
                       const std::optional<at::Tensor>& bias, at::IntArrayRef stride, at::IntArrayRef padding,
                       at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding, int64_t groups) {
  const Conv conv(input, weight, stride, padding, dilation, transposed, output_padding, groups);
  const bool has_bias = bias.has_value() && bias->defined();
  if (has_bias) {
    TORCH_CHECK(bias->scalar_type() == input.scalar_type(), "Input type (", input.scalar_type(), ") and bias type (",
                bias->scalar_type(), ") should be the same");
    TORCH_CHECK(bias->dim() == 1 && bias->size(0) == conv.out_channels(weight), "flagos convolution: expected a bias of ",
                conv.out_channels(weight), " values, got sizes ", bias->sizes());
  }
  at::Tensor out = empty_on(device, conv.output_sizes(input, weight), input.scalar_type());
  if (out.numel() == 0) {
    return out;
  }
  if (input.numel() == 0 || weight.numel() == 0) {
    // No input channel: every output is the bias, or 0.
    out.zero_();
    if (has_bias) {
      std::vector<int64_t> shape(out.dim(), 1);
      shape[1] = out.size(1);
      out.add_(bias->reshape(shape));
    }
    return out;
  }
  const std::optional<at::Tensor> bias_arg = has_bias ? bias : std::nullopt;
  FLAGOS_GUARDED_LAUNCH(device, aclnnConvolution, input, weight, bias_arg, conv.stride, conv.padding, conv.dilation,
                        conv.transposed, conv.output_padding, conv.groups, out, kKeepDtype);
  return out;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const LaunchDevice& device, const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
    at::IntArrayRef output_padding, int64_t groups, std::array<bool, 3> output_mask) {
  const Conv conv(input, weight, stride, padding, dilation, transposed, output_padding, groups);
  TORCH_CHECK(grad_output.scalar_type() == input.scalar_type(), "flagos convolution backward: grad_output is ",
              grad_output.scalar_type(), ", input is ", input.scalar_type());
  const std::vector<int64_t> output_sizes = conv.output_sizes(input, weight);
  TORCH_CHECK(grad_output.sizes() == at::IntArrayRef(output_sizes), "flagos convolution backward: expected grad_output ",
              "of sizes ", at::IntArrayRef(output_sizes), ", got ", grad_output.sizes());
  const int64_t channels = conv.out_channels(weight);
  at::Tensor grad_input = output_mask[0] ? empty_on(device, input.sizes(), input.scalar_type()) : at::Tensor();
  at::Tensor grad_weight = output_mask[1] ? empty_on(device, weight.sizes(), weight.scalar_type()) : at::Tensor();
  at::Tensor grad_bias = output_mask[2] ? empty_on(device, {channels}, grad_output.scalar_type()) : at::Tensor();
  if (!output_mask[0] && !output_mask[1] && !output_mask[2]) {
    return {grad_input, grad_weight, grad_bias};
  }
  if (grad_output.numel() == 0 || input.numel() == 0 || weight.numel() == 0) {
    // An empty operand: the input and weight gradients sum nothing, the bias
    // gradient is grad_output's sum (0 when it is empty too).
    if (grad_input.defined() && grad_input.numel() > 0) {
      grad_input.zero_();
    }
    if (grad_weight.defined() && grad_weight.numel() > 0) {
      grad_weight.zero_();
    }
    if (grad_bias.defined() && grad_bias.numel() > 0) {
      if (grad_output.numel() == 0) {
        grad_bias.zero_();
      } else {
        grad_bias.copy_(grad_output.sum(conv.bias_reduction_dims(grad_output.dim())));
      }
    }
    return {grad_input, grad_weight, grad_bias};
  }
  const std::vector<int64_t> bias_sizes{channels};
  FLAGOS_GUARDED_LAUNCH(device, aclnnConvolutionBackward, grad_output, input, weight, bias_sizes, conv.stride,
                        conv.padding, conv.dilation, conv.transposed, conv.output_padding,
                        static_cast<int>(conv.groups), output_mask, kKeepDtype, grad_input, grad_weight, grad_bias);
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace flagos::impl
