// Joining tensor lists: cat and stack, functional and out= (aclnnCat,
// aclnnStack): the bodies of their generated wrappers (cat is structured in
// ATen: its wrappers run ATen's meta function first). Inputs of different
// dtypes promote, as in ATen.
#include <ATen/WrapDimUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <c10/core/ScalarType.h>

#include <vector>

#include "handwritten/support.h"
#include "runtime/launch.h"
#include "generated/impls.h"
#include "flagos/aclnn/aclnnCat.h"
#include "flagos/aclnn/aclnnStack.h"

namespace flagos {
namespace {

at::ScalarType promoted_dtype(at::TensorList tensors) {
  at::ScalarType dtype = tensors[0].scalar_type();
  for (const at::Tensor& t : tensors) {
    dtype = c10::promoteTypes(dtype, t.scalar_type());
  }
  return dtype;
}

// A TypeError, as cat's meta function raises it (the CPU's stack writes
// through cat).
void check_can_cast(const char* op, at::ScalarType from, const at::Tensor& out) {
  TORCH_CHECK_TYPE(c10::canCast(from, out.scalar_type()), op,
                   ": input types can't be cast to the desired output type ", out.scalar_type());
}

// What a stack launches: the inputs on the launch device (a CPU 0-dim tensor,
// a number, is copied there), the wrapped dim, the result's sizes: the common
// shape of the inputs with their count inserted at `dim`.
struct StackPlan {
  std::vector<at::Tensor> inputs;
  int64_t dim = 0;
  std::vector<int64_t> sizes;
};

StackPlan plan_stack(at::TensorList tensors, int64_t dim, const LaunchDevice& device) {
  TORCH_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  const at::Tensor& first = tensors[0];
  StackPlan plan;
  for (size_t i = 0; i < tensors.size(); ++i) {
    TORCH_CHECK(tensors[i].sizes() == first.sizes(), "stack expects each tensor to be equal size, but got ",
                first.sizes(), " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
    plan.inputs.push_back(on_launch_device(tensors[i], device));
  }
  plan.dim = at::maybe_wrap_dim(dim, first.dim() + 1);
  plan.sizes = first.sizes().vec();
  plan.sizes.insert(plan.sizes.begin() + plan.dim, static_cast<int64_t>(tensors.size()));
  return plan;
}

void launch_stack(const LaunchDevice& device, const StackPlan& plan, const at::Tensor& out) {
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnStack, plan.inputs, plan.dim, out);
  }
}

}  // namespace
}  // namespace flagos

namespace flagos::impl {

at::Tensor stack(const LaunchDevice& device, at::TensorList tensors, int64_t dim) {
  const StackPlan plan = plan_stack(tensors, dim, device);
  at::Tensor out = empty_on(device, plan.sizes, promoted_dtype(tensors));
  launch_stack(device, plan, out);
  return out;
}

at::Tensor& stack(const LaunchDevice& device, at::TensorList tensors, int64_t dim, at::Tensor& out) {
  const StackPlan plan = plan_stack(tensors, dim, device);
  check_can_cast("torch.stack()", promoted_dtype(tensors), out);
  at::native::resize_output(out, plan.sizes);
  // As cat's out= (what the CPU's stack writes through): `out` shares no
  // memory with itself or an input.
  at::assert_no_internal_overlap(out);
  for (const at::Tensor& tensor : tensors) at::assert_no_overlap(out, tensor);
  launch_stack(device, plan, out);
  return out;
}

// ---- cat --------------------------------------------------------------------------
// ATen's meta function (structured_cat) has checked the list (one dtype
// family, matching sizes, out= casting and overlap) and sized the output;
// cat.out's `out` has been checked and resized.

void cat(const LaunchDevice& device, const at::ITensorListRef& tensors, int64_t dim, const at::Tensor& out) {
  if (out.numel() == 0) {
    return;
  }
  // ATen skips legacy empty tensors (1-D, no element) whatever the other
  // shapes; aclnnCat checks every input's rank, so leave them out, and wrap
  // dim against the first tensor that takes part.
  std::vector<at::Tensor> inputs;
  for (const at::Tensor& tensor : tensors) {
    if (!(tensor.dim() == 1 && tensor.size(0) == 0)) {
      inputs.push_back(tensor);
    }
  }
  dim = at::maybe_wrap_dim(dim, inputs[0].dim());
  FLAGOS_GUARDED_LAUNCH(device, aclnnCat, inputs, dim, out);
}

}  // namespace flagos::impl
