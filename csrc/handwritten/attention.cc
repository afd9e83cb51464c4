// Fused scaled dot product attention: PyTorch's PrivateUse1 SDPA hooks
// _scaled_dot_product_fused_attention_overrideable and its _backward, on
// CANN's aclnnFlashAttentionScoreV2 / aclnnFlashAttentionScoreGradV2 (one
// launch for the attention itself, forward or backward).
// _fused_sdp_choice (csrc/aten/sdpa_choice.cc) sends a call here when
// hw::fused_attention_unsupported finds nothing against it.
//
// How PyTorch's arguments map onto CANN's:
// - layout BNSD, headNum = query's heads; key/value may have fewer heads
//   (GQA: CANN takes Nq a multiple of Nkv);
// - scale: `scale`, else 1/sqrt(head dim);
// - an additive mask (scaled_dot_product_attention converts a bool one into
//   0 / -inf of query's dtype before it calls here) goes in as the position
//   shift `pse` with pseType 0: softmax(scale * q k^T + pse), PyTorch's
//   formula; broadcast (a stride-0 view) to [B, N, Sq, Skv]. Its -inf
//   positions also go in as attenMask (aclnnIsNegInf), with innerPrecise 2:
//   a row with every position masked then gives zeros, as PyTorch's
//   softmax does, instead of exp(-inf - -inf) = NaN;
// - a bool mask (a direct call) goes in as attenMask, which CANN reads
//   inverted (1 = masked out): aclnnLogicalNot first, innerPrecise 2;
// - is_causal: sparseMode 2 (leftUpCausal, PyTorch's top-left aligned
//   triangle) with CANN's compressed 2048 x 2048 mask (1 above the
//   diagonal), made once per device and kept;
// - no dropout (dropout_p > 0 takes the math path).
//
// Statistics: CANN returns the row max and the row sum of exp(score - max)
// ([B, N, Sq, 8] float each); the op returns logsumexp = max + log(sum)
// ([B, N, Sq] float, as PyTorch's meta function says), two small launches
// (aclnnLog, aclnnInplaceAdd). The backward hands CANN max = logsumexp and
// sum = 1, from which it recomputes the same probabilities exp(score - lse).
// The gradient of the mask is not computed (CANN leaves dpse unwritten):
// _fused_sdp_choice keeps a mask that requires grad on the math path.
#include <ATen/core/Tensor.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/zeros.h>
#include <c10/core/ScalarType.h>
#include <c10/core/SymInt.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>

#include "generated/impls.h"
#include "aten/attention_support.h"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnFlashAttentionScoreGradV2.h"
#include "flagos/aclnn/aclnnFlashAttentionScoreV2.h"
#include "flagos/aclnn/aclnnInplaceAdd.h"
#include "flagos/aclnn/aclnnInplaceFillScalar.h"
#include "flagos/aclnn/aclnnIsNegInf.h"
#include "flagos/aclnn/aclnnLog.h"
#include "flagos/aclnn/aclnnLogicalNot.h"

namespace flagos {
namespace {

constexpr int64_t kNoBand = 2147483647;  // preTokens / nextTokens: no sliding window
constexpr int64_t kSparseDefault = 0;
constexpr int64_t kSparseLeftUpCausal = 2;
constexpr int64_t kPseAfterScale = 0;  // pseType 0: softmax(scale * q k^T + pse)
constexpr int64_t kPrecise = 0;
constexpr int64_t kPreciseInvalidRows = 2;  // innerPrecise 2: a fully masked row gives zeros
constexpr int64_t kCompressedMask = 2048;
constexpr const char* kLayout = "BNSD";

// CANN's compressed causal mask on `device`: [2048, 2048] bool, true above
// the diagonal. Made on first use and kept for the life of the process
// (never freed: it may outlive the allocator at exit).
at::Tensor causal_mask(const LaunchDevice& device) {
  static std::mutex mutex;
  static auto* masks = new std::unordered_map<c10::DeviceIndex, at::Tensor>();
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = masks->find(device.index);
  if (it == masks->end()) {
    const at::Tensor host = at::ones({kCompressedMask, kCompressedMask}, at::kBool).triu(1);
    it = masks->emplace(device.index, host.to(flagos_device(device.index))).first;
  }
  return it->second;
}

// The mask arguments of one launch: pse (additive), attenMask (bool, CANN's
// polarity), the sparse mode and innerPrecise.
struct MaskArgs {
  std::optional<at::Tensor> pse;
  std::optional<at::Tensor> atten_mask;
  int64_t sparse_mode = kSparseDefault;
  int64_t inner_precise = kPrecise;
};

MaskArgs mask_args(const LaunchDevice& device, const at::Tensor& mask, bool is_causal, int64_t batch, int64_t heads,
                   int64_t q_len, int64_t kv_len) {
  MaskArgs args;
  if (is_causal) {
    args.atten_mask = causal_mask(device);
    args.sparse_mode = kSparseLeftUpCausal;
  } else if (mask.defined()) {
    // CANN's attenMask: true where a position is masked out.
    at::Tensor masked_out = empty_on(device, mask.sizes(), at::kBool);
    if (mask.scalar_type() == at::kBool) {
      FLAGOS_GUARDED_LAUNCH(device, aclnnLogicalNot, mask, masked_out);
    } else {
      FLAGOS_GUARDED_LAUNCH(device, aclnnIsNegInf, mask, masked_out);
      args.pse = mask.expand({batch, heads, q_len, kv_len});
    }
    args.atten_mask = masked_out.expand({batch, heads, q_len, kv_len});
    args.inner_precise = kPreciseInvalidRows;
  }
  return args;
}

void check_supported(const char* op, const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                     const at::Tensor& mask, double dropout_p, bool is_causal) {
  const std::optional<at::Tensor> given = mask.defined() ? std::optional<at::Tensor>(mask) : std::nullopt;
  const std::string why =
      hw::fused_attention_unsupported(query, key, value, given, dropout_p, is_causal, /*enable_gqa=*/true);
  TORCH_CHECK(why.empty(), op, " on flagos: ", why);
}

// `out` (contiguous BNSD, as CANN writes it) in query's memory order, as the
// op's meta function allocates its output (alloc_with_matching_layout: dims
// by decreasing stride of query). torch.compile checks the strides it gets
// against the meta function's; callers such as transformers pass a query
// transposed from [B, S, N, D], whose order is then B, S, N, D. One copy
// when the order differs.
at::Tensor in_memory_order_of(const at::Tensor& query, const at::Tensor& out) {
  std::array<int64_t, 4> order{0, 1, 2, 3};  // physical position -> logical dim
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return query.stride(a) > query.stride(b); });
  if (order == std::array<int64_t, 4>{0, 1, 2, 3}) {
    return out;
  }
  std::array<int64_t, 4> physical_sizes{}, logical_of{};
  for (int64_t i = 0; i < 4; ++i) {
    physical_sizes[i] = out.size(order[i]);
    logical_of[order[i]] = i;
  }
  at::Tensor result = out.new_empty(physical_sizes).permute(logical_of);
  result.copy_(out);
  return result;
}

double scale_of(std::optional<double> scale, const at::Tensor& query) {
  return scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(query.size(3)));
}

}  // namespace
}  // namespace flagos

namespace flagos::impl {

using ForwardResult = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt,
                                 at::Tensor, at::Tensor, at::Tensor>;

ForwardResult fused_attention(const LaunchDevice& device, const at::Tensor& query, const at::Tensor& key,
                              const at::Tensor& value, const std::optional<at::Tensor>& attn_bias, double dropout_p,
                              bool is_causal, bool return_debug_mask, std::optional<double> scale) {
  const at::Tensor mask = attn_bias.has_value() ? *attn_bias : at::Tensor();
  check_supported("_scaled_dot_product_fused_attention_overrideable", query, key, value, mask, dropout_p, is_causal);
  TORCH_CHECK(!return_debug_mask, "_scaled_dot_product_fused_attention_overrideable on flagos: return_debug_mask "
              "is not supported");
  const int64_t batch = query.size(0), heads = query.size(1), q_len = query.size(2);
  const int64_t kv_len = key.size(2), v_dim = value.size(3);

  at::Tensor out = empty_on(device, {batch, heads, q_len, v_dim}, query.scalar_type());
  const at::Tensor softmax_max = empty_on(device, {batch, heads, q_len, 8}, at::kFloat);
  const at::Tensor softmax_sum = empty_on(device, {batch, heads, q_len, 8}, at::kFloat);
  const MaskArgs masks = mask_args(device, mask, is_causal, batch, heads, q_len, kv_len);
  FLAGOS_GUARDED_LAUNCH(device, aclnnFlashAttentionScoreV2, query, key, value, masks.pse, at::Tensor(),
                        at::Tensor(), masks.atten_mask, at::OptionalIntArrayRef(), at::OptionalIntArrayRef(),
                        at::OptionalIntArrayRef(), scale_of(scale, query), 1.0, kNoBand, kNoBand, heads, kLayout,
                        masks.inner_precise, masks.sparse_mode, kPseAfterScale, softmax_max, softmax_sum,
                        at::Tensor(), out);

  // logsumexp = max + log(sum), from the first of the 8 copies.
  at::Tensor logsumexp = empty_on(device, {batch, heads, q_len}, at::kFloat);
  FLAGOS_GUARDED_LAUNCH(device, aclnnLog, softmax_sum.select(3, 0), logsumexp);
  FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceAdd, logsumexp, softmax_max.select(3, 0), at::Scalar(1));
  // No nested inputs (cum_seq_*) and no debug mask. Without dropout the
  // philox seed and offset are unused, but the op's meta function promises
  // 0-dim int64 tensors for them and torch.compile's wrappers check that
  // promise: host zeros, as CUDA's kernels return without dropout.
  const at::Tensor philox_seed = at::zeros({}, at::kLong);
  const at::Tensor philox_offset = at::zeros({}, at::kLong);
  return {in_memory_order_of(query, out), logsumexp,     at::Tensor(), at::Tensor(), c10::SymInt(q_len),
          c10::SymInt(kv_len),            philox_seed,   philox_offset, at::Tensor()};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> fused_attention_backward(
    const LaunchDevice& device, const at::Tensor& grad_out, const at::Tensor& query, const at::Tensor& key,
    const at::Tensor& value, const at::Tensor& attn_bias, std::array<bool, 4> grad_input_mask, const at::Tensor& out,
    const at::Tensor& logsumexp, const at::Tensor& /*cum_seq_q*/, const at::Tensor& /*cum_seq_k*/, int64_t /*max_q*/,
    int64_t /*max_k*/, double dropout_p, bool is_causal, const at::Tensor& /*philox_seed*/,
    const at::Tensor& /*philox_offset*/, std::optional<double> scale) {
  const char* op = "_scaled_dot_product_fused_attention_overrideable_backward";
  check_supported(op, query, key, value, attn_bias, dropout_p, is_causal);
  TORCH_CHECK(!grad_input_mask[3], op, " on flagos: the gradient of attn_bias is not computed (CANN's "
              "FlashAttentionScoreGrad leaves dpse unwritten)");
  const int64_t batch = query.size(0), heads = query.size(1), q_len = query.size(2);
  const int64_t kv_len = key.size(2), v_dim = value.size(3);
  TORCH_CHECK(logsumexp.sizes() == at::IntArrayRef({batch, heads, q_len}) && logsumexp.scalar_type() == at::kFloat,
              op, " on flagos: logsumexp must be the forward's [batch, heads, query sequence] float32");
  TORCH_CHECK(out.sizes() == at::IntArrayRef({batch, heads, q_len, v_dim}) && grad_out.sizes() == out.sizes(), op,
              " on flagos: out and grad_out must be [batch, heads, query sequence, value head dim]");

  // CANN recomputes the probabilities as exp(score - max) / sum: max =
  // logsumexp and sum = 1 give softmax exactly.
  const at::Tensor softmax_max = logsumexp.unsqueeze(3).expand({batch, heads, q_len, 8});
  const at::Tensor one = empty_on(device, {1, 1, 1, 1}, at::kFloat);
  FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceFillScalar, one, at::Scalar(1.0));
  const at::Tensor softmax_sum = one.expand({batch, heads, q_len, 8});

  at::Tensor grad_query = empty_on(device, query.sizes(), query.scalar_type());
  at::Tensor grad_key = empty_on(device, key.sizes(), key.scalar_type());
  at::Tensor grad_value = empty_on(device, value.sizes(), value.scalar_type());
  const MaskArgs masks = mask_args(device, attn_bias, is_causal, batch, heads, q_len, kv_len);
  FLAGOS_GUARDED_LAUNCH(device, aclnnFlashAttentionScoreGradV2, query, key, value, grad_out, masks.pse, at::Tensor(),
                        at::Tensor(), masks.atten_mask, softmax_max, softmax_sum, at::Tensor(), out,
                        at::OptionalIntArrayRef(), at::OptionalIntArrayRef(), at::OptionalIntArrayRef(),
                        scale_of(scale, query), 1.0, kNoBand, kNoBand, heads, kLayout, masks.inner_precise,
                        masks.sparse_mode, kPseAfterScale, grad_query, grad_key, grad_value, at::Tensor());
  return {grad_input_mask[0] ? grad_query : at::Tensor(), grad_input_mask[1] ? grad_key : at::Tensor(),
          grad_input_mask[2] ? grad_value : at::Tensor(), at::Tensor()};
}

}  // namespace flagos::impl
