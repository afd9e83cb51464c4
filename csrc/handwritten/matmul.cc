// matmul, functional and out= (aclnnMatmul). mm and bmm are registry
// entries (yaml/ops/matmul.yaml).
//
// matmul is CompositeImplicitAutograd in ATen. A PrivateUse1 kernel for it
// would, by the dispatcher's rules, also take the decomposition away from
// AutogradPrivateUse1 and leave matmul without a derivative. So ATen's own
// decomposition is registered under AutogradPrivateUse1 too: whenever the
// autograd key is in play (normal mode, requires_grad or not) matmul
// decomposes into mm/bmm/mv/dot, which autograd differentiates and whose
// kernels launch; the fused aclnnMatmul kernel runs only without the autograd
// key (torch.inference_mode(), or code already below autograd). The registry
// names both bodies (`impl:` and `autograd_impl:`).
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/matmul_native.h>

#include <algorithm>
#include <vector>

#include "generated/impls.h"
#include "handwritten/support.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnMatmul.h"

namespace flagos {
namespace {

// cubeMathType KEEP_DTYPE: compute in the input dtype, no HF32 down-conversion.
constexpr int8_t kMatmulKeepDtype = 0;

void check_same_dtype(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), "expected m1 and m2 to have the same dtype, but got: ",
              self.scalar_type(), " != ", other.scalar_type());
}

// matmul's result: a vector counts as a row on the left and as a column on
// the right (and that dim is dropped); the batch dims broadcast.
std::vector<int64_t> matmul_sizes(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.dim() > 0 && other.dim() > 0, "both arguments to matmul need to be at least 1D, but they are ",
              self.dim(), "D and ", other.dim(), "D");
  const int64_t inner = other.dim() == 1 ? other.size(0) : other.size(-2);
  TORCH_CHECK(self.size(-1) == inner, "matmul: self of shape ", self.sizes(), " and other of shape ", other.sizes(),
              " cannot be multiplied");
  const at::IntArrayRef self_batch = self.sizes().slice(0, std::max<int64_t>(self.dim() - 2, 0));
  const at::IntArrayRef other_batch = other.sizes().slice(0, std::max<int64_t>(other.dim() - 2, 0));
  std::vector<int64_t> sizes = at::infer_size(self_batch, other_batch);
  if (self.dim() >= 2) {
    sizes.push_back(self.size(-2));
  }
  if (other.dim() >= 2) {
    sizes.push_back(other.size(-1));
  }
  return sizes;
}

// Whether the product needs a launch: an empty result needs none, and an
// empty inner dimension sums nothing, so the result is zeros.
bool needs_launch(const at::Tensor& self, const at::Tensor& out) {
  if (out.numel() == 0) {
    return false;
  }
  if (self.size(-1) == 0) {
    out.zero_();
    return false;
  }
  return true;
}

}  // namespace
}  // namespace flagos

namespace flagos::impl {

at::Tensor matmul(const LaunchDevice& device, const at::Tensor& self, const at::Tensor& other) {
  check_same_dtype(self, other);
  at::Tensor out = empty_on(device, matmul_sizes(self, other), self.scalar_type());
  if (needs_launch(self, out)) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnMatmul, self, other, out, kMatmulKeepDtype);
  }
  return out;
}

at::Tensor& matmul(const LaunchDevice& device, const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  check_same_dtype(self, other);
  hw::check_out_dtype(out, self.scalar_type());
  at::native::resize_output(out, matmul_sizes(self, other));
  // As the CPU's mm/bmm out= (what matmul writes through): `out` shares no
  // memory with itself or an operand.
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_overlap(out, other);
  if (needs_launch(self, out)) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnMatmul, self, other, out, kMatmulKeepDtype);
  }
  return out;
}

// Keeps matmul's decomposition (and so its derivative) under autograd; see
// the top of this file. The generated wrappers make the operands' device
// current once (a CompositeGuard): the out= tensor's resize and the inner
// launches find it current.
at::Tensor matmul_decomposed(const LaunchDevice& /*device*/, const at::Tensor& self, const at::Tensor& other) {
  return at::native::matmul(self, other);
}

at::Tensor& matmul_decomposed(const LaunchDevice& /*device*/, const at::Tensor& self, const at::Tensor& other,
                              at::Tensor& out) {
  return at::native::matmul_out(self, other, out);
}

}  // namespace flagos::impl
