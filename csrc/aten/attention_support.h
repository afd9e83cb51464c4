// When the fused attention kernel (csrc/handwritten/attention.cc, CANN's
// aclnnFlashAttentionScoreV2) can run a scaled_dot_product_attention call.
// _fused_sdp_choice (csrc/aten/sdpa_choice.cc) picks the overrideable backend
// exactly then, and the math decomposition otherwise; the kernel checks the
// same rule when it is called directly. It lives here, not next to the
// kernel, because the choice is an ATen-level decision: aten/ never includes
// the kernels' folders (tests/sim/test_layers.py).
#pragma once

#include <ATen/ExpandUtils.h>
#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <optional>
#include <string>

namespace flagos::hw {

// CANN's limits (FlashAttentionScore and its gradient): N of query in
// [1, 256], D in [1, 512] (the gradient's limit; the forward takes 768).
inline constexpr int64_t kMaxAttentionHeads = 256;
inline constexpr int64_t kMaxAttentionHeadDim = 512;

// Why the fused kernel cannot compute this call; empty when it can.
// `attn_mask` is the mask as scaled_dot_product_attention passes it on
// (additive, of query's dtype) or as a caller gives it (bool: true attends).
// Sizes are read as SymInts: under torch.compile(dynamic=True) the choice
// sees symbolic sizes, and each comparison guards the compiled graph on
// its outcome (numel() or size() would raise there).
inline std::string fused_attention_unsupported(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                                               const std::optional<at::Tensor>& attn_mask, double dropout_p,
                                               bool is_causal, bool enable_gqa) {
  if (query.dim() != 4 || key.dim() != 4 || value.dim() != 4) {
    return "query, key and value must be 4-D (batch, heads, sequence, head dim)";
  }
  if (query.is_nested() || key.is_nested() || value.is_nested()) {
    return "nested tensors are not supported";
  }
  const at::ScalarType dtype = query.scalar_type();
  if (dtype != at::kFloat && dtype != at::kHalf && dtype != at::kBFloat16) {
    return "the dtype must be float32, float16 or bfloat16";
  }
  if (key.scalar_type() != dtype || value.scalar_type() != dtype) {
    return "query, key and value must have one dtype";
  }
  if (query.sym_numel() == 0 || key.sym_numel() == 0 || value.sym_numel() == 0) {
    return "empty inputs are not supported";
  }
  const c10::SymInt heads = query.sym_size(1);
  const c10::SymInt kv_heads = key.sym_size(1);
  if (key.sym_size(0) != query.sym_size(0) || value.sym_size(0) != query.sym_size(0) ||
      value.sym_size(1) != kv_heads || value.sym_size(2) != key.sym_size(2)) {
    return "key and value must match query's batch and each other's heads and sequence";
  }
  if (query.sym_size(3) != key.sym_size(3) || value.sym_size(3) > key.sym_size(3) ||
      key.sym_size(3) > kMaxAttentionHeadDim) {
    return "the head dims must satisfy query == key >= value, at most 512";
  }
  if (heads > kMaxAttentionHeads || heads % kv_heads != 0 || (heads != kv_heads && !enable_gqa)) {
    return "query's heads must be at most 256 and equal key's (or a multiple of them with enable_gqa)";
  }
  if (dropout_p != 0.0) {
    return "dropout is not supported";
  }
  if (attn_mask.has_value() && attn_mask->defined()) {
    const at::Tensor& mask = *attn_mask;
    if (is_causal) {
      return "an explicit mask with is_causal";
    }
    if (mask.scalar_type() != at::kBool && mask.scalar_type() != dtype) {
      return "the mask must be bool or of query's dtype";
    }
    if (mask.dim() > 4 ||
        !at::is_expandable_to(mask.sym_sizes(),
                              {query.sym_size(0), heads, query.sym_size(2), key.sym_size(2)})) {
      return "the mask must broadcast to (batch, heads, query sequence, key sequence)";
    }
  }
  return {};
}

}  // namespace flagos::hw
