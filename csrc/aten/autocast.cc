// torch.autocast("flagos"): the same op lists and policies as CUDA's autocast
// (ATen's AT_FORALL_* lists, which the generator registers for
// AutocastPrivateUse1 in csrc/generated/aten_kernels.cpp, with the bans of
// yaml/aten.yaml). Ops in no list run in the dtype they are given.
#include <torch/library.h>

#include "generated/aten_kernels.h"

namespace flagos {

// As on CUDA: binary_cross_entropy is unsafe to autocast.
at::Tensor aten::binary_cross_entropy_banned(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
                                             int64_t) {
  TORCH_CHECK(false, "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast "
              "(as on CUDA): use torch.nn.functional.binary_cross_entropy_with_logits or torch.nn.BCEWithLogitsLoss, "
              "or disable autocast around them");
}

namespace {

// Every op in no list runs as it is given (PyTorch registers this for CUDA
// and CPU, not for PrivateUse1). A fallback, not an op's kernel.
TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

}  // namespace
}  // namespace flagos
