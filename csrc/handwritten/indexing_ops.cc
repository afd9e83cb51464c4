// Indexing ops whose index or mask may be a CPU tensor of any shape:
// index_select (and .out), masked_fill_ (Scalar / Tensor), embedding and
// its dense backward. Their registry entries declare no-check: the bodies
// check the flagos tensors' devices, and copy a CPU index to the launch
// device (ACLNN reads device memory only, so a CPU address is never
// passed). gather, scatter, flip, the NLL loss and the factories eye and
// linspace are registry entries (yaml/ops/).
#include <ATen/Dispatch_v2.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <c10/core/WrapDimMinimal.h>

#include <vector>

#include "handwritten/support.h"
#include "runtime/launch.h"
#include "generated/impls.h"
#include "flagos/aclnn/aclnnEmbedding.h"
#include "flagos/aclnn/aclnnEmbeddingDenseBackward.h"
#include "flagos/aclnn/aclnnIndexSelect.h"
#include "flagos/aclnn/aclnnInplaceMaskedFillScalar.h"
#include "flagos/aclnn/aclnnInplaceMaskedFillTensor.h"

namespace flagos {
namespace {

// The tensor itself when it lives on a flagos device, else an undefined
// tensor: a CPU index takes no part in the same-device check (it is copied).
const at::Tensor& flagos_only(const at::Tensor& tensor) {
  static const at::Tensor undefined;
  return tensor.defined() && tensor.is_privateuseone() ? tensor : undefined;
}

void check_index(const char* op, const at::Tensor& index) {
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt, op,
              "(): Expected dtype int32/int64 for index but got: ", index.scalar_type());
}

// ---- index_select ----------------------------------------------------------

std::vector<int64_t> index_select_sizes(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  TORCH_CHECK_INDEX(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  std::vector<int64_t> sizes = self.sizes().vec();
  if (self.dim() > 0) {
    sizes[dim] = index.numel();
  }
  return sizes;
}

void launch_index_select(const LaunchDevice& device, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                         const at::Tensor& out) {
  if (out.numel() == 0) {
    return;
  }
  const at::Tensor index_dev = on_launch_device(index.reshape({-1}), device);
  FLAGOS_GUARDED_LAUNCH(device, aclnnIndexSelect, self, dim, index_dev, out);
}

void check_mask(const at::Tensor& mask) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_fill_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
}

}  // namespace
}  // namespace flagos

namespace flagos::impl {

at::Tensor index_select(const LaunchDevice& device, const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  check_same_device("index_select", {{"self", self}, {"index", flagos_only(index)}});
  check_index("index_select", index);
  dim = c10::maybe_wrap_dim(dim, self.dim());
  at::Tensor out = empty_on(device, index_select_sizes(self, dim, index), self.scalar_type());
  launch_index_select(device, self, dim, index, out);
  return out;
}

at::Tensor& index_select(const LaunchDevice& device, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                         at::Tensor& out) {
  check_same_device("index_select.out", {{"self", self}, {"index", flagos_only(index)}, {"out", out}});
  check_index("index_select", index);
  hw::check_out_dtype(out, self.scalar_type());
  // As index_select_out_cpu_: `out` shares no memory with itself or the inputs.
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_overlap(out, index);
  dim = c10::maybe_wrap_dim(dim, self.dim());
  at::native::resize_output(out, index_select_sizes(self, dim, index));
  launch_index_select(device, self, dim, index, out);
  return out;
}

// ---- masked_fill_ --------------------------------------------------------------

at::Tensor& masked_fill_(const LaunchDevice& device, at::Tensor& self, const at::Tensor& mask,
                         const at::Scalar& value) {
  check_same_device("masked_fill_.Scalar", {{"self", self}, {"mask", flagos_only(mask)}});
  check_mask(mask);
  // As masked_fill__cpu: an expanded self is deprecated, not refused; a
  // mask that partially overlaps self is; the value must fit self's dtype
  // (Scalar::to's checked conversion, as the CPU kernel converts it).
  if (at::has_internal_overlap(self) == at::MemOverlap::Yes) {
    TORCH_WARN("Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor before performing "
               "this operation. This also applies to advanced indexing e.g. tensor[mask] = scalar");
  }
  at::assert_no_partial_overlap(self, mask);
  AT_DISPATCH_V2(self.scalar_type(), "masked_fill", AT_WRAP([&] { (void)value.to<scalar_t>(); }), at::kBool,
                 at::kHalf, at::kBFloat16, at::kComplexHalf, AT_EXPAND(AT_ALL_TYPES_AND_COMPLEX));
  if (self.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceMaskedFillScalar, self, on_launch_device(mask, device), value);
  }
  return self;
}

at::Tensor& masked_fill_(const LaunchDevice& device, at::Tensor& self, const at::Tensor& mask,
                         const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  if (value.is_cpu()) {
    // A Python number or a CPU 0-dim tensor: launched with its value.
    return masked_fill_(device, self, mask, value.item());
  }
  check_same_device("masked_fill_.Tensor", {{"self", self}, {"mask", flagos_only(mask)}, {"value", value}});
  check_mask(mask);
  if (!c10::canCast(value.scalar_type(), self.scalar_type())) {
    // The CPU and CUDA kernels fill with value.item() converted with a
    // check: a value that may not fit (a complex value for a real tensor)
    // is read to make that check.
    AT_DISPATCH_V2(self.scalar_type(), "masked_fill", AT_WRAP([&] { (void)value.item().to<scalar_t>(); }), at::kBool,
                   at::kHalf, at::kBFloat16, at::kComplexHalf, AT_EXPAND(AT_ALL_TYPES_AND_COMPLEX));
  }
  if (self.numel() > 0) {
    const at::Tensor value_typed = value.scalar_type() == self.scalar_type() ? value : value.to(self.scalar_type());
    FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceMaskedFillTensor, self, on_launch_device(mask, device), value_typed);
  }
  return self;
}

// ---- embedding -------------------------------------------------------------------

at::Tensor embedding(const LaunchDevice& device, const at::Tensor& weight, const at::Tensor& indices,
                     int64_t /*padding_idx*/, bool /*scale_grad_by_freq*/, bool /*sparse*/) {
  TORCH_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  check_same_device("embedding", {{"weight", weight}, {"indices", flagos_only(indices)}});
  check_index("embedding", indices);
  std::vector<int64_t> sizes = indices.sizes().vec();
  sizes.push_back(weight.size(1));
  at::Tensor out = empty_on(device, sizes, weight.scalar_type());
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnEmbedding, weight, on_launch_device(indices, device), out);
  }
  return out;
}

at::Tensor embedding_dense_backward(const LaunchDevice& device, const at::Tensor& grad_output,
                                    const at::Tensor& indices, int64_t rows, int64_t padding, bool scale_grad_by_freq) {
  check_same_device("embedding_dense_backward", {{"grad_output", grad_output}, {"indices", flagos_only(indices)}});
  check_index("embedding_backward", indices);
  at::Tensor out = empty_on(device, {rows, grad_output.size(-1)}, grad_output.scalar_type());
  if (out.numel() == 0) {
    return out;
  }
  if (indices.numel() == 0) {
    return out.zero_();
  }
  // ACLNN takes the gradient as rows matching the flattened indices.
  const at::Tensor grad_rows = grad_output.reshape({-1, grad_output.size(-1)});
  const at::Tensor index_dev = on_launch_device(indices.reshape({-1}), device);
  const uint64_t padding_arg = padding < 0 ? UINT64_MAX : static_cast<uint64_t>(padding);
  FLAGOS_GUARDED_LAUNCH(device, aclnnEmbeddingDenseBackward, grad_rows, index_dev, static_cast<uint64_t>(rows),
                        padding_arg, scale_grad_by_freq, out);
  return out;
}

}  // namespace flagos::impl
