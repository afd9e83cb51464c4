// ATen's structured kernels on flagos: ATen's meta function checks, ACLNN computes.
//
// For an op that is structured in the installed torch (it has
// at::meta::structured_<op>, ATen/ops/<op>_meta.h), the generated wrapper
// runs ATen's own meta function before it launches:
//
//   flagos::StructuredOut<at::meta::structured_add_Tensor, 1> op(launch_device, out);
//   op.meta(self, other, alpha);   // ATen's checks, sizes, strides, dtype
//   FLAGOS_GUARDED_LAUNCH(launch_device, aclnnAdd, self, other, alpha, out);
//
// The meta function raises what PyTorch raises at the call (shapes, dtypes,
// out= casting, memory overlap: for TensorIterator ops all of
// TensorIterator's checks) and hands each output back through
// set_output_*: a functional op's output is allocated on the launch device
// with the strides ATen asks for, an out= tensor is checked and resized as
// ATen's own registrations do it (with resize_output's warning), an in-place
// op's `self` is checked against the result. The ACLNN launch is the impl.
// The classes follow torchgen's in-tree wrappers (structured kernels, see
// torchgen's StructuredRegisterDispatchKey) without proxy outputs: ACLNN
// operators write strided outputs.
#pragma once

#include <ATen/TensorIterator.h>
#include <ATen/TensorMeta.h>
#include <ATen/core/Tensor.h>
#include <c10/core/TensorOptions.h>
#include <c10/util/ArrayRef.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <type_traits>

#include "runtime/launch.h"

namespace flagos {

namespace detail {

// A new output on `device` (the current device when it has none) with the
// meta function's sizes and dtype; `strides` when it gives them, else
// contiguous in the memory format of `options`.
at::Tensor structured_output(const LaunchDevice& device, at::IntArrayRef sizes, at::IntArrayRef strides,
                             const at::TensorOptions& options);

// An out= tensor: the dtype and device the meta function computed, resized
// to its sizes (at::native::resize_output: the warning when a non-empty
// tensor is resized); restrided to the meta function's strides when it was
// resized, kept as it is otherwise.
void structured_resize_out(const at::Tensor& out, at::IntArrayRef sizes, at::IntArrayRef strides,
                           const at::TensorOptions& options);

// An in-place op's `self` must already be the result: same dtype, device
// and sizes.
void structured_check_inplace(const at::Tensor& self, at::IntArrayRef sizes, const at::TensorOptions& options);

// TensorIterator-based meta classes must also be told about each output
// (it becomes an operand of the iterator); the others need nothing more.
template <class Meta>
inline constexpr bool is_tensor_iterator = std::is_base_of_v<at::TensorIteratorBase, Meta>;

}  // namespace detail

// What the three kinds share: ATen's meta function calls set_output_* once
// per output; `Kind::place` allocates, resizes or checks it, and a
// TensorIterator meta class is then told about it (it becomes an operand of
// the iterator) from maybe_get_output, as torchgen's wrappers do.
template <class Meta, class Kind>
class StructuredOutputs : public Meta {
 public:
  void set_output_strided(int64_t index, at::IntArrayRef sizes, at::IntArrayRef strides,
                          at::TensorOptions options) final {
    set_output(index, sizes, strides, options);
  }
  void set_output_raw_strided(int64_t index, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options) final {
    set_output(index, sizes, strides, options);
  }

 private:
  void set_output(int64_t index, at::IntArrayRef sizes, at::IntArrayRef strides, const at::TensorOptions& options) {
    static_cast<Kind*>(this)->place(index, sizes, strides, options);
    if constexpr (detail::is_tensor_iterator<Meta>) {
      Meta::set_output_raw_strided(index, sizes, strides, options);
    }
  }
};

// A functional op: N new outputs on the launch device.
template <class Meta, size_t N>
class StructuredFunctional final : public StructuredOutputs<Meta, StructuredFunctional<Meta, N>> {
 public:
  explicit StructuredFunctional(const LaunchDevice& device) : device_(device) {}

  const at::Tensor& maybe_get_output(int64_t index) override { return outputs[index]; }

  void place(int64_t index, at::IntArrayRef sizes, at::IntArrayRef strides, const at::TensorOptions& options) {
    outputs[index] = detail::structured_output(device_, sizes, strides, options);
  }

  std::array<at::Tensor, N> outputs;

 private:
  LaunchDevice device_;
};

// An out= op: the N out= arguments, checked and resized.
template <class Meta, size_t N>
class StructuredOut final : public StructuredOutputs<Meta, StructuredOut<Meta, N>> {
 public:
  template <class... Outs>
  explicit StructuredOut(const Outs&... outs) : outputs_{std::cref(outs)...} {
    static_assert(sizeof...(Outs) == N, "one out= argument per output");
  }

  const at::Tensor& maybe_get_output(int64_t index) override { return outputs_[index].get(); }

  void place(int64_t index, at::IntArrayRef sizes, at::IntArrayRef strides, const at::TensorOptions& options) {
    detail::structured_resize_out(outputs_[index].get(), sizes, strides, options);
  }

  // After meta(): the memory-overlap checks of ATen's kernels. A
  // TensorIterator meta function has made them already.
  void check_written(std::initializer_list<DeviceCheckArg> inputs) const {
    if constexpr (!detail::is_tensor_iterator<Meta>) {
      for (const auto& out : outputs_) flagos::check_written(out.get(), inputs);
    }
  }

 private:
  std::array<std::reference_wrapper<const at::Tensor>, N> outputs_;
};

// An in-place op: `self` is the one output.
template <class Meta>
class StructuredInplace final : public StructuredOutputs<Meta, StructuredInplace<Meta>> {
 public:
  explicit StructuredInplace(const at::Tensor& self) : self_(self) {}

  const at::Tensor& maybe_get_output(int64_t index) override { return self_; }

  void place(int64_t index, at::IntArrayRef sizes, at::IntArrayRef strides, const at::TensorOptions& options) {
    detail::structured_check_inplace(self_, sizes, options);
  }

  // After meta(): the memory-overlap checks of ATen's kernels, as StructuredOut's.
  void check_written(std::initializer_list<DeviceCheckArg> inputs) const {
    if constexpr (!detail::is_tensor_iterator<Meta>) {
      flagos::check_written(self_, inputs);
    }
  }

 private:
  const at::Tensor& self_;
};

}  // namespace flagos
