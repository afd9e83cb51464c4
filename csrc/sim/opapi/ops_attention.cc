// Fused attention: aclnnFlashAttentionScoreV2 and aclnnFlashAttentionScoreGradV2
// (hicann/ops-transformer attention/flash_attention_score{,_grad}).
//
// What is simulated, from CANN's docs:
// - layouts BNSD and BSND (BSH, SBH and TND are not simulated and fail
//   phase 1); query, key and value of one dtype (FLOAT16, BFLOAT16, FLOAT);
//   the same batch; qD == kD >= vD; Nq a multiple of Nkv (GQA / MQA);
//   headNum == Nq;
// - scores = scale * (q k^T) (+ pse after the scale for pseType 0, or
//   scale * (q k^T + pse) for pseType 1); pse of query's dtype, shaped
//   [B,N,Sq,Skv], [B,N,1,Skv] or [1,N,Sq,Skv]. pseType 2 and 3 (pse made
//   inside the operator) are not simulated;
// - attenMask (BOOL/UINT8, 1 = masked out): sparseMode 0 (the mask, and the
//   band preTokens/nextTokens from the top left), 1 (the mask only), 2
//   (leftUpCausal) and 3 (rightDownCausal), whose mask must be the
//   compressed 2048 x 2048 upper triangle; without a mask the sparse
//   parameters do not apply. Masked scores are replaced by a large negative
//   value, as CANN's kernel selects one; with innerPrecise 2 a row with no
//   unmasked score gives zeros. sparseMode 4 and up are not simulated;
// - keepProb must be 1 (dropout is not simulated) and the padding mask absent;
// - softmaxMax / softmaxSum: [B, N, Sq, 8] float, the row max of the scores
//   and the sum of exp(score - max), repeated 8 times. The gradient
//   recomputes the probabilities from them (exp(score - max) / sum) and uses
//   attentionIn for the softmax gradient's row term, as CANN's kernel does.
//   dpseOut is unused (CANN: not yet written).
// Everything is computed in float32 and written in the outputs' dtype.
#include <ATen/TensorOperators.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/triu.h>
#include <ATen/ops/zeros.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim_op.h"
#include "flagos/aclnn/aclnnFlashAttentionScoreGradV2.h"
#include "flagos/aclnn/aclnnFlashAttentionScoreV2.h"

using namespace fsim::op;

namespace {

constexpr DTypes kAttention{ACL_FLOAT16, ACL_BF16, ACL_FLOAT};
constexpr DTypes kMask{ACL_BOOL, ACL_UINT8};
constexpr int64_t kCompressedMask = 2048;
// What CANN's kernel selects for a masked score: the most negative float.
constexpr float kMaskedScore = -3.4028234663852886e38f;

bool isLayout4d(const std::string& layout) { return layout == "BNSD" || layout == "BSND"; }

// [B, N, S, D] dims of a 4-D tensor in `layout`.
std::vector<int64_t> bnsd(const aclTensor* t, const std::string& layout) {
  const std::vector<int64_t>& d = t->viewDims;
  if (d.size() != 4) return {};
  if (layout == "BSND") return {d[0], d[2], d[1], d[3]};
  return d;
}

// An ATen view of a tensor as [B, N, S, D].
at::Tensor bnsdView(const at::Tensor& t, const std::string& layout) {
  return layout == "BSND" ? t.permute({0, 2, 1, 3}) : t;
}

struct Shapes {
  int64_t b = 0, nq = 0, nkv = 0, sq = 0, skv = 0, d = 0, dv = 0;
};

// The shared phase-1 checks of forward and backward; fills `shapes`.
void checkAttention(Op& op, const aclTensor* query, const aclTensor* key, const aclTensor* value,
                    const aclTensor* pse, const aclTensor* dropMask, const aclTensor* paddingMask,
                    const aclTensor* attenMask, double keepProb, int64_t headNum, const std::string& layout,
                    int64_t innerPrecise, int64_t sparseMode, int64_t pseType, Shapes& shapes) {
  op.require(isLayout4d(layout), "the simulator implements inputLayout BNSD and BSND (BSH, SBH, TND are not simulated)");
  if (query == nullptr || key == nullptr || value == nullptr || !isLayout4d(layout)) return;
  op.require(query->dtype == key->dtype && key->dtype == value->dtype,
             "query, key and value must have one dtype");
  const std::vector<int64_t> q = bnsd(query, layout), k = bnsd(key, layout), v = bnsd(value, layout);
  op.require(!q.empty() && !k.empty() && !v.empty(), "query, key and value must be 4-D in layout BNSD or BSND");
  if (q.empty() || k.empty() || v.empty()) return;
  shapes = {q[0], q[1], k[1], q[2], k[2], q[3], v[3]};
  op.require(k[0] == q[0] && v[0] == q[0], "query, key and value must have the same batch size");
  op.require(k[1] == v[1] && k[2] == v[2], "key and value must have the same shape but D");
  op.require(q[3] == k[3] && k[3] >= v[3], "the head dims must satisfy qD == kD >= vD");
  op.require(k[1] > 0 && q[1] % k[1] == 0, "query's N must be a multiple of key/value's N");
  op.require(headNum == q[1], "headNum must be query's N");
  op.require(pseType == 0 || pseType == 1, "pseType 2 and 3 (pse made by the operator) are not simulated");
  if (pse != nullptr) {
    op.require(pse->dtype == query->dtype, "realShift/pseShift must have query's dtype");
    const std::vector<int64_t>& p = pse->viewDims;
    const bool fits = p.size() == 4 && p[1] == shapes.nq && p[3] == shapes.skv &&
                      ((p[0] == shapes.b && (p[2] == shapes.sq || p[2] == 1)) || (p[0] == 1 && p[2] == shapes.sq));
    op.require(fits, "pse must be [B,N,Sq,Skv], [B,N,1,Skv] or [1,N,Sq,Skv]");
  }
  op.require(keepProb == 1.0 && dropMask == nullptr, "dropout (keepProb < 1, a drop mask) is not simulated");
  op.require(paddingMask == nullptr, "paddingMask is reserved and must be nullptr");
  op.require(innerPrecise >= 0 && innerPrecise <= 2, "innerPrecise must be 0, 1 or 2");
  op.require(sparseMode >= 0 && sparseMode <= 3, "sparseMode 4 and up are not simulated");
  if (attenMask != nullptr) {
    const std::vector<int64_t>& m = attenMask->viewDims;
    if (sparseMode == 2 || sparseMode == 3) {
      op.require(m == std::vector<int64_t>{kCompressedMask, kCompressedMask},
                 "sparseMode 2 and 3 take the compressed [2048, 2048] mask");
    } else {
      const bool fits = (m.size() == 2 && m[0] == shapes.sq && m[1] == shapes.skv) ||
                        (m.size() == 4 && m[2] == shapes.sq && m[3] == shapes.skv &&
                         ((m[0] == shapes.b && (m[1] == shapes.nq || m[1] == 1)) || (m[0] == 1 && m[1] == 1)));
      op.require(fits, "attenMask must be [B,N,Sq,Skv], [B,1,Sq,Skv], [1,1,Sq,Skv] or [Sq,Skv]");
    }
  }
}

struct Params {
  double scale;
  int64_t preTokens, nextTokens, innerPrecise, sparseMode, pseType;
  std::string layout;
};

// Key or value with each head repeated for the query heads that share it.
at::Tensor perQueryHead(const at::Tensor& t, int64_t nq) {
  const int64_t group = nq / t.size(1);
  return group == 1 ? t : t.repeat_interleave(group, 1);
}

// The float32 scores [B, N, Sq, Skv] and the masked positions (undefined: none).
std::pair<at::Tensor, at::Tensor> scores(Views& v, const Params& p, const char* keyName, const char* pseName) {
  const at::Tensor q = bnsdView(v["query"], p.layout).to(at::kFloat);
  const at::Tensor k = perQueryHead(bnsdView(v[keyName], p.layout).to(at::kFloat), q.size(1));
  at::Tensor s = at::matmul(q, k.transpose(-2, -1));
  const at::Tensor& pse = v[pseName];
  if (pse.defined() && p.pseType == 1) {
    s = (s + pse.to(at::kFloat)) * p.scale;
  } else {
    s = s * p.scale;
    if (pse.defined()) s = s + pse.to(at::kFloat);
  }
  const at::Tensor& mask = v["attenMaskOptional"];
  if (!mask.defined()) return {s, at::Tensor()};
  const int64_t sq = s.size(2), skv = s.size(3);
  const at::Tensor i = at::arange(sq, at::kLong).unsqueeze(1);
  const at::Tensor j = at::arange(skv, at::kLong).unsqueeze(0);
  at::Tensor masked;
  if (p.sparseMode == 2 || p.sparseMode == 3) {
    const at::Tensor expected = at::triu(at::ones({kCompressedMask, kCompressedMask}, at::kBool), 1);
    TORCH_CHECK(mask.to(at::kBool).equal(expected),
                "sparseMode ", p.sparseMode, " needs the compressed mask: 1 above the diagonal of [2048, 2048]");
    masked = p.sparseMode == 2 ? j > i : j > i + (skv - sq);
  } else {
    masked = mask.to(at::kBool);
    if (p.sparseMode == 0) masked = masked | (i - j > p.preTokens) | (j - i > p.nextTokens);
  }
  masked = masked.expand_as(s);
  return {s.masked_fill(masked, kMaskedScore), masked};
}

// Rows with no unmasked score (innerPrecise 2 zeroes their results).
at::Tensor invalidRows(const at::Tensor& masked, const Params& p) {
  if (!masked.defined() || p.innerPrecise != 2) return at::Tensor();
  return masked.all(-1, true);
}

}  // namespace

aclnnStatus aclnnFlashAttentionScoreV2GetWorkspaceSize(
    const aclTensor* query, const aclTensor* key, const aclTensor* value, const aclTensor* realShiftOptional,
    const aclTensor* dropMaskOptional, const aclTensor* paddingMaskOptional, const aclTensor* attenMaskOptional,
    const aclIntArray* prefixOptional, const aclIntArray* qStartIdxOptional, const aclIntArray* kvStartIdxOptional,
    double scaleValue, double keepProb, int64_t preTokens, int64_t nextTokens, int64_t headNum, char* inputLayout,
    int64_t innerPrecise, int64_t sparseMode, int64_t pseType, const aclTensor* softmaxMaxOut,
    const aclTensor* softmaxSumOut, const aclTensor* softmaxOutOut, const aclTensor* attentionOutOut,
    uint64_t* workspaceSize, aclOpExecutor** executor) {
  (void)prefixOptional, (void)qStartIdxOptional, (void)kvStartIdxOptional;  // prefix modes (5, 6): not simulated
  Op op("aclnnFlashAttentionScoreV2", workspaceSize, executor);
  op.arg("query", query, kAttention).arg("key", key, kAttention).arg("value", value, kAttention)
      .optional("realShiftOptional", realShiftOptional, kAttention)
      .optional("dropMaskOptional", dropMaskOptional, {ACL_UINT8})
      .optional("paddingMaskOptional", paddingMaskOptional, kAttention)
      .optional("attenMaskOptional", attenMaskOptional, kMask)
      .arg("softmaxMaxOut", softmaxMaxOut, {ACL_FLOAT}).arg("softmaxSumOut", softmaxSumOut, {ACL_FLOAT})
      .optional("softmaxOutOut", softmaxOutOut, kAttention).arg("attentionOutOut", attentionOutOut, kAttention);
  const std::string layout = inputLayout != nullptr ? inputLayout : "";
  op.require(inputLayout != nullptr, "inputLayout is nullptr");
  Shapes s;
  checkAttention(op, query, key, value, realShiftOptional, dropMaskOptional, paddingMaskOptional, attenMaskOptional,
                 keepProb, headNum, layout, innerPrecise, sparseMode, pseType, s);
  const std::vector<int64_t> stats{s.b, s.nq, s.sq, 8};
  op.require(softmaxMaxOut == nullptr || softmaxMaxOut->viewDims == stats, "softmaxMaxOut must be [B, N, Sq, 8]");
  op.require(softmaxSumOut == nullptr || softmaxSumOut->viewDims == stats, "softmaxSumOut must be [B, N, Sq, 8]");
  op.require(attentionOutOut == nullptr || query == nullptr ||
                 (attentionOutOut->dtype == query->dtype && isLayout4d(layout) &&
                  bnsd(attentionOutOut, layout) == std::vector<int64_t>{s.b, s.nq, s.sq, s.dv}),
             "attentionOutOut must have query's dtype and shape, with value's D");
  const Params p{scaleValue, preTokens, nextTokens, innerPrecise, sparseMode, pseType, layout};
  return op.build([p](Views& v) {
    auto [scores_, masked] = scores(v, p, "key", "realShiftOptional");
    const at::Tensor max = scores_.amax(-1, true);
    const at::Tensor e = at::exp(scores_ - max);
    const at::Tensor sum = e.sum(-1, true);
    at::Tensor probs = e / sum;
    const at::Tensor invalid = invalidRows(masked, p);
    if (invalid.defined()) probs = probs.masked_fill(invalid, 0.0f);
    const at::Tensor value_ = perQueryHead(bnsdView(v["value"], p.layout).to(at::kFloat), probs.size(1));
    bnsdView(v["attentionOutOut"], p.layout).copy_(at::matmul(probs, value_));
    v["softmaxMaxOut"].copy_(max.expand(v["softmaxMaxOut"].sizes()));
    v["softmaxSumOut"].copy_(sum.expand(v["softmaxSumOut"].sizes()));
  });
}
FSIM_PHASE2(aclnnFlashAttentionScoreV2)

aclnnStatus aclnnFlashAttentionScoreGradV2GetWorkspaceSize(
    const aclTensor* query, const aclTensor* keyIn, const aclTensor* value, const aclTensor* dy,
    const aclTensor* pseShiftOptional, const aclTensor* dropMaskOptional, const aclTensor* paddingMaskOptional,
    const aclTensor* attenMaskOptional, const aclTensor* softmaxMaxOptional, const aclTensor* softmaxSumOptional,
    const aclTensor* softmaxInOptional, const aclTensor* attentionInOptional, const aclIntArray* prefixOptional,
    const aclIntArray* qStartIdxOptional, const aclIntArray* kvStartIdxOptional, double scaleValue, double keepProb,
    int64_t preTokens, int64_t nextTokens, int64_t headNum, char* inputLayout, int64_t innerPrecise,
    int64_t sparseMode, int64_t pseType, const aclTensor* dqOut, const aclTensor* dkOut, const aclTensor* dvOut,
    const aclTensor* dpseOut, uint64_t* workspaceSize, aclOpExecutor** executor) {
  (void)prefixOptional, (void)qStartIdxOptional, (void)kvStartIdxOptional;
  Op op("aclnnFlashAttentionScoreGradV2", workspaceSize, executor);
  op.arg("query", query, kAttention).arg("keyIn", keyIn, kAttention).arg("value", value, kAttention)
      .arg("dy", dy, kAttention).optional("pseShiftOptional", pseShiftOptional, kAttention)
      .optional("dropMaskOptional", dropMaskOptional, {ACL_UINT8})
      .optional("paddingMaskOptional", paddingMaskOptional, kAttention)
      .optional("attenMaskOptional", attenMaskOptional, kMask)
      .optional("softmaxMaxOptional", softmaxMaxOptional, {ACL_FLOAT})
      .optional("softmaxSumOptional", softmaxSumOptional, {ACL_FLOAT})
      .optional("softmaxInOptional", softmaxInOptional, kAttention)
      .optional("attentionInOptional", attentionInOptional, kAttention)
      .arg("dqOut", dqOut, kAttention).arg("dkOut", dkOut, kAttention).arg("dvOut", dvOut, kAttention)
      .optional("dpseOut", dpseOut, kAttention);
  const std::string layout = inputLayout != nullptr ? inputLayout : "";
  op.require(inputLayout != nullptr, "inputLayout is nullptr");
  Shapes s;
  checkAttention(op, query, keyIn, value, pseShiftOptional, dropMaskOptional, paddingMaskOptional,
                 attenMaskOptional, keepProb, headNum, layout, innerPrecise, sparseMode, pseType, s);
  // The simulated gradient needs the forward's statistics and output.
  op.require(softmaxMaxOptional != nullptr && softmaxSumOptional != nullptr && attentionInOptional != nullptr,
             "the simulator needs softmaxMax, softmaxSum and attentionIn of the forward");
  const std::vector<int64_t> stats{s.b, s.nq, s.sq, 8};
  op.require(softmaxMaxOptional == nullptr || softmaxMaxOptional->viewDims == stats, "softmaxMax must be [B, N, Sq, 8]");
  op.require(softmaxSumOptional == nullptr || softmaxSumOptional->viewDims == stats, "softmaxSum must be [B, N, Sq, 8]");
  const bool shapes4d = isLayout4d(layout) && query != nullptr && keyIn != nullptr && value != nullptr;
  op.require(!shapes4d || dy == nullptr || bnsd(dy, layout) == std::vector<int64_t>{s.b, s.nq, s.sq, s.dv},
             "dy must have the attention output's shape");
  op.require(!shapes4d || attentionInOptional == nullptr ||
                 bnsd(attentionInOptional, layout) == std::vector<int64_t>{s.b, s.nq, s.sq, s.dv},
             "attentionIn must have the attention output's shape");
  op.require(!shapes4d || dqOut == nullptr || dqOut->viewDims == query->viewDims, "dqOut must have query's shape");
  op.require(!shapes4d || dkOut == nullptr || dkOut->viewDims == keyIn->viewDims, "dkOut must have keyIn's shape");
  op.require(!shapes4d || dvOut == nullptr || dvOut->viewDims == value->viewDims, "dvOut must have value's shape");
  const Params p{scaleValue, preTokens, nextTokens, innerPrecise, sparseMode, pseType, layout};
  return op.build([p](Views& v) {
    auto [scores_, masked] = scores(v, p, "keyIn", "pseShiftOptional");
    const at::Tensor max = v["softmaxMaxOptional"].narrow(-1, 0, 1);
    const at::Tensor sum = v["softmaxSumOptional"].narrow(-1, 0, 1);
    at::Tensor probs = at::exp(scores_ - max) / sum;
    const at::Tensor invalid = invalidRows(masked, p);
    if (invalid.defined()) probs = probs.masked_fill(invalid, 0.0f);
    const int64_t nq = probs.size(1);
    const at::Tensor q = bnsdView(v["query"], p.layout).to(at::kFloat);
    const at::Tensor kv = bnsdView(v["keyIn"], p.layout);
    const int64_t nkv = kv.size(1);
    const at::Tensor k = perQueryHead(kv.to(at::kFloat), nq);
    const at::Tensor value_ = perQueryHead(bnsdView(v["value"], p.layout).to(at::kFloat), nq);
    const at::Tensor dy = bnsdView(v["dy"], p.layout).to(at::kFloat);
    const at::Tensor out = bnsdView(v["attentionInOptional"], p.layout).to(at::kFloat);
    // Gradients of the per-query-head key/value, summed over the heads that share one.
    auto perKvHead = [nq, nkv](const at::Tensor& t) {
      if (nq == nkv) return t;
      std::vector<int64_t> sizes = t.sizes().vec();
      sizes[1] = nkv;
      sizes.insert(sizes.begin() + 2, nq / nkv);
      return t.reshape(sizes).sum(2);
    };
    const at::Tensor dv = perKvHead(at::matmul(probs.transpose(-2, -1), dy));
    const at::Tensor dprobs = at::matmul(dy, value_.transpose(-2, -1));
    const at::Tensor rowTerm = (dy * out).sum(-1, true);
    const at::Tensor dscores = probs * (dprobs - rowTerm) * p.scale;
    bnsdView(v["dqOut"], p.layout).copy_(at::matmul(dscores, k));
    bnsdView(v["dkOut"], p.layout).copy_(perKvHead(at::matmul(dscores.transpose(-2, -1), q)));
    bnsdView(v["dvOut"], p.layout).copy_(dv);
  });
}
FSIM_PHASE2(aclnnFlashAttentionScoreGradV2)
