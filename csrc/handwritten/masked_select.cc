// masked_select and masked_select.out (aclnnMaskedSelect): the elements of
// self where mask (broadcast with self) is true, as a 1-D tensor.
//
// The result's size depends on the data. CANN's aclnnMaskedSelect wants an
// `out` with room for every element of the broadcast shape and fills its
// front, so the kernel counts the mask's true elements on the device first,
// reads the count back, launches into a broadcast-sized buffer and shrinks
// the result to the count.
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <c10/util/accumulate.h>

#include <vector>

#include "generated/impls.h"
#include "handwritten/support.h"
#include "runtime/launch.h"
#include "flagos/aclnn/aclnnMaskedSelect.h"

namespace flagos::impl {

at::Tensor masked_select(const LaunchDevice& device, const at::Tensor& self, const at::Tensor& mask) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_select: expected BoolTensor for mask");
  // A CPU 0-dim self or mask is copied to the launch device.
  const at::Tensor source = on_launch_device(self, device);
  const at::Tensor selector = on_launch_device(mask, device);
  const std::vector<int64_t> shape = at::infer_size(source.sizes(), selector.sizes());

  const int64_t count = hw::count_true(selector.expand(shape), device);
  at::Tensor out = empty_on(device, {c10::multiply_integers(shape)}, self.scalar_type());
  if (count > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnMaskedSelect, source, selector, out);
  }
  out.resize_({count});  // keeps the storage: only the front holds the selection
  return out;
}

at::Tensor& masked_select(const LaunchDevice& device, const at::Tensor& self, const at::Tensor& mask,
                          at::Tensor& out) {
  TORCH_CHECK(self.scalar_type() == out.scalar_type(),
              "masked_select(): self and result must have the same scalar type");
  // As masked_select_out_cpu: `out` shares no memory with itself or the inputs.
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_overlap(out, mask);
  const at::Tensor selected = masked_select(device, self, mask);
  at::native::resize_output(out, selected.sizes());
  out.copy_(selected);
  return out;
}

}  // namespace flagos::impl
