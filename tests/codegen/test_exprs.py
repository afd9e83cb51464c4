"""The mapping language: each ATen argument type onto the ACLNN parameter types it fits."""

from __future__ import annotations

import pytest

from codegen.exprs import ExprError, Scope, parse_expr, render_launch_arg, render_rule, render_when
from codegen.schemas import aten_schemas


def launch_arg(op: str, text: str, ctype: str, allocated_out: bool = True, is_output: bool = False) -> str:
    scope = Scope(aten_schemas().get(op), allocated_out)
    return render_launch_arg(parse_expr(text), scope, ctype, is_output, set())


# Whether a parameter is written comes from the registry's `outputs:`, not
# from its constness: CANN declares aclnnRelu's `out` a `const aclTensor*`.
@pytest.mark.parametrize("op,text,ctype,is_output,cpp", [
    ("add.Tensor", "out", "aclTensor*", True, "out"),
    ("add.Tensor", "out", "const aclTensor*", True, "out"),
    ("add_.Tensor", "self", "aclTensor*", True, "self"),
    ("add_.Tensor", "self", "const aclTensor*", True, "self"),
    ("addmm", "0", "const int8_t", False, "int8_t{0}"),
    ("_softmax", "dim", "const int64_t", False, "dim"),
    ("sum.dim_IntList", "dtype or scalar_type(self)", "const aclDataType", False,
     "dtype.value_or(self.scalar_type())"),
    # zero_dim resizes the output it is given: it stays an output
    ("isin.Scalar_Tensor", "zero_dim(out)", "aclTensor*", True, "flagos::gen::zero_dim(out)"),
])
def test_fits_outputs_and_by_value_const(op, text, ctype, is_output, cpp):
    assert launch_arg(op, text, ctype, is_output=is_output) == cpp


@pytest.mark.parametrize("op,text,ctype,cpp", [
    ("add.Tensor", "self", "const aclTensor*", "self"),
    ("add.Tensor", "alpha", "const aclScalar*", "alpha"),
    ("add.Tensor", "item(other)", "const aclScalar*", "flagos::gen::wrapped_value(other)"),
    ("add.Tensor", "1", "const aclScalar*", "at::Scalar(int64_t{1})"),
    ("add.Tensor", "0.5", "const aclScalar*", "at::Scalar(0.5)"),
    ("addmm", "0", "int8_t", "int8_t{0}"),
    ("clamp.Tensor", "min", "const aclTensor*", "min"),  # Tensor?: nullptr when absent
    ("cat", "tensors", "const aclTensorList*", "flagos::gen::tensor_vector(tensors)"),  # ITensorListRef
    ("_foreach_add.Scalar", "self", "const aclTensorList*", "self"),  # Tensor[]
    ("amax", "dim", "const aclIntArray*", "dim"),
    ("full", "size", "const aclIntArray*", "C10_AS_INTARRAYREF_SLOW(size)"),
    ("sum.dim_IntList", "reduction_dims(dim, self)", "const aclIntArray*", "flagos::gen::reduction_dims(dim, self)"),
    ("sum.dim_IntList", "dtype or scalar_type(self)", "aclDataType", "dtype.value_or(self.scalar_type())"),
    ("sum.dim_IntList", "keepdim", "bool", "keepdim"),
    ("_softmax", "dim", "int64_t", "dim"),
    ("eye", "n", "int64_t", "n.expect_int()"),  # SymInt
    ("native_layer_norm", "eps", "double", "eps"),
    # argument transforms: a dim and a dim list wrapped, an index flattened, optional weights made dense
    ("gather", "wrap_dim(dim, self)", "int64_t", "at::maybe_wrap_dim(dim, self.dim())"),
    ("flip", "wrap_dims(dims, self)", "const aclIntArray*", "flagos::gen::wrapped_dims(dims, self)"),
    ("index_add", "flat(index)", "const aclTensor*", "flagos::gen::flat(index)"),
    ("nll_loss_forward", "contiguous(weight)", "const aclTensor*", "flagos::gen::contiguous(weight)"),
])
def test_fits(op, text, ctype, cpp):
    assert launch_arg(op, text, ctype) == cpp


@pytest.mark.parametrize("op,text,ctype,message", [
    ("mul.Scalar", "other", "const aclTensor*", "`other` is a Scalar but the parameter is `const aclTensor*`"),
    ("add.Tensor", "other", "const aclScalar*", "`other` is a Tensor but the parameter is `const aclScalar*`"),
    ("add.Tensor", "out", "const aclTensor*", "the allocated `out` is passed to an input parameter"),
    ("sum.dim_IntList", "dtype", "aclDataType", "`dtype` is an optional ScalarType"),
    ("add.Tensor", "input", "const aclTensor*", "`input` is not an argument of add.Tensor"),
    ("add.Tensor", "item(alpha)", "const aclScalar*", "argument 1 of `item(alpha)` must be a Tensor"),
    ("add.Tensor", "0.5", "int64_t", "is a float literal"),
    ("gather", "wrap_dim(index, self)", "int64_t", "argument 1 of `wrap_dim(index, self)` must be an int"),
    ("flip", "wrap_dims(dims, dims)", "const aclIntArray*", "argument 2 of `wrap_dims(dims, dims)` must be a Tensor"),
    ("index_add", "flat(alpha)", "const aclTensor*", "argument 1 of `flat(alpha)` must be a Tensor"),
    ("nll_loss_forward", "contiguous(self)", "const aclTensor*", "argument 1 of `contiguous(self)` must be an optional"),
])
def test_does_not_fit(op, text, ctype, message):
    with pytest.raises(ExprError) as error:
        launch_arg(op, text, ctype)
    assert message in error.value.message


@pytest.mark.parametrize("ctype", ["aclTensor*", "const aclTensor*"])
def test_an_input_onto_an_output_fails_whatever_the_constness(ctype):
    with pytest.raises(ExprError) as error:
        launch_arg("add.Tensor", "self", ctype, is_output=True)
    assert "`self` is an input but the operator writes this parameter" in error.value.message


@pytest.mark.parametrize("op,text", [("isin.Scalar_Tensor", "zero_dim(test_elements)"), ("index_add", "flat(index)")])
def test_a_transformed_input_stays_an_input(op, text):
    """zero_dim keeps an output an output, but makes no input one; flat's result is an input."""
    with pytest.raises(ExprError) as error:
        launch_arg(op, text, "aclTensor*", is_output=True)
    assert f"`{text}` is an input but the operator writes this parameter" in error.value.message


@pytest.mark.parametrize("op,role,text,cpp", [
    ("add.Tensor", "size", "broadcast(self, other)", "at::infer_size_dimvector(self.sizes(), other.sizes())"),
    ("add.Tensor", "dtype", "to_float(result_type(self, other))",
     "flagos::gen::to_float(at::native::result_type(self, other))"),
    ("eq.Tensor", "dtype", "bool", "at::kBool"),
    ("where.self", "size", "broadcast3(condition, self, other)",
     "flagos::gen::broadcast3_sizes(condition, self, other)"),
    ("addcmul", "dtype", "result_type3(self, tensor1, tensor2)", "flagos::gen::result_type3(self, tensor1, tensor2)"),
    ("full", "size", "size", "C10_AS_INTARRAYREF_SLOW(size)"),
    ("eye.m", "size", "matrix(n, m)", "flagos::gen::matrix_sizes(n, m)"),
    ("full", "dtype", "dtype or full_type(fill_value)", "dtype.value_or(flagos::gen::full_type(fill_value))"),
    # arange's size is ATen's compute_arange_size, which needs the result's dtype
    ("arange", "size", "arange(0, end, 1, dtype or arange_type(0, end, 1))",
     "flagos::gen::arange_sizes(at::Scalar(int64_t{0}), end, at::Scalar(int64_t{1}), "
     "dtype.value_or(flagos::gen::arange_type(at::Scalar(int64_t{0}), end, at::Scalar(int64_t{1}))))"),
])
def test_rules(op, role, text, cpp):
    assert render_rule(parse_expr(text), Scope(aten_schemas().get(op), True), role, set()) == cpp


@pytest.mark.parametrize("text", ["aclnnAdd(self, other", "f(a b)", "1 +", ""])
def test_syntax_errors(text):
    with pytest.raises(ExprError):
        parse_expr(text)


# Literals are converted to their parameter's C type in braces, where C++
# refuses narrowing: the registry range-checks them instead of the compiler.
@pytest.mark.parametrize("text,ctype,cpp", [
    ("127", "int8_t", "int8_t{127}"),
    ("-128", "const int8_t", "int8_t{-128}"),
    ("255", "uint8_t", "uint8_t{255}"),
    ("2", "int", "int{2}"),  # CANN's `int mode` (aclnnDivMod)
    ("-2147483648", "int", "int{-2147483648}"),
    ("18446744073709551615", "uint64_t", "uint64_t{18446744073709551615u}"),
    ("-9223372036854775808", "int64_t", "int64_t{(-9223372036854775807 - 1)}"),
    ("9007199254740992", "double", "double{9007199254740992}"),
    ("3.4e38", "float", "float{3.4e+38}"),
    ("5e-324", "double", "double{5e-324}"),
    ("-9223372036854775808", "const aclScalar*", "at::Scalar(int64_t{(-9223372036854775807 - 1)})"),
])
def test_literals_in_range(text, ctype, cpp):
    assert launch_arg("addmm", text, ctype) == cpp


@pytest.mark.parametrize("text,ctype,message", [
    ("128", "int8_t", "128 is out of the range of int8_t (-128 to 127)"),
    ("300", "const int8_t", "300 is out of the range of int8_t"),
    ("-1", "uint64_t", "-1 is out of the range of uint64_t"),
    ("2147483648", "const int", "2147483648 is out of the range of int (-2147483648 to 2147483647)"),
    ("18446744073709551616", "uint64_t", "does not fit in 64 bits"),
    ("9223372036854775808", "const aclScalar*", "out of the range of int64_t"),
    ("9007199254740993", "double", "the integer 9007199254740993 has no exact double value"),
    ("1e39", "float", "1e+39 is out of the range of float"),
    ("1e-50", "float", "1e-50 is too small for a float"),
    ("1e999", "double", "is not a finite number"),
    ("1e-400", "double", "too small for a double"),
])
def test_literals_out_of_range(text, ctype, message):
    with pytest.raises(ExprError) as error:
        launch_arg("addmm", text, ctype)
    assert message in error.value.message


def test_fallback_literal_fits_its_parameter():
    assert launch_arg("argmax", "dim or 0", "int64_t") == "dim.value_or(int64_t{0})"
    with pytest.raises(ExprError) as error:
        launch_arg("argmax", "dim or 300", "int8_t")
    assert "300 is out of the range of int8_t" in error.value.message


@pytest.mark.parametrize("text,message", [
    ("f(" * 9 + "x" + ")" * 9, "nests more than 8 levels deep"),
    ("a or " * 9 + "b", "nests more than 8 levels deep"),
    ("f(" * 5000 + "x" + ")" * 5000, "characters long"),
    ("a" * 401, "characters long"),
    ("aclnnAdd(self,\u2028other)", "cannot read"),
    ("valuès", "cannot read"),
    ("\u0663", "cannot read"),  # an Arabic-Indic digit is no C++ digit
])
def test_expressions_are_bounded_ascii(text, message):
    with pytest.raises(ExprError) as error:
        parse_expr(text)
    assert message in error.value.message


def test_flag_index_in_range():
    scope = Scope(aten_schemas().get("native_layer_norm_backward"), True)
    with pytest.raises(ExprError) as error:
        render_when(parse_expr("flag(output_mask, 3)"), scope, set())
    assert "output_mask is a bool[3], it has no element 3" in error.value.message


def test_is_empty_is_a_condition_on_a_tensor():
    scope = Scope(aten_schemas().get("index_add"), True)
    assert render_when(parse_expr("is_empty(index)"), scope, set()) == "(index.numel() == 0)"
    with pytest.raises(ExprError) as error:
        render_when(parse_expr("is_empty(dim)"), scope, set())
    assert "argument 1 of `is_empty(dim)` must be a Tensor" in error.value.message
    with pytest.raises(ExprError) as error:  # a condition, not a launch argument
        launch_arg("index_add", "is_empty(index)", "bool")
    assert "`is_empty` belongs in a when rule, not a launch one" in error.value.message
