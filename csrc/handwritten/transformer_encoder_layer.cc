// _transformer_encoder_layer_fwd: nn.TransformerEncoderLayer's inference
// fast path (eval mode, no grad), which PyTorch takes on a PrivateUse1 device
// as on CUDA. ATen has no composite for it and CANN no fused operator, so it
// is composed of flagos ops (linear, layer_norm, matmul, softmax, masked_fill,
// gelu/relu), which launch their ACLNN operators; the layer makes its device
// current once for all of them.
//
// It computes what ATen's CPU kernel computes: self-attention (one qkv
// projection, q scaled by 1/sqrt(head_dim), softmax over the keys, the output
// projection), a residual, layer norm 1, the feed-forward block, a residual,
// layer norm 2; with norm_first each norm comes before its block instead. A
// mask is read as ATen's kernel reads it: any nonzero (or true) element hides
// that key; mask_type 1 is a [batch, seq] key-padding mask, 0 and 2 broadcast
// to [batch, heads, seq, seq]. A query whose keys are all hidden gets NaN, as
// from ATen's CPU kernel.
//
// Device policy: first-tensor (src); every tensor on that device.
#include <ATen/core/Tensor.h>
#include <ATen/ops/add.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/softmax.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <limits>
#include <optional>

#include "generated/impls.h"
#include "runtime/launch.h"

namespace flagos {
namespace {

constexpr const char* kOp = "_transformer_encoder_layer_fwd";

// Multi-head self-attention of x [batch, seq, embed] with its projections.
at::Tensor self_attention(const at::Tensor& x, int64_t num_heads, const at::Tensor& qkv_weight,
                          const at::Tensor& qkv_bias, const at::Tensor& proj_weight, const at::Tensor& proj_bias,
                          const std::optional<at::Tensor>& mask, std::optional<int64_t> mask_type) {
  const int64_t batch = x.size(0), seq = x.size(1), embed = x.size(2);
  const int64_t head_dim = embed / num_heads;
  // [batch, seq, 3 * embed] -> q, k, v of [batch, heads, seq, head_dim]
  const at::Tensor qkv = at::linear(x, qkv_weight, qkv_bias).view({batch, seq, 3, num_heads, head_dim});
  const at::Tensor q = qkv.select(2, 0).transpose(1, 2).div(std::sqrt(static_cast<double>(head_dim)));
  const at::Tensor k = qkv.select(2, 1).transpose(1, 2);
  const at::Tensor v = qkv.select(2, 2).transpose(1, 2);
  at::Tensor scores = at::matmul(q, k.transpose(-2, -1));
  if (mask.has_value() && mask->defined()) {
    at::Tensor hidden = mask->to(at::kBool);
    if (mask_type == 1) {
      hidden = hidden.view({batch, 1, 1, seq});
    }
    scores = scores.masked_fill(hidden, -std::numeric_limits<double>::infinity());
  }
  const at::Tensor weights = at::softmax(scores, -1);
  const at::Tensor heads = at::matmul(weights, v).transpose(1, 2).reshape({batch, seq, embed});
  return at::linear(heads, proj_weight, proj_bias);
}

}  // namespace
}  // namespace flagos

namespace flagos::impl {

at::Tensor transformer_encoder_layer_fwd(
    const LaunchDevice& /*device*/, const at::Tensor& src, int64_t embed_dim, int64_t num_heads, const at::Tensor& qkv_weight,
    const at::Tensor& qkv_bias, const at::Tensor& proj_weight, const at::Tensor& proj_bias, bool use_gelu,
    bool norm_first, double eps, const at::Tensor& norm_weight_1, const at::Tensor& norm_bias_1,
    const at::Tensor& norm_weight_2, const at::Tensor& norm_bias_2, const at::Tensor& ffn_weight_1,
    const at::Tensor& ffn_bias_1, const at::Tensor& ffn_weight_2, const at::Tensor& ffn_bias_2,
    const std::optional<at::Tensor>& mask, std::optional<int64_t> mask_type) {
  TORCH_CHECK(src.dim() == 3 && src.size(2) == embed_dim, kOp, ": expected src of shape [batch, seq, ", embed_dim,
              "], got ", src.sizes());
  TORCH_CHECK(num_heads > 0 && embed_dim % num_heads == 0, kOp, ": embed_dim (", embed_dim,
              ") must be divisible by num_heads (", num_heads, ")");
  TORCH_CHECK(!(mask.has_value() && mask->defined()) || mask_type.has_value(), kOp,
              ": a mask needs its mask_type (0: [seq, seq], 1: [batch, seq], 2: [batch, heads, seq, seq])");
  if (src.numel() == 0) {
    return src.clone();
  }
  const at::IntArrayRef normalized(embed_dim);  // views the parameter: [embed_dim]
  at::Tensor x = norm_first ? at::layer_norm(src, normalized, norm_weight_1, norm_bias_1, eps) : src;
  x = at::add(self_attention(x, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, mask, mask_type), src);
  if (!norm_first) {
    x = at::layer_norm(x, normalized, norm_weight_1, norm_bias_1, eps);
  }
  const at::Tensor residual = x;
  if (norm_first) {
    x = at::layer_norm(x, normalized, norm_weight_2, norm_bias_2, eps);
  }
  x = at::linear(x, ffn_weight_1, ffn_bias_1);
  x = use_gelu ? at::gelu(x) : at::relu(x);
  x = at::add(at::linear(x, ffn_weight_2, ffn_bias_2), residual);
  if (!norm_first) {
    x = at::layer_norm(x, normalized, norm_weight_2, norm_bias_2, eps);
  }
  return x;
}

}  // namespace flagos::impl
