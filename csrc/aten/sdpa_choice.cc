// _fused_sdp_choice for flagos: which backend scaled_dot_product_attention
// takes. PyTorch asks the PrivateUse1 entry of _fused_sdp_choice_stub (and
// torch._fused_sdp_choice asks the op); both answer here: the overrideable
// backend, CANN's fused attention (csrc/handwritten/attention.cc), when it
// can compute the call and the user has not switched it off
// (torch.backends.cuda / sdpa_kernel), else the math decomposition.
//
// The choice launches nothing: yaml/aten.yaml registers it with guard none.
// A mask that requires grad stays on the math path, which computes its
// gradient (CANN's attention gradient does not).
#include <ATen/Context.h>
#include <ATen/SDPBackend.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/DispatchStub.h>
#include <ATen/native/transformers/attention.h>

#include <optional>

#include "aten/attention_support.h"
#include "generated/aten_kernels.h"

namespace flagos {

int64_t aten::fused_sdp_choice(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                               const std::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                               std::optional<double> /*scale*/, bool enable_gqa) {
  const at::Context& context = at::globalContext();
  const bool mask_needs_grad = attn_mask.has_value() && attn_mask->defined() && attn_mask->requires_grad();
  if (context.userEnabledOverrideableSDP() && !mask_needs_grad &&
      hw::fused_attention_unsupported(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa).empty()) {
    return static_cast<int64_t>(at::SDPBackend::overrideable);
  }
  return static_cast<int64_t>(context.userEnabledMathSDP() ? at::SDPBackend::math : at::SDPBackend::error);
}

}  // namespace flagos

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &flagos::aten::fused_sdp_choice);
}  // namespace at::native
