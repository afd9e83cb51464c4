// torch.autocast("flagos"): the same op lists and policies as CUDA's autocast
// (ATen's AT_FORALL_* lists), registered for AutocastPrivateUse1. Ops in no
// list run in the dtype they are given (ATen's fallthrough).
#include <ATen/autocast_mode.h>
#include <torch/library.h>

namespace at::autocast {
namespace {

Tensor binary_cross_entropy_banned(const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t) {
  TORCH_CHECK(false, "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast "
              "(as on CUDA): use torch.nn.functional.binary_cross_entropy_with_logits or torch.nn.BCEWithLogitsLoss, "
              "or disable autocast around them");
}

// Every op in no list runs as it is given (PyTorch registers this for CUDA
// and CPU, not for PrivateUse1).
TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define FLAGOS_AUTOCAST_LOWER_PRECISION_FP(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define FLAGOS_AUTOCAST_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define FLAGOS_AUTOCAST_FP32_SET_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define FLAGOS_AUTOCAST_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_LOWER_PRECISION_FP(FLAGOS_AUTOCAST_LOWER_PRECISION_FP)
  AT_FORALL_FP32(FLAGOS_AUTOCAST_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(FLAGOS_AUTOCAST_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(FLAGOS_AUTOCAST_PROMOTE)
#undef FLAGOS_AUTOCAST_LOWER_PRECISION_FP
#undef FLAGOS_AUTOCAST_FP32
#undef FLAGOS_AUTOCAST_FP32_SET_OPT_DTYPE
#undef FLAGOS_AUTOCAST_PROMOTE
  // As on CUDA: binary_cross_entropy is unsafe to autocast.
  m.impl("binary_cross_entropy", TORCH_FN(binary_cross_entropy_banned));
}

}  // namespace
}  // namespace at::autocast
