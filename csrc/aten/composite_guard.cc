// Device guards at the boundary of the composite ops that real models hit.
//
// A composite op (CompositeImplicitAutograd, or a CompositeExplicitAutograd
// slow path such as the foreach ops') decomposes into other ops, each of
// which guards its own launch. On a non-current device that is one switch
// and restore per inner launch: rms_norm made 12 aclrtSetDevice calls for
// its 6 launches, attention's math path 26. The kernel below makes the op's
// device current once (flagos::CompositeGuard), then runs ATen's own
// composite kernel unchanged, so its inner ops find the device current: 2
// calls for the whole op on another device, 0 on the current one. Autograd
// is unaffected: a CompositeImplicitAutograd op is registered under
// AutogradPrivateUse1 as well, where the composite runs with the autograd
// key in play (as without this file) and autograd records its inner ops; an
// op with its own derivative (the foreach ops) is registered under
// PrivateUse1 only, below its autograd kernel.
//
// The device is the first flagos tensor among the arguments (tensors,
// optional tensors, tensor lists), the `first-tensor` policy. It is only a
// starting point: each inner op still guards its own launch, so a list
// that spans devices stays correct (its other devices pay their own
// switches).
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <torch/library.h>

#include "runtime/launch.h"

namespace flagos {
namespace {

LaunchDevice device_of(const c10::IValue& value) {
  LaunchDevice device;
  if (value.isTensor()) {
    detail::take_device(device, value.toTensor());
  } else if (value.isTensorList()) {
    for (const at::Tensor& tensor : value.toTensorList()) {
      if (detail::take_device(device, tensor)) break;
    }
  } else if (value.isList()) {  // Tensor?[]
    for (const c10::IValue& element : value.toListRef()) {
      if (element.isTensor() && detail::take_device(device, element.toTensor())) break;
    }
  }
  return device;
}

void guarded_composite(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
  // No KernelSpan: the inner ops are the kernels of the phase breakdown, and
  // ATen's decomposition counts with the dispatcher's work.
  const size_t count = op.schema().arguments().size();
  LaunchDevice device;
  for (const c10::IValue& value : torch::jit::last(*stack, count)) {
    device = device_of(value);
    if (device.has_value()) break;
  }
  const CompositeGuard guard(device);
  // ATen's own decomposition of the op, as the dispatcher would have run it
  // without this kernel.
  const c10::DispatchKey composite = op.hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd)
                                         ? c10::DispatchKey::CompositeImplicitAutograd
                                         : c10::DispatchKey::CompositeExplicitAutograd;
  TORCH_CHECK(op.hasKernelForDispatchKey(composite), "flagos: ", op.schema().name(),
              " has no composite kernel for its composite guard");
  op.callBoxedForDispatchKey(composite, *stack);
}

torch::CppFunction guarded() { return torch::CppFunction::makeFromBoxedFunction<&guarded_composite>(); }

// CompositeImplicitAutograd ops: the inference path (PrivateUse1) and the
// autograd path (AutogradPrivateUse1). CompositeExplicitAutograd foreach slow
// paths that torch.optim's foreach implementations (SGD, Adam, AdamW) and
// zero_grad call and that have no fused flagos kernel
// (csrc/handwritten/foreach.cc guards its own): under PrivateUse1 only, below
// their autograd kernels. tests/device/test_composite_guard.py checks that
// each one still has the composite kernel this file runs.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("rms_norm", guarded());
  m.impl("linear", guarded());
  m.impl("layer_norm", guarded());
  m.impl("scaled_dot_product_attention", guarded());
  m.impl("_scaled_dot_product_attention_math", guarded());
  m.impl("_foreach_add.ScalarList", guarded());
  m.impl("_foreach_add.Tensor", guarded());
  m.impl("_foreach_add_.ScalarList", guarded());
  m.impl("_foreach_add_.Tensor", guarded());
  m.impl("_foreach_addcdiv_.Scalar", guarded());
  m.impl("_foreach_addcdiv_.Tensor", guarded());
  m.impl("_foreach_addcmul_.ScalarList", guarded());
  m.impl("_foreach_addcmul_.Tensor", guarded());
  m.impl("_foreach_div_.List", guarded());
  m.impl("_foreach_div_.Scalar", guarded());
  m.impl("_foreach_div_.Tensor", guarded());
  m.impl("_foreach_div.List", guarded());
  m.impl("_foreach_div.ScalarList", guarded());
  m.impl("_foreach_lerp_.Scalar", guarded());
  m.impl("_foreach_lerp_.List", guarded());
  m.impl("_foreach_maximum_.List", guarded());
  m.impl("_foreach_mul_.Tensor", guarded());
  m.impl("_foreach_mul_.ScalarList", guarded());
  m.impl("_foreach_mul.ScalarList", guarded());
  m.impl("_foreach_mul.List", guarded());
  m.impl("_foreach_mul.Tensor", guarded());
  m.impl("_foreach_neg", guarded());
  m.impl("_foreach_neg_", guarded());
  m.impl("_foreach_pow.ScalarAndTensor", guarded());
  m.impl("_foreach_sqrt", guarded());
  m.impl("_foreach_sqrt_", guarded());
  m.impl("_foreach_sub_.Scalar", guarded());
  m.impl("_foreach_sub.Scalar", guarded());
  m.impl("_foreach_sub_.List", guarded());
  m.impl("_foreach_zero_", guarded());
  // Allocate, then fill or copy: the allocation must find the device
  // current too, or a cold allocator switches for it on its own (autograd's
  // gradient seed is a ones_like).
  m.impl("clone", guarded());
  m.impl("ones_like", guarded());
  m.impl("zeros_like", guarded());
  m.impl("full_like", guarded());
  m.impl("new_ones", guarded());
  m.impl("new_zeros", guarded());
  m.impl("new_full", guarded());
}

TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
  m.impl("rms_norm", guarded());
  m.impl("linear", guarded());
  m.impl("layer_norm", guarded());
  m.impl("scaled_dot_product_attention", guarded());
  m.impl("_scaled_dot_product_attention_math", guarded());
}

}  // namespace
}  // namespace flagos
