// The per-dtype CPU fallback of registered kernels.
//
// A flagos kernel launches ACLNN operators; an operator that does not take
// a dtype (aclnnInplaceRandom on uint32, aclnnEqTensor on complex64, any
// operator on ComplexHalf) rejects it at phase 1 and the launch raises
// flagos::DtypeUnsupported (runtime/launch.h). Every kernel is registered
// through with_dtype_fallback, which catches that and runs the same ATen op
// on the CPU for this call only: the CPU fallback for that dtype, counted
// (fallback_counts(), key "<op> [<dtype>]") and warned once per op and
// dtype, refused in strict mode, exactly like an op without a kernel.
// Dtypes the operator takes never leave the device.
//
//   m.impl("abs.out", flagos::with_dtype_fallback<"abs.out", &wrapper_abs_out>());
#pragma once

#include <ATen/core/boxing/KernelFunction.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/CompileTimeFunctionPointer.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "runtime/launch.h"

namespace flagos {

// The boxed CPU fallback for one call whose operator rejected a dtype
// (aten/fallback.cc). `reason` is the DtypeUnsupported being handled.
void dtype_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

namespace detail {

// "abs.out" as a template argument.
template <size_t N>
struct OpName {
  char value[N];
  constexpr OpName(const char (&text)[N]) { std::copy_n(text, N, value); }
};

// The reason the current thread is in dtype_cpu_fallback (for its message).
struct DtypeFallbackReason {
  const DtypeUnsupported* error = nullptr;
};
DtypeFallbackReason& dtype_fallback_reason();

const c10::OperatorHandle& aten_op_handle(const char* name_and_overload);

template <OpName Name, class Fn, Fn fn>
struct DtypeFallbackKernel;

template <OpName Name, class R, class... Args, R (*fn)(Args...)>
struct DtypeFallbackKernel<Name, R (*)(Args...), fn> {
  static R call(Args... args) {
    try {
      return fn(args...);
    } catch (const DtypeUnsupported& error) {
      static const c10::OperatorHandle& op = aten_op_handle(Name.value);
      DtypeFallbackReason& reason = dtype_fallback_reason();
      const DtypeFallbackReason saved = reason;
      reason.error = &error;
      struct Restore {
        DtypeFallbackReason& reason;
        DtypeFallbackReason saved;
        ~Restore() { reason = saved; }
      } restore{reason, saved};
      return c10::impl::BoxedKernelWrapper<R(Args...)>::call(
          c10::BoxedKernel::makeFromFunction<&dtype_cpu_fallback>(), op, c10::DispatchKeySet(), args...);
    }
  }
};

}  // namespace detail

// The kernel `fn` of ATen op `Name` ("name.overload"), with the per-dtype
// CPU fallback around it; pass the result to torch::Library::impl.
template <detail::OpName Name, auto fn>
constexpr auto with_dtype_fallback() {
  using Kernel = detail::DtypeFallbackKernel<Name, decltype(fn), fn>;
  return c10::CompileTimeFunctionPointer<std::remove_pointer_t<decltype(&Kernel::call)>, &Kernel::call>();
}

}  // namespace flagos
