// Indexing and index-shaped ops: index_select, gather, scatter (src / value,
// functional and in-place), scatter_add, masked_fill_ (Scalar / Tensor),
// embedding and its dense backward, flip, the NLL loss (forward and
// backward), and the factories eye and linspace.
//
// An index tensor on the CPU is copied to the launch device first: ACLNN
// reads device memory only, so a CPU address is never passed. gather,
// scatter and the NLL loss are structured in ATen: their generated wrappers
// check devices as CUDA does (an index or target on the CPU must be 0-dim).
// index_select, masked_fill_ and embedding take an index or mask of any
// shape on the CPU (their registry entries declare no-check): their bodies
// check the flagos tensors' devices.
#include <ATen/Dispatch_v2.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <c10/core/WrapDimMinimal.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "handwritten/support.h"
#include "runtime/launch.h"
#include "generated/impls.h"
#include "flagos/aclnn/aclnnEmbedding.h"
#include "flagos/aclnn/aclnnEmbeddingDenseBackward.h"
#include "flagos/aclnn/aclnnEye.h"
#include "flagos/aclnn/aclnnFlip.h"
#include "flagos/aclnn/aclnnGather.h"
#include "flagos/aclnn/aclnnIndexSelect.h"
#include "flagos/aclnn/aclnnInplaceMaskedFillScalar.h"
#include "flagos/aclnn/aclnnInplaceMaskedFillTensor.h"
#include "flagos/aclnn/aclnnInplaceScatter.h"
#include "flagos/aclnn/aclnnInplaceScatterValue.h"
#include "flagos/aclnn/aclnnLinspace.h"
#include "flagos/aclnn/aclnnNLLLoss.h"
#include "flagos/aclnn/aclnnNLLLossBackward.h"
#include "flagos/aclnn/aclnnScatter.h"
#include "flagos/aclnn/aclnnScatterAdd.h"
#include "flagos/aclnn/aclnnScatterValue.h"

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

// ---- gather / scatter --------------------------------------------------------


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

// ---- flip ----------------------------------------------------------------------------

at::Tensor flip(const LaunchDevice& device, const at::Tensor& self, at::IntArrayRef dims) {
  std::vector<int64_t> wrapped;
  for (const int64_t dim : dims) {
    const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
    // As ATen's flip (and CANN's aclnnFlip at phase 1): no dim twice.
    TORCH_CHECK(std::find(wrapped.begin(), wrapped.end(), d) == wrapped.end(), "flip: dim ", d,
                " appears multiple times in the list of dims");
    wrapped.push_back(d);
  }
  at::Tensor out = empty_on(device, self.sizes(), self.scalar_type());
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnFlip, self, wrapped, out);
  }
  return out;
}

// ---- factories ---------------------------------------------------------------------------

at::Tensor eye(const LaunchDevice& device, int64_t n, int64_t m, std::optional<at::ScalarType> dtype,
               std::optional<at::Layout> /*layout*/, std::optional<at::Device> /*device*/,
               std::optional<bool> /*pin_memory*/) {
  TORCH_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  TORCH_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  at::Tensor out = empty_on(device, {n, m}, dtype.value_or(c10::get_default_dtype_as_scalartype()));
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnEye, n, m, out);
  }
  return out;
}

at::Tensor eye(const LaunchDevice& device, int64_t n, std::optional<at::ScalarType> dtype,
               std::optional<at::Layout> layout, std::optional<at::Device> device_arg, std::optional<bool> pin_memory) {
  return eye(device, n, n, dtype, layout, device_arg, pin_memory);
}

at::Tensor linspace(const LaunchDevice& device, const at::Scalar& start, const at::Scalar& end, int64_t steps,
                    std::optional<at::ScalarType> dtype, std::optional<at::Layout> /*layout*/,
                    std::optional<at::Device> /*device*/, std::optional<bool> /*pin_memory*/) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  at::Tensor out = empty_on(device, {steps}, dtype.value_or(c10::get_default_dtype_as_scalartype()));
  if (steps > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnLinspace, start, end, steps, out);
  }
  return out;
}

}  // namespace flagos::impl

// ---- gather / scatter: bodies of the generated wrappers ------------------------
// ATen's meta functions (gather, scatter.src, scatter.value, scatter_add) have
// checked the arguments and sized the outputs; an in-place call passes `self`
// as its output. An index on the CPU can only be a 0-dim one (the device
// check); it is copied to the launch device.

namespace flagos::impl {

namespace {
constexpr int64_t kReplace = 0;
constexpr int64_t kAdd = 1;
}  // namespace

void gather(const LaunchDevice& device, const at::Tensor& self, int64_t dim, const at::Tensor& index,
            bool /*sparse_grad*/, const at::Tensor& out) {
  if (out.numel() == 0) {
    return;
  }
  dim = c10::maybe_wrap_dim(dim, self.dim());
  FLAGOS_GUARDED_LAUNCH(device, aclnnGather, self, dim, on_launch_device(index, device), out);
}

void scatter_src(const LaunchDevice& device, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                 const at::Tensor& src, const at::Tensor& out) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  if (out.is_same(self)) {
    if (self.numel() > 0 && index.numel() > 0) {
      FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceScatter, self, dim, on_launch_device(index, device), src, kReplace);
    }
  } else if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnScatter, self, dim, on_launch_device(index, device), src, kReplace, out);
  }
}

void scatter_value(const LaunchDevice& device, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                   const at::Scalar& value, const at::Tensor& out) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  if (out.is_same(self)) {
    if (self.numel() > 0 && index.numel() > 0) {
      FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceScatterValue, self, dim, on_launch_device(index, device), value,
                            kReplace);
    }
  } else if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnScatterValue, self, dim, on_launch_device(index, device), value, kReplace,
                          out);
  }
}

void scatter_add(const LaunchDevice& device, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                 const at::Tensor& src, const at::Tensor& out) {
  dim = c10::maybe_wrap_dim(dim, self.dim());
  if (out.is_same(self)) {
    if (self.numel() > 0 && index.numel() > 0) {
      FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceScatter, self, dim, on_launch_device(index, device), src, kAdd);
    }
  } else if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnScatterAdd, self, dim, on_launch_device(index, device), src, out);
  }
}

// ---- the NLL loss: bodies of the generated wrappers ---------------------------------
// ATen's meta functions (nll_loss_forward, nll_loss_backward) have checked
// the shapes of input, target and weight and sized the outputs. A target on
// the CPU can only be a 0-dim one (the device check); it is copied.

namespace {
// The operators read the class weights as a contiguous vector; nullopt when there are none.
std::optional<at::Tensor> nll_weight(at::OptionalTensorRef weight) {
  return weight.has_value() ? std::optional<at::Tensor>(weight->contiguous()) : std::nullopt;
}
}  // namespace

void nll_loss_forward(const LaunchDevice& device, const at::Tensor& self, const at::Tensor& target,
                      at::OptionalTensorRef weight, int64_t reduction, int64_t ignore_index, const at::Tensor& output,
                      const at::Tensor& total_weight) {
  // Launched even for an empty batch: a mean over no element is written (NaN).
  FLAGOS_GUARDED_LAUNCH(device, aclnnNLLLoss, self, on_launch_device(target, device), nll_weight(weight), reduction,
                        ignore_index, output, total_weight);
}

void nll_loss_backward(const LaunchDevice& device, const at::Tensor& grad_output, const at::Tensor& self,
                       const at::Tensor& target, at::OptionalTensorRef weight, int64_t reduction, int64_t ignore_index,
                       const at::Tensor& total_weight, const at::Tensor& grad_input) {
  if (grad_input.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnNLLLossBackward, grad_output, self, on_launch_device(target, device),
                          nll_weight(weight), reduction, ignore_index, total_weight, grad_input);
  }
}

}  // namespace flagos::impl
