// Device guards at the boundary of the composite ops that real models hit.
//
// A composite op (CompositeImplicitAutograd, or a CompositeExplicitAutograd
// slow path such as the foreach ops') decomposes into other ops, each of
// which guards its own launch. On a non-current device that is one switch
// and restore per inner launch: rms_norm made 12 aclrtSetDevice calls for
// its 6 launches, attention's math path 26. The kernel below makes the op's
// device current once (flagos::CompositeGuard), then runs ATen's own
// composite kernel unchanged, so its inner ops find the device current: 2
// calls for the whole op on another device, 0 on the current one.
// yaml/composite.yaml lists the ops and their dispatch keys; the generator
// registers this kernel for them (csrc/generated/composite_guard.cpp).
// Autograd is unaffected: a CompositeImplicitAutograd op is registered under
// AutogradPrivateUse1 as well, where the composite runs with the autograd
// key in play (as without the guard) and autograd records its inner ops; an
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

#include "generated/aten_kernels.h"
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

}  // namespace

void aten::composite_guard(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
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

}  // namespace flagos
