// The argument checks of registry ops (`check:` in yaml/ops/*.yaml;
// declared in generated/op_checks.h): of an op that is not structured in
// torch, all of them; of a structured one, what its kernel checks beyond
// ATen's meta function (run before, with the meta function's arguments).
// Each check is what ATen's CPU kernel of the op checks before it computes, through
// ATen's own helpers where ATen has them (TensorIterator's builders for the
// elementwise ops, at::native::_check_layer_norm_inputs); where ATen keeps a
// check inside the kernel's source file, it is stated here with the
// kernel's message, and the comment names that file.
#include <ATen/TensorIterator.h>
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/core/Reduction.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/native/layer_norm.h>
#include <ATen/ops/result_type_native.h>
#include <c10/core/ScalarType.h>
#include <c10/core/WrapDimMinimal.h>

#include <utility>

#include "generated/op_checks.h"

namespace flagos::check {

namespace {
// A tensor that may be absent, as ATen's helpers take it.
const at::Tensor& value_or_undefined(const std::optional<at::Tensor>& tensor) {
  static const at::Tensor undefined;
  return tensor.has_value() ? *tensor : undefined;
}
}  // namespace

// abs_out (UnaryOps.cpp): a complex input's magnitude goes to a real out=
// tensor that its real type can be cast to; otherwise TensorIterator's
// unary op (same dtype, no overlap), which also resizes `out`.
void abs(const at::Tensor& self, at::Tensor& out) {
  if (self.is_complex() && !out.is_complex()) {
    const at::ScalarType real = c10::toRealValueType(self.scalar_type());
    TORCH_CHECK(c10::canCast(real, out.scalar_type()), "result type ", real,
                " can't be cast to the desired output type ", out.scalar_type());
    return;
  }
  at::TensorIterator::unary_op(out, self);
}

// logical_{and,or,xor}_out (BinaryOps.cpp): TensorIterator's comparison op.
void logical_binary(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  at::TensorIterator::comparison_op(out, self, other);
}

// logical_not_out (UnaryOps.cpp): any dtype in and out.
void logical_not(const at::Tensor& self, at::Tensor& out) {
  at::TensorIteratorConfig().check_all_same_dtype(false).add_output(out).add_const_input(self).build();
}

// dot_check (Blas.cpp).
void dot(const at::Tensor& self, const at::Tensor& tensor) {
  TORCH_CHECK(self.dim() == 1 && tensor.dim() == 1, "1D tensors expected, but got ", self.dim(), "D and ",
              tensor.dim(), "D tensors");
  TORCH_CHECK(self.scalar_type() == tensor.scalar_type(), "dot : expected both vectors to have same dtype, but found ",
              self.scalar_type(), " and ", tensor.scalar_type());
  TORCH_CHECK(self.numel() == tensor.numel(), "inconsistent tensor size, expected tensor [", self.numel(),
              "] and src [", tensor.numel(), "] to have the same number of elements, but got ", self.numel(), " and ",
              tensor.numel(), " elements respectively");
}

// addr and addr_out (LinearAlgebra.cpp): 1-D vectors, a self that expands
// to their outer product, beta and alpha that fit the result's dtype; out=
// through the TensorIterator the CPU kernel builds (promotion, the cast to
// out, overlap), which also resizes `out`.
namespace {
void addr_arguments(const at::Tensor& self, const at::Tensor& vec1, const at::Tensor& vec2, const at::Scalar& beta,
                    const at::Scalar& alpha, at::ScalarType result) {
  TORCH_CHECK(vec1.dim() == 1, "addr: Expected 1-D argument vec1, but got ", vec1.dim(), "-D");
  TORCH_CHECK(vec2.dim() == 1, "addr: Expected 1-D argument vec2, but got ", vec2.dim(), "-D");
  (void)self.expand({vec1.size(0), vec2.size(0)});  // expand's own error when it cannot
  for (const auto& [scalar, name] : {std::pair<const at::Scalar&, const char*>{beta, "beta"}, {alpha, "alpha"}}) {
    TORCH_CHECK(!scalar.isBoolean() || result == at::kBool, "Boolean ", name, " only supported for Boolean results.");
    TORCH_CHECK(at::isFloatingType(result) || at::isComplexType(result) || scalar.isIntegral(true),
                "For integral input tensors, argument ", name, " must not be a floating point number.");
  }
}
}  // namespace

void addr(const at::Tensor& self, const at::Tensor& vec1, const at::Tensor& vec2, const at::Scalar& beta,
          const at::Scalar& alpha) {
  addr_arguments(self, vec1, vec2, beta, alpha, at::native::result_type(at::ITensorListRef({self, vec1, vec2})));
}

void addr(const at::Tensor& self, const at::Tensor& vec1, const at::Tensor& vec2, const at::Scalar& beta,
          const at::Scalar& alpha, at::Tensor& out) {
  addr_arguments(self, vec1, vec2, beta, alpha, out.scalar_type());
  at::TensorIteratorConfig()
      .add_output(out)
      .add_owned_const_input(self.expand({vec1.size(0), vec2.size(0)}))
      .add_owned_const_input(vec1.reshape({vec1.size(0), 1}))
      .add_const_input(vec2)
      .allow_cpu_scalars(true)
      .promote_inputs_to_common_dtype(true)
      .cast_common_dtype_to_outputs(true)
      .enforce_safe_casting_to_output(true)
      .build();
}

// relu and relu_ (Activation.cpp).
void relu(const at::Tensor& self) {
  TORCH_CHECK(self.scalar_type() != at::kBool, "Boolean inputs not supported for relu");
}
void relu(at::Tensor& self) { check::relu(std::as_const(self)); }

// max() and min() over all elements (ReduceAllOps.cpp).
void max_all(const at::Tensor& self) {
  TORCH_CHECK(self.numel() > 0, "max(): Expected reduction dim to be specified for input.numel() == 0. "
              "Specify the reduction dim with the 'dim' argument.");
}
void min_all(const at::Tensor& self) {
  TORCH_CHECK(self.numel() > 0, "min(): Expected reduction dim to be specified for input.numel() == 0. "
              "Specify the reduction dim with the 'dim' argument.");
}

// where / where_self_out (TensorCompare.cpp): a bool (or, deprecated, uint8)
// condition; out= of the promoted type; TensorIterator's broadcast and
// overlap checks over the four tensors.
namespace {
void where_condition(const at::Tensor& condition) {
  if (condition.scalar_type() == at::kByte) {
    TORCH_WARN_ONCE("where received a uint8 condition tensor. This behavior is deprecated and will be removed in a "
                    "future version of PyTorch. Use a boolean condition instead.");
  } else {
    TORCH_CHECK(condition.scalar_type() == at::kBool,
                "where expected condition to be a boolean tensor, but got a tensor with dtype ",
                condition.scalar_type());
  }
}
}  // namespace

void where(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other) {
  where_condition(condition);
}

void where(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  const at::ScalarType result = at::native::result_type(self, other);
  TORCH_CHECK(out.scalar_type() == result, "Expected out type to be ", result, " but got ", out.scalar_type());
  where_condition(condition);
  at::TensorIteratorConfig()
      .check_all_same_dtype(false)
      .allow_cpu_scalars(true)  // a Python number for self or other
      .add_output(out)
      .add_const_input(condition)
      .add_const_input(self)
      .add_const_input(other)
      .build();
}

// layer_norm_cpu (layer_norm.cpp): ATen's own helper.
void layer_norm(const at::Tensor& input, c10::SymIntArrayRef normalized_shape, const std::optional<at::Tensor>& weight,
                const std::optional<at::Tensor>& bias, double eps) {
  at::native::_check_layer_norm_inputs(input, C10_AS_INTARRAYREF_SLOW(normalized_shape), value_or_undefined(weight),
                                       value_or_undefined(bias));
}

// native_group_norm's check_group_norm_inputs (group_norm.cpp).
void group_norm(const at::Tensor& input, const std::optional<at::Tensor>& weight,
                const std::optional<at::Tensor>& bias, c10::SymInt N, c10::SymInt C, c10::SymInt HxW, int64_t group,
                double eps) {
  const int64_t channels = C.guard_int(__FILE__, __LINE__);
  TORCH_CHECK(group > 0, "Expected num groups to be greater than 0, got ", group);
  TORCH_CHECK(channels % group == 0, "Expected number of channels in input to be divisible by ",
              "num_groups, but got input of shape ", input.sizes(), " and num_groups=", group);
  const at::Tensor& gamma = value_or_undefined(weight);
  const at::Tensor& beta = value_or_undefined(bias);
  TORCH_CHECK(!gamma.defined() || (gamma.dim() == 1 && gamma.numel() == channels),
              "Expected weight to be a vector of size equal to the number of ",
              "channels in input, but got weight of shape ", gamma.sizes(), " and input of shape ", input.sizes());
  TORCH_CHECK(!beta.defined() || (beta.dim() == 1 && beta.numel() == channels),
              "Expected bias to be a vector of size equal to the number of ",
              "channels in input, but got bias of shape ", beta.sizes(), " and input of shape ", input.sizes());
}

// floor_divide (BinaryOps.cpp, div_floor): ATen's binary op; the floor
// division kernel has no bool or complex loop.
namespace {
void floor_divide_dtype(const at::Tensor& self, const at::Tensor& other) {
  const at::ScalarType common = at::native::result_type(self, other);
  TORCH_CHECK_NOT_IMPLEMENTED(common != at::kBool && !c10::isComplexType(common), "\"floor_divide\" not implemented for '",
                              c10::toString(common), "'");
}
}  // namespace

void floor_divide(const at::Tensor& self, const at::Tensor& other) { floor_divide_dtype(self, other); }

void floor_divide(at::Tensor& self, const at::Tensor& other) {
  floor_divide_dtype(self, other);
  at::TensorIterator::binary_op(self, self, other);
}

void floor_divide(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  floor_divide_dtype(self, other);
  at::TensorIterator::binary_op(out, self, other);
}

// roll_common (TensorTransformations.h): shifts required, one per dim unless
// dims is empty (a roll of the flattened tensor); dims in range.
void roll(const at::Tensor& self, c10::SymIntArrayRef shifts, at::IntArrayRef dims) {
  TORCH_CHECK(!shifts.empty(), "`shifts` required");
  TORCH_CHECK(dims.empty() || shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:", dims.size());
  TORCH_CHECK(!dims.empty() || shifts.size() == 1, "shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:", dims.size());
  for (const int64_t dim : dims) {
    c10::maybe_wrap_dim(dim, self.dim());
  }
}

// flip (TensorTransformations.cpp): ATen's dim_list_to_bitset, every dim in
// range and none twice.
void flip(const at::Tensor& self, at::IntArrayRef dims) { at::dim_list_to_bitset(dims, self.dim()); }

// eye_out_cpu (TensorFactories.cpp): no negative size; eye(n) is eye(n, n).
void eye(c10::SymInt n, c10::SymInt m, std::optional<at::ScalarType> /*dtype*/,
         std::optional<at::Layout> /*layout*/, std::optional<at::Device> /*device*/,
         std::optional<bool> /*pin_memory*/) {
  TORCH_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  TORCH_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
}

void eye(c10::SymInt n, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
         std::optional<at::Device> device, std::optional<bool> pin_memory) {
  eye(n, n, dtype, layout, device, pin_memory);
}

// linspace (TensorFactories.cpp).
void linspace(const at::Scalar& /*start*/, const at::Scalar& /*end*/, int64_t steps,
              std::optional<at::ScalarType> /*dtype*/, std::optional<at::Layout> /*layout*/,
              std::optional<at::Device> /*device*/, std::optional<bool> /*pin_memory*/) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
}

// polar_out (TensorFactories.cpp): half, float or double operands of one
// dtype, an out= tensor of its complex type; TensorIterator's broadcast.
void polar(const at::Tensor& abs, const at::Tensor& angle, at::Tensor& out) {
  auto floating = [](at::ScalarType t) { return t == at::kFloat || t == at::kDouble || t == at::kHalf; };
  TORCH_CHECK(floating(abs.scalar_type()) && floating(angle.scalar_type()),
              "Expected both inputs to be Half, Float or Double tensors but got ", abs.scalar_type(), " and ",
              angle.scalar_type());
  TORCH_CHECK(abs.scalar_type() == angle.scalar_type(), "Expected object of scalar type ", abs.scalar_type(),
              " but got scalar type ", angle.scalar_type(), " for second argument");
  const at::ScalarType complex = c10::toComplexType(abs.scalar_type());
  TORCH_CHECK(out.scalar_type() == complex, "Expected object of scalar type ", complex, " but got scalar type ",
              out.scalar_type(), " for argument 'out'");
  at::TensorIteratorConfig().add_output(out).add_const_input(abs).add_const_input(angle).check_all_same_dtype(false)
      .build();
}

// ---- structured ops: what the kernel checks after the meta function ----

// addmm_impl_cpu_ (LinearAlgebra.cpp), which mm's CPU kernel calls: the
// operands share a dtype (structured_mm checks only their sizes).
void mm(const at::Tensor& self, const at::Tensor& mat2) {
  TORCH_CHECK(self.dtype() == mat2.dtype(), "expected m1 and m2 to have the same dtype, but got: ", self.dtype(),
              " != ", mat2.dtype());
}

// avg_pool2d_backward_out_cpu (AveragePool2d.cpp): the gradient has the input's dtype.
void avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self, at::IntArrayRef /*kernel_size*/,
                         at::IntArrayRef /*stride*/, at::IntArrayRef /*padding*/, bool /*ceil_mode*/,
                         bool /*count_include_pad*/, std::optional<int64_t> /*divisor_override*/) {
  TORCH_CHECK(self.dtype() == grad_output.dtype(), "expected dtype ", self.dtype(),
              " for `gradOutput` but got dtype ", grad_output.dtype());
}

// Not ATen's: CANN's 2-d max pooling takes dilation 1 only (Atlas A2/A3),
// so any other is an error naming the op rather than a wrong result.
void max_pool2d_with_indices(const at::Tensor& /*self*/, at::IntArrayRef /*kernel_size*/, at::IntArrayRef /*stride*/,
                             at::IntArrayRef /*padding*/, at::IntArrayRef dilation, bool /*ceil_mode*/) {
  const int64_t h = dilation[0], w = dilation.back();  // ATen's meta function checked 1 or 2 values
  TORCH_CHECK(h == 1 && w == 1, "max_pool2d_with_indices on flagos: dilation (", h, ", ", w,
              ") is not supported: CANN's 2-d max pooling takes dilation 1 only on Atlas A2/A3");
}

// ---- constant_pad_nd ----

// constant_pad_nd (PadNd.cpp): pairs of values, at most two per dim, and
// no padded dim below size 0.
void constant_pad_nd(const at::Tensor& self, c10::SymIntArrayRef pad, const at::Scalar& /*value*/) {
  TORCH_CHECK(pad.size() % 2 == 0, "Length of pad must be even but instead it equals ", pad.size());
  TORCH_CHECK(static_cast<int64_t>(pad.size() / 2) <= self.dim(),
              "Length of pad should be no more than twice the number of dimensions of the input. Pad length is ",
              pad.size(), "while the input has ", self.dim(), "dimensions.");
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const int64_t dim = self.dim() - 1 - static_cast<int64_t>(i);
    const int64_t before = pad[2 * i].expect_int(), after = pad[2 * i + 1].expect_int();
    TORCH_CHECK(self.size(dim) + before + after >= 0, "The input size ", self.size(dim), ", plus negative padding ",
                before, " and ", after, " resulted in a negative output size, which is invalid. Check dimension ",
                dim, " of your input.");
  }
}

// ---- losses ----

// mse_loss_backward: ATen's CPU kernel trusts the reduction autograd gives
// it; a direct call with another one is refused here (it would select no
// formula). The out= gradient must hold the promoted dtype the launch writes.
namespace {
void mse_loss_reduction(int64_t reduction) {
  TORCH_CHECK(reduction >= at::Reduction::None && reduction <= at::Reduction::Sum, "mse_loss: reduction ", reduction,
              " is not one of 0 (none), 1 (mean), 2 (sum)");
}
}  // namespace

void mse_loss_backward(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                       int64_t reduction) {
  mse_loss_reduction(reduction);
}

void mse_loss_backward(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                       int64_t reduction, at::Tensor& grad_input) {
  mse_loss_reduction(reduction);
  at::native::ResultTypeState state;
  for (const at::Tensor* t : {&grad_output, &self, &target}) {
    state = at::native::update_result_type_state(*t, state);
  }
  const at::ScalarType expected = at::native::result_type(state);
  TORCH_CHECK(grad_input.scalar_type() == expected, "Expected out tensor to have dtype ",
              c10::scalarTypeToTypeMeta(expected), ", but got ", grad_input.dtype(), " instead");
}

}  // namespace flagos::check
