// Advanced indexing: index.Tensor (`x[idx]`) and index_put_ (`x[idx] = v`,
// accumulate false and true) with aclnnIndex and aclnnIndexPutImpl.
//
// As in PyTorch, an index tensor lives on the CPU or on self's device; CPU
// indices are copied to the launch device (self's) before the launch, never
// passed as device addresses. `values` lives on self's
// device, or is a CPU 0-dim tensor (a number), copied there as well.
//
// index.Tensor is structured in ATen: its meta function checks the indices
// and sizes the result (a boolean mask through nonzero on the device); this
// file defines its body, the generator writes and registers its wrapper.
// index_put_ sizes the indexed result itself, with ATen's advanced-indexing
// rules run on meta tensors: a boolean mask selects as many elements as it
// has true ones, so its true elements are counted on the device first (one
// extra launch and a read-back).
#include <ATen/ExpandUtils.h>
#include <ATen/core/List.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/index.h>
#include <c10/util/Exception.h>
#include <c10/util/accumulate.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "generated/impls.h"
#include "handwritten/support.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnIndex.h"
#include "flagos/aclnn/aclnnIndexPutImpl.h"

namespace flagos {
namespace {

using IndexList = c10::List<std::optional<at::Tensor>>;

at::Tensor meta_tensor(at::IntArrayRef sizes, at::ScalarType dtype) {
  return at::empty(sizes, at::TensorOptions().dtype(dtype).device(at::kMeta));
}

// The indices of one call, ready for the launch: each on the launch device
// (byte masks as bool), an empty tensor for a dim that is not indexed; and
// the long indices ATen would see in their place, as meta tensors, for the
// result's shape (index_put_ only: index.Tensor's meta function sizes its output).
struct Indices {
  std::vector<at::Tensor> launch;
  IndexList meta;
};

// An index that lives on the CPU (a Python list or number becomes one) is
// checked against its dim's size before it goes to the device, for ATen's
// IndexError at the call: CANN's operators find an out-of-bounds index only
// when the kernel runs, which surfaces at a later synchronize. (A device
// index is not read back for this: that would stall the stream.)
void check_bounds_on_host(const at::Tensor& index, int64_t dim, int64_t size) {
  const at::Tensor values = index.to(at::kLong).reshape({-1});
  const at::Tensor bad = values.lt(-size).logical_or_(values.ge(size));
  if (!bad.any().item<bool>()) return;
  const int64_t first = values.masked_select(bad)[0].item<int64_t>();
  TORCH_CHECK_INDEX(false, "index ", first, " is out of bounds for dimension ", dim, " with size ", size);
}

// `with_meta`: index_put_, which sizes its result itself: the meta indices
// too (each mask's true elements counted on the device), and ATen's warning
// for byte masks, which index.Tensor's meta function gave already.
Indices prepare_indices(const at::Tensor& self, at::IOptTensorListRef indices, const LaunchDevice& device,
                        bool with_meta) {
  Indices out;
  int64_t dim = 0;  // the first dim of self the next index applies to
  for (const at::OptionalTensorRef given : indices) {
    if (!given.has_value()) {
      out.launch.push_back(empty_on(device, {0}, at::kLong));
      out.meta.push_back(std::nullopt);
      ++dim;
      continue;
    }
    const at::ScalarType dtype = given->scalar_type();
    TORCH_CHECK_INDEX(dtype == at::kLong || dtype == at::kInt || dtype == at::kByte || dtype == at::kBool,
                      "tensors used as indices must be long, int, byte or bool tensors");
    TORCH_CHECK_INDEX(given->is_cpu() || given->device() == self.device(),
                      "indices should be either on cpu or on the same device as the indexed tensor (", self.device(),
                      ")");
    if (dtype == at::kByte && with_meta) {
      TORCH_WARN("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.");
    }
    if (dtype != at::kByte && dtype != at::kBool && given->numel() > 0 && dim < self.dim()) {
      // Any index into a dim of size 0 is out of bounds: no value to read.
      TORCH_CHECK_INDEX(self.size(dim) > 0, "index is out of bounds for dimension with size 0");
      if (given->is_cpu()) check_bounds_on_host(*given, dim, self.size(dim));
    }
    at::Tensor index = on_launch_device(*given, device);
    if (dtype == at::kByte || dtype == at::kBool) {
      index = index.to(at::kBool);
      TORCH_CHECK_INDEX(index.dim() > 0, "flagos: a 0-dim boolean index is not supported");
      for (int64_t j = 0; j < index.dim(); ++j) {
        TORCH_CHECK_INDEX(dim + j < self.dim() && index.size(j) == self.size(dim + j), "The shape of the mask ",
                          index.sizes(), " at index ", j, " does not match the shape of the indexed tensor ",
                          self.sizes(), " at index ", dim + j);
      }
      if (with_meta) {
        // A k-dim mask indexes k dims with the coordinates of its true elements.
        const int64_t count = hw::count_true(index, device);
        for (int64_t j = 0; j < index.dim(); ++j) {
          out.meta.push_back(meta_tensor({count}, at::kLong));
        }
      }
      dim += index.dim();
    } else {
      if (with_meta) out.meta.push_back(meta_tensor(index.sizes(), at::kLong));
      ++dim;
    }
    out.launch.push_back(std::move(index));
  }
  return out;
}

// The shape of self[indices], with ATen's checks (too many indices, shapes
// that do not broadcast, ...).
std::vector<int64_t> indexed_sizes(const at::Tensor& self, const IndexList& meta) {
  // Indices that do not broadcast together: ATen's IndexError (the meta
  // kernel would raise a RuntimeError of its broadcast helper instead).
  std::vector<at::IntArrayRef> shapes;
  for (size_t i = 0; i < meta.size(); ++i) {
    const std::optional<at::Tensor> index = meta.get(i);
    if (index.has_value() && index->defined()) shapes.push_back(index->sizes());
  }
  if (shapes.size() > 1) {
    std::vector<int64_t> common = shapes.front().vec();
    bool broadcast = true;
    for (const at::IntArrayRef shape : shapes) {
      const size_t ndim = std::max(common.size(), shape.size());
      std::vector<int64_t> next(ndim);
      for (size_t k = 0; k < ndim && broadcast; ++k) {
        const int64_t a = k < ndim - common.size() ? 1 : common[k - (ndim - common.size())];
        const int64_t b = k < ndim - shape.size() ? 1 : shape[k - (ndim - shape.size())];
        broadcast = a == b || a == 1 || b == 1;
        next[k] = a == 1 ? b : a;
      }
      if (!broadcast) break;
      common = std::move(next);
    }
    if (!broadcast) {
      std::string listed;
      for (const at::IntArrayRef shape : shapes) listed += (listed.empty() ? "" : ", ") + c10::str(shape);
      TORCH_CHECK_INDEX(false, "shape mismatch: indexing tensors could not be broadcast together with shapes ",
                        listed);
    }
  }
  return at::index(meta_tensor(self.sizes(), self.scalar_type()), meta).sizes().vec();
}

// index_put_ and _index_put_impl_ (what index's backward and index_put_'s
// composite call); `unsafe` skips the bounds check, CANN's flag of the same name.
at::Tensor& index_put_impl(const char* op, const LaunchDevice& device, at::Tensor& self, const IndexList& indices,
                           const at::Tensor& values, bool accumulate, bool unsafe) {
  // Indices may live on the CPU (the registry declares no-check); values may not.
  check_same_device(op, {{"self", self}, {"values", values}});
  // As ATen's index_put_: an expanded self is deprecated, not refused;
  // values and indices sharing memory with self are refused.
  if (at::has_internal_overlap(self) == at::MemOverlap::Yes) {
    TORCH_WARN("Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before performing "
               "this operation. This also applies to advanced indexing e.g. tensor[indices] = tensor");
  }
  at::assert_no_overlap(self, values);
  for (const std::optional<at::Tensor>& index : indices) {
    if (index.has_value() && index->defined()) at::assert_no_overlap(self, *index);
  }
  const Indices prepared = prepare_indices(self, indices, device, /*with_meta=*/true);
  const std::vector<int64_t> sizes = indexed_sizes(self, prepared.meta);
  // The shape first, then the dtype, as ATen's index_put_ checks them.
  TORCH_CHECK(at::is_expandable_to(values.sizes(), sizes), "shape mismatch: value tensor of shape ", values.sizes(),
              " cannot be broadcast to indexing result of shape ", sizes);
  TORCH_CHECK(values.scalar_type() == self.scalar_type(),
              "Index put requires the source and destination dtypes match, got ", self.scalar_type(),
              " for the destination and ", values.scalar_type(), " for the source.");
  if (c10::multiply_integers(sizes) > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnIndexPutImpl, self, prepared.launch, on_launch_device(values, device), accumulate,
                          unsafe);
  }
  return self;
}

}  // namespace
}  // namespace flagos

namespace flagos::impl {

at::Tensor& index_put_(const LaunchDevice& device, at::Tensor& self, const IndexList& indices,
                       const at::Tensor& values, bool accumulate) {
  return index_put_impl("index_put_", device, self, indices, values, accumulate, /*unsafe=*/false);
}

at::Tensor& index_put_impl_(const LaunchDevice& device, at::Tensor& self, const IndexList& indices,
                            const at::Tensor& values, bool accumulate, bool unsafe) {
  return index_put_impl("_index_put_impl_", device, self, indices, values, accumulate, unsafe);
}

}  // namespace flagos::impl

// ---- index.Tensor: the body of the generated wrapper ---------------------------
// ATen's meta function (structured_index_Tensor) has checked the indices
// (count, dtypes, devices, mask shapes, broadcasting) and sized the output.

namespace flagos::impl {

void index_Tensor(const LaunchDevice& device, const at::Tensor& self, at::IOptTensorListRef indices,
                  const at::Tensor& out) {
  // What ATen checks in its kernels (the bounds of CPU indices) is checked
  // here, before anything is launched.
  const Indices prepared = prepare_indices(self, indices, device, /*with_meta=*/false);
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnIndex, self, prepared.launch, out);
  }
}

}  // namespace flagos::impl
