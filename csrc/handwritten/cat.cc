// Joining tensor lists: cat and stack, functional and out= (aclnnCat,
// aclnnStack).
//
// Device policy: first-tensor (the list's first tensor; `out` for the out=
// forms); every tensor of the list on that one device. Inputs of different
// dtypes promote, as in ATen.
#include <ATen/WrapDimUtils.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <c10/core/ScalarType.h>
#include <torch/library.h>

#include <vector>

#include "aten/dtype_fallback.h"
#include "handwritten/support.h"
#include "runtime/launch.h"
#include "generated/aclnn/aclnnCat.h"
#include "generated/aclnn/aclnnStack.h"

namespace flagos {
namespace {

at::ScalarType promoted_dtype(at::TensorList tensors) {
  at::ScalarType dtype = tensors[0].scalar_type();
  for (const at::Tensor& t : tensors) {
    dtype = c10::promoteTypes(dtype, t.scalar_type());
  }
  return dtype;
}

void check_can_cast(const char* op, at::ScalarType from, const at::Tensor& out) {
  TORCH_CHECK(c10::canCast(from, out.scalar_type()), op, ": input types can't be cast to the desired output type ",
              out.scalar_type());
}

// What a cat launches: the inputs (ATen skips legacy empty tensors, 1-D with
// no element, whatever the other shapes), the wrapped dim, the result's sizes.
struct CatPlan {
  std::vector<at::Tensor> inputs;
  int64_t dim = 0;
  std::vector<int64_t> sizes{0};
  at::ScalarType dtype = at::kFloat;
};

CatPlan plan_cat(const std::vector<at::Tensor>& tensors, int64_t dim) {
  TORCH_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  CatPlan plan;
  plan.dtype = promoted_dtype(tensors);
  std::vector<size_t> positions;
  for (size_t i = 0; i < tensors.size(); ++i) {
    TORCH_CHECK(tensors[i].dim() > 0, "zero-dimensional tensor (at position ", i, ") cannot be concatenated");
    if (!(tensors[i].dim() == 1 && tensors[i].size(0) == 0)) {
      plan.inputs.push_back(tensors[i]);
      positions.push_back(i);
    }
  }
  if (plan.inputs.empty()) {
    return plan;
  }
  const at::Tensor& first = plan.inputs[0];
  plan.dim = at::maybe_wrap_dim(dim, first.dim());
  plan.sizes = first.sizes().vec();
  plan.sizes[plan.dim] = 0;
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const at::Tensor& t = plan.inputs[i];
    TORCH_CHECK(t.dim() == first.dim(), "Tensors must have same number of dimensions: got ", first.dim(), " and ",
                t.dim());
    for (int64_t d = 0; d < first.dim(); ++d) {
      TORCH_CHECK(d == plan.dim || t.size(d) == first.size(d), "Sizes of tensors must match except in dimension ",
                  plan.dim, ". Expected size ", first.size(d), " but got size ", t.size(d), " for tensor number ",
                  positions[i], " in the list.");
    }
    plan.sizes[plan.dim] += t.size(plan.dim);
  }
  return plan;
}

void launch_cat(const LaunchDevice& device, const CatPlan& plan, const at::Tensor& out) {
  if (out.numel() > 0) {
    FLAGOS_GUARDED_LAUNCH(device, aclnnCat, plan.inputs, plan.dim, out);
  }
}

at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim) {
  const std::vector<at::Tensor> list(tensors.begin(), tensors.end());
  check_same_device("cat", {{"tensors", list}});
  const CatPlan plan = plan_cat(list, dim);
  const LaunchDevice device = launch_device_of(list);
  at::Tensor out = empty_on(device, plan.sizes, plan.dtype);
  launch_cat(device, plan, out);
  return out;
}

at::Tensor& cat_out(const at::ITensorListRef& tensors, int64_t dim, at::Tensor& out) {
  const std::vector<at::Tensor> list(tensors.begin(), tensors.end());
  check_same_device("cat.out", {{"tensors", list}, {"out", out}});
  const CatPlan plan = plan_cat(list, dim);
  check_can_cast("torch.cat()", plan.dtype, out);
  const LaunchDevice device = launch_device_of(out, list);
  at::native::resize_output(out, plan.sizes);
  launch_cat(device, plan, out);
  return out;
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

at::Tensor stack(at::TensorList tensors, int64_t dim) {
  check_same_device("stack", {{"tensors", tensors}});
  const LaunchDevice device = launch_device_of(tensors);
  const StackPlan plan = plan_stack(tensors, dim, device);
  at::Tensor out = empty_on(device, plan.sizes, promoted_dtype(tensors));
  launch_stack(device, plan, out);
  return out;
}

at::Tensor& stack_out(at::TensorList tensors, int64_t dim, at::Tensor& out) {
  check_same_device("stack.out", {{"tensors", tensors}, {"out", out}});
  const LaunchDevice device = launch_device_of(out, tensors);
  const StackPlan plan = plan_stack(tensors, dim, device);
  check_can_cast("torch.stack()", promoted_dtype(tensors), out);
  at::native::resize_output(out, plan.sizes);
  launch_stack(device, plan, out);
  return out;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("cat", flagos::with_dtype_fallback<"cat", &cat>());
  m.impl("cat.out", flagos::with_dtype_fallback<"cat.out", &cat_out>());
  m.impl("stack", flagos::with_dtype_fallback<"stack", &stack>());
  m.impl("stack.out", flagos::with_dtype_fallback<"stack.out", &stack_out>());
}

}  // namespace
}  // namespace flagos
