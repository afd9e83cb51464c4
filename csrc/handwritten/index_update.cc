// index_copy and index_add (functional, in-place, out=): bodies of the
// generated wrappers. ATen's meta functions have checked the arguments (dim,
// index dtype and rank, source's shape and dtype) and sized the outputs; an
// in-place call passes `self` as its output.
//
// index_copy writes `out` in place (aclnnInplaceIndexCopy) after copying
// `self` into it, as ATen's own out= kernel does; index_add launches
// aclnnIndexAdd, which takes `alpha`. A static KV cache writes each step's
// keys and values with index_copy_ (transformers' StaticCache).
#include <ATen/core/Tensor.h>
#include <c10/core/WrapDimMinimal.h>

#include "runtime/launch.h"
#include "generated/impls.h"
#include "flagos/aclnn/aclnnIndexAdd.h"
#include "flagos/aclnn/aclnnInplaceIndexCopy.h"

namespace flagos::impl {

void index_copy(const LaunchDevice& device, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                const at::Tensor& source, const at::Tensor& out) {
  if (!out.is_same(self)) {
    out.copy_(self);
  }
  if (out.numel() == 0 || index.numel() == 0) {
    return;
  }
  dim = c10::maybe_wrap_dim(dim, self.dim());
  // A 0-d index names one position: the operator takes a 1-D index.
  FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceIndexCopy, out, dim, on_launch_device(index.reshape({-1}), device),
                        source);
}

void index_add(const LaunchDevice& device, const at::Tensor& self, int64_t dim, const at::Tensor& index,
               const at::Tensor& source, const at::Scalar& alpha, const at::Tensor& out) {
  if (out.numel() == 0) {
    return;
  }
  if (index.numel() == 0) {
    if (!out.is_same(self)) {
      out.copy_(self);
    }
    return;
  }
  dim = c10::maybe_wrap_dim(dim, self.dim());
  FLAGOS_GUARDED_LAUNCH(device, aclnnIndexAdd, self, dim, on_launch_device(index.reshape({-1}), device), source,
                        alpha, out);
}

}  // namespace flagos::impl
