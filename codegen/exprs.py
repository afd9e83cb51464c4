"""The registry's small expression language: parse, type-check, render to C++.

    launch:          aclnnAdds(self, item(other), alpha, out)
    out.size:        broadcast(self, other)
    out.dtype:       dtype or sum_type(self)

Every expression has a kind (tensor, scalar, int_array, dtype, ...). A launch
argument must fit its prototype parameter's C type; an output size must be a
size list, an output dtype a ScalarType. Mismatches are registry errors.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass

from codegen.model import Enum, Call, Expr, Literal, Name, Or
from codegen.safety import shown
from codegen.schemas import OpSchema
from codegen.funcs import FUNCS, Func  # noqa: F401  (FUNCS is part of this module's interface)


class ExprError(Exception):
    def __init__(self, message: str, fix: str):
        super().__init__(message)
        self.message = message
        self.fix = fix


# ---- parsing -------------------------------------------------------------------

# Bounds of what the registry writes: the longest launch is about 150
# characters and three calls deep.
MAX_EXPR_LENGTH = 400
MAX_EXPR_DEPTH = 8

_TOKEN = re.compile(r" *(?:(?P<number>-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
                    r"|(?P<punct>[(),]))", re.ASCII)


def _tokenize(text: str) -> list[str]:
    tokens, pos = [], 0
    text = text.strip(" ")
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise ExprError(f"cannot read `{shown(text)}` at `{shown(text[pos:], 20)}`",
                            "write name, literal or func(arg, ...) in ASCII on one line")
        tokens.append(match.group(match.lastgroup))
        pos = match.end()
    return tokens


def parse_expr(text: object) -> Expr:
    if isinstance(text, bool) or isinstance(text, (int, float)):
        literal = Literal(text)
        _check_literal(literal)
        return literal
    if not isinstance(text, str) or not text.strip(" "):
        raise ExprError(f"expected an expression, found {shown(text)}", "write name, literal or func(arg, ...)")
    if len(text) > MAX_EXPR_LENGTH:
        raise ExprError(f"the expression is {len(text)} characters long", f"keep it under {MAX_EXPR_LENGTH}")
    tokens = _tokenize(text)
    expr, rest = _parse_or(tokens, text, 0)
    if rest:
        raise ExprError(f"unexpected `{' '.join(rest)}` in `{text}`", "check the parentheses and commas")
    return expr


def _parse_or(tokens: list[str], text: str, depth: int) -> tuple[Expr, list[str]]:
    """`a or b or c`, right-associative: Or(a, Or(b, c)); each `or` counts as a level of nesting."""
    terms = []
    term, rest = _parse_term(tokens, text, depth)
    terms.append(term)
    while rest and rest[0] == "or":
        if len(terms) + depth > MAX_EXPR_DEPTH:
            raise ExprError(f"`{shown(text)}` nests more than {MAX_EXPR_DEPTH} levels deep",
                            "write a shorter expression")
        term, rest = _parse_term(rest[1:], text, depth)
        terms.append(term)
    expr = terms[-1]
    for first in reversed(terms[:-1]):
        expr = Or(first, expr)
    return expr, rest


def _parse_term(tokens: list[str], text: str, depth: int) -> tuple[Expr, list[str]]:
    if not tokens:
        raise ExprError(f"`{text}` ends early", "complete the expression")
    head, rest = tokens[0], tokens[1:]
    if head in ("true", "false"):
        return Literal(head == "true"), rest
    if re.fullmatch(r"-?[0-9]+", head):
        return _literal(int(head), head), rest
    if re.fullmatch(r"-?[0-9.eE+-]+", head):
        return _literal(float(head), head), rest
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", head):
        raise ExprError(f"unexpected `{head}` in `{text}`", "write name, literal or func(arg, ...)")
    if not rest or rest[0] != "(":
        return Name(head), rest
    if depth >= MAX_EXPR_DEPTH:
        raise ExprError(f"`{shown(text)}` nests more than {MAX_EXPR_DEPTH} levels deep", "write a shorter expression")
    args: list[Expr] = []
    rest = rest[1:]
    if rest and rest[0] == ")":
        return Call(head, ()), rest[1:]
    while True:
        arg, rest = _parse_or(rest, text, depth + 1)
        args.append(arg)
        if not rest:
            raise ExprError(f"missing `)` in `{text}`", "close the call")
        if rest[0] == ")":
            return Call(head, tuple(args)), rest[1:]
        if rest[0] != ",":
            raise ExprError(f"expected `,` or `)` in `{text}`, found `{rest[0]}`", "separate arguments with commas")
        rest = rest[1:]


# ---- literals ------------------------------------------------------------------

# The C parameter types a literal may be passed to, with their ranges.
INT_RANGES = {
    "int8_t": (-(2**7), 2**7 - 1),
    "uint8_t": (0, 2**8 - 1),
    "int16_t": (-(2**15), 2**15 - 1),
    "int32_t": (-(2**31), 2**31 - 1),
    "int": (-(2**31), 2**31 - 1),  # CANN's `int mode` (aclnnDivMod): 32 bits on every target
    "uint32_t": (0, 2**32 - 1),
    "int64_t": (-(2**63), 2**63 - 1),
    "uint64_t": (0, 2**64 - 1),
}


def _literal(value: int | float, text: str) -> Literal:
    literal = Literal(value)
    _check_literal(literal, text)
    if isinstance(value, float) and value == 0 and re.search(r"[1-9]", text.split("e")[0].split("E")[0]):
        raise ExprError(f"`{text}` is too small for a double: it would be 0",
                        "write 0, or a value a double can hold (down to about 2.2e-308)")
    return literal


def _check_literal(literal: Literal, text: str | None = None) -> None:
    """Any literal fits a 64-bit integer or is a finite double; its parameter's type is checked at the launch."""
    value = literal.value
    written = text or repr(value)
    if isinstance(value, bool):
        return
    if isinstance(value, int) and not -(2**63) <= value <= 2**64 - 1:
        raise ExprError(f"`{shown(written)}` does not fit in 64 bits", "write a value a 64-bit integer can hold")
    if isinstance(value, float) and not math.isfinite(value):
        raise ExprError(f"`{shown(written)}` is not a finite number (it would be {value} in C++)",
                        "write a finite value (a double holds up to about 1.8e308)")


def literal_problem(value: int | float, ctype: str) -> str | None:
    """Why the literal `value` cannot be passed to a parameter of C type `ctype` (or
    converted to it in braces, where C++ refuses narrowing), or None."""
    if isinstance(value, bool):
        return None
    if ctype in INT_RANGES:
        low, high = INT_RANGES[ctype]
        if isinstance(value, int) and not low <= value <= high:
            return f"{value} is out of the range of {ctype} ({low} to {high})"
        return None
    if ctype in ("double", "float"):
        try:
            converted = struct.unpack("<f" if ctype == "float" else "<d",
                                      struct.pack("<f" if ctype == "float" else "<d", value))[0]
        except (OverflowError, struct.error):
            return f"{value} is out of the range of {ctype}"
        if isinstance(value, int) and converted != value:
            return f"the integer {value} has no exact {ctype} value"
        if not math.isfinite(converted):
            return f"{value} is out of the range of {ctype}"
        if converted == 0 and value != 0:
            return f"{value} is too small for a {ctype}: it would be 0"
        return None
    return None


def parse_launch(text: object) -> Call:
    expr = parse_expr(text)
    if not isinstance(expr, Call) or not expr.func.startswith("aclnn"):
        raise ExprError(f"`{text}` is not a launch", "write aclnnX(arg, ...) with the entry point's arguments in order")
    return expr


def show(expr: Expr) -> str:
    if isinstance(expr, Name):
        return expr.name
    if isinstance(expr, Literal):
        return "true" if expr.value is True else "false" if expr.value is False else repr(expr.value)
    if isinstance(expr, Or):
        return f"{show(expr.first)} or {show(expr.fallback)}"
    return f"{expr.func}({', '.join(show(a) for a in expr.args)})"


# ---- kinds ---------------------------------------------------------------------

KIND_WORDS = {
    "tensor": "a Tensor",
    "optional_tensor": "an optional Tensor",
    "tensor_list": "a Tensor list",
    "scalar": "a Scalar",
    "int": "an int",
    "symint": "a SymInt",
    "float": "a float",
    "bool": "a bool",
    "dtype": "a ScalarType",
    "optional_dtype": "an optional ScalarType",
    "int_array": "an int array",
    "symint_array": "a SymInt array",
    "optional_int_array": "an optional int array",
    "int_vector": "an int array",
    "sizes": "a size list",
    "device": "a Device",
    "optional_device": "an optional Device",
    "optional_int": "an optional int",
    "optional_float": "an optional float",
    "optional_bool": "an optional bool",
    "optional_scalar": "an optional Scalar",
    "bool_array": "a bool array",
    "int_literal": "an int literal",
    "float_literal": "a float literal",
    "bool_literal": "a bool literal",
    "str": "a string",
    "optional_str": "an optional string",
    "other": "a value ACLNN does not take",
}


@dataclass(frozen=True)
class Value:
    cpp: str
    kind: str
    is_output: bool = False  # may be written: the allocated output or a Tensor(a!) argument
    literal: int | float | None = None  # the value of an int or float literal


def _int_cpp(value: int) -> str:
    """A C++ integer literal of `value` (64-bit): no decimal literal spells INT64_MIN, and
    values above INT64_MAX need the unsigned suffix."""
    if value == -(2**63):
        return "(-9223372036854775807 - 1)"
    return f"{value}u" if value > 2**63 - 1 else str(value)


# What each prototype parameter type accepts. Whether a tensor parameter is
# written comes from the registry (`outputs:`), not from its constness: CANN
# declares many written tensors `const aclTensor*`.
_INT_TYPES = ("int64_t", "int32_t", "int16_t", "int8_t", "uint64_t", "uint32_t", "uint8_t", "int")
PARAM_FITS: dict[str, tuple[str, ...]] = {
    "const aclTensor*": ("tensor", "optional_tensor"),
    "aclTensor*": ("tensor", "optional_tensor"),
    "const aclScalar*": ("scalar", "optional_scalar", "int", "int_literal", "float_literal", "bool_literal"),
    "const aclIntArray*": ("int_array", "symint_array", "optional_int_array", "int_vector"),
    "const aclTensorList*": ("tensor_list",),
    "aclTensorList*": ("tensor_list",),
    "aclDataType": ("dtype",),
    "const aclBoolArray*": ("bool_array",),
    "char*": ("str",),  # a C string: a `str` argument checked by the entry's `enums:`
    "double": ("float", "float_literal", "int_literal"),
    "float": ("float", "float_literal", "int_literal"),
    "bool": ("bool", "bool_literal"),
    **{t: ("int", "symint", "int_literal") for t in _INT_TYPES},
}
TENSOR_TYPES = ("const aclTensor*", "aclTensor*", "const aclTensorList*", "aclTensorList*")
# A by-value parameter may carry a top-level const, as in CANN's
# `const int64_t dim`; it does not change what the parameter accepts.
BY_VALUE_TYPES = ("aclDataType", "double", "float", "bool", *_INT_TYPES)
PARAM_TYPES = tuple(PARAM_FITS) + tuple(f"const {t}" for t in BY_VALUE_TYPES)


def param_base(ctype: str) -> str:
    """A by-value parameter's top-level const does not change what it accepts."""
    if ctype.startswith("const ") and ctype[len("const "):] in BY_VALUE_TYPES:
        return ctype[len("const "):]
    return ctype


# Output dtype constants.
DTYPE_CONSTANTS = {
    "bool": "at::kBool",
    "uint8": "at::kByte",
    "int8": "at::kChar",
    "int16": "at::kShort",
    "int32": "at::kInt",
    "int64": "at::kLong",
    "float16": "at::kHalf",
    "bfloat16": "at::kBFloat16",
    "float32": "at::kFloat",
    "float64": "at::kDouble",
    "default_float": "c10::get_default_dtype_as_scalartype()",
}


class Scope:
    """The names an expression may use: the op's arguments, and `out` where allocated."""

    def __init__(self, schema: OpSchema, allocated_out: bool, outputs: tuple[str, ...] = ("out",),
                 enums: tuple[Enum, ...] = ()):
        self.schema = schema
        self.allocated_out = allocated_out
        self.outputs = outputs if allocated_out else ()  # the names of the allocated outputs
        self.enums = {enum.arg: enum for enum in enums}

    def lookup(self, name: str, role: str) -> Value:
        if name in self.outputs:
            if role != "launch":
                raise ExprError(f"`{name}` is an output being described", "describe the output from the inputs")
            return Value(name, "tensor", is_output=True)
        arg = self.schema.argument(name)
        if arg is None:
            if role == "dtype" and name in DTYPE_CONSTANTS:
                return Value(DTYPE_CONSTANTS[name], "dtype")
            known = ", ".join(a.name for a in self.schema.arguments)
            extra = (f" and {', '.join(f'`{o}`' for o in self.outputs)} (the allocated output"
                     f"{'s' if len(self.outputs) > 1 else ''})") if self.allocated_out else ""
            raise ExprError(f"`{name}` is not an argument of {self.schema.name}",
                            f"use one of: {known}{extra}")
        if name in self.enums:
            return _enum_value(self.enums[name], self.schema.name)
        if arg.kind in ("str", "optional_str"):
            raise ExprError(f"`{name}` is a string: ACLNN takes it only as one of the values it knows",
                            f"list them under `enums: {{{name}: {{<string>: <code>, ...}}}}`")
        return Value(name, arg.kind, is_output=arg.is_mutable)


def _enum_value(enum: Enum, op: str) -> Value:
    """A string argument as its code (`approximate` -> 0 or 1), or as itself once checked; an
    absent `str?` argument as the code of its `None:` key."""
    names = [name for name, _ in enum.codes] + (["None"] if enum.absent is not None else [])
    accepted = f"either {names[0]} or {names[1]}" if len(names) == 2 else f"one of {', '.join(names)}"
    strings = isinstance(enum.codes[0][1], str)

    def code_cpp(code: int | str) -> str:
        return f'std::string_view("{code}")' if strings else f"int64_t{{{code}}}"

    pairs = ", ".join('{"%s", %s}' % (name, code_cpp(code)) for name, code in enum.codes)
    code_type = "std::string_view" if strings else "int64_t"
    absent = f"{code_cpp(enum.absent)}, " if enum.absent is not None else ""
    cpp = (f'flagos::gen::string_code<{code_type}>("{op}", "{enum.arg}", {enum.arg}, {absent}{{{pairs}}}, '
           f'"{accepted}")')
    return Value(cpp, "str" if strings else "int")


def _coerce(value: Value, wanted: tuple[str, ...]) -> Value | None:
    """`value` as one of the `wanted` kinds, or None."""
    if value.kind in wanted:
        return value
    if value.kind == "bool_literal" and "bool" in wanted:
        return Value("true" if value.cpp == "true" else "false", "bool")
    if value.kind == "int_literal" and ("int" in wanted or "scalar" in wanted) and value.literal is not None \
            and literal_problem(value.literal, "int64_t"):
        return None  # an int64_t cannot hold it
    if value.kind in ("int_literal", "float_literal") and "float" in wanted and value.literal is not None \
            and literal_problem(value.literal, "double"):
        return None
    if value.kind == "int_literal" and "int" in wanted:
        return Value(f"int64_t{{{value.cpp}}}", "int")
    if value.kind in ("int_literal", "float_literal") and "float" in wanted:
        return Value(f"double{{{value.cpp}}}", "float")
    if value.kind in ("int_literal", "float_literal", "bool_literal") and "scalar" in wanted:
        literal = f"int64_t{{{value.cpp}}}" if value.kind == "int_literal" else value.cpp
        return Value(f"at::Scalar({literal})", "scalar")
    if value.kind == "tensor" and "dtype" in wanted:
        return Value(f"{value.cpp}.scalar_type()", "dtype")
    if "sizes" in wanted:
        if value.kind == "tensor":
            return Value(f"{value.cpp}.sizes()", "sizes")
        if value.kind in ("int_array", "int_vector"):
            return Value(value.cpp, "sizes")
        if value.kind == "symint_array":
            return Value(f"C10_AS_INTARRAYREF_SLOW({value.cpp})", "sizes")
    return None


def evaluate(expr: Expr, scope: Scope, role: str, includes: set[str]) -> Value:
    """Types and renders `expr`; raises ExprError."""
    if isinstance(expr, Literal):
        value = expr.value
        if isinstance(value, bool):
            return Value("true" if value else "false", "bool_literal")
        _check_literal(expr)
        if isinstance(value, int):
            return Value(_int_cpp(value), "int_literal", literal=value)
        return Value(repr(float(value)), "float_literal", literal=float(value))
    if isinstance(expr, Name):
        return scope.lookup(expr.name, role)
    if isinstance(expr, Or):
        first = evaluate(expr.first, scope, role, includes)
        if not first.kind.startswith("optional_"):
            raise ExprError(f"`{show(expr.first)}` is {KIND_WORDS[first.kind]}, not optional",
                            f"use `{show(expr.first)}` alone")
        fallback = _coerce(evaluate(expr.fallback, scope, role, includes), (first.kind[len("optional_"):],))
        if fallback is None:
            raise ExprError(f"`{show(expr.fallback)}` does not fit `{show(expr.first)}`",
                            f"write a fallback of the same type as `{show(expr.first)}`")
        return Value(f"{first.cpp}.value_or({fallback.cpp})", fallback.kind)
    func = FUNCS.get(expr.func)
    usable = ", ".join(name for name, f in sorted(FUNCS.items()) if role in f.roles)
    if func is None:
        raise ExprError(f"unknown function `{expr.func}`", f"use one of: {usable}")
    if role not in func.roles:
        raise ExprError(f"`{expr.func}` belongs in a {' or '.join(func.roles)} rule, not a {role} one",
                        f"use one of: {usable}")
    if len(expr.args) != len(func.params):
        raise ExprError(f"`{show(expr)}` takes {len(func.params)} argument(s), not {len(expr.args)}",
                        f"write {expr.func}({', '.join('/'.join(p) for p in func.params)})")
    rendered = []
    first_is_output = False
    for position, (arg, accepted) in enumerate(zip(expr.args, func.params), 1):
        value = _coerce(evaluate(arg, scope, "dtype" if "dtype" in accepted else role, includes), accepted)
        if value is None:
            words = " or ".join(KIND_WORDS[k] for k in accepted)
            raise ExprError(f"argument {position} of `{show(expr)}` must be {words}",
                            f"pass {words} as argument {position}")
        rendered.append(value.cpp)
        if position == 1:
            first_is_output = value.is_output
    if expr.func == "flag":
        _check_flag_index(expr, scope)
    if func.include:
        includes.add(func.include)
    return Value(func.cpp.format(*rendered), func.result, is_output=func.keeps_output and first_is_output)


def _check_flag_index(expr: Call, scope: Scope) -> None:
    """flag(mask, i) indexes a bool[N]: i must be in [0, N)."""
    mask, index = expr.args
    arg = scope.schema.argument(mask.name) if isinstance(mask, Name) else None
    size = re.fullmatch(r"bool\[([0-9]+)\]", arg.type) if arg is not None else None
    if size and isinstance(index, Literal) and not 0 <= index.value < int(size.group(1)):
        raise ExprError(f"`{show(expr)}`: {mask.name} is a {arg.type}, it has no element {index.value}",
                        f"pass an index from 0 to {int(size.group(1)) - 1}")


def _fallback_literal(expr: Expr) -> Literal | None:
    """The literal a launch argument passes: the expression itself, or the last fallback of an `or`."""
    while isinstance(expr, Or):
        expr = expr.fallback
    return expr if isinstance(expr, Literal) and not isinstance(expr.value, bool) else None


def render_rule(expr: Expr, scope: Scope, role: str, includes: set[str]) -> str:
    """An output size (role "size") or dtype (role "dtype") rule as C++."""
    wanted = "sizes" if role == "size" else "dtype"
    value = evaluate(expr, scope, role, includes)
    coerced = _coerce(value, (wanted,))
    if coerced is None:
        raise ExprError(f"`{show(expr)}` is {KIND_WORDS[value.kind]}, not {KIND_WORDS[wanted]}",
                        "see docs/codegen.md for the size and dtype rules")
    return coerced.cpp


def render_when(expr: Expr, scope: Scope, includes: set[str]) -> str:
    """An output's `when` condition (a bool) as C++."""
    value = evaluate(expr, scope, "when", includes)
    if value.kind not in ("bool", "bool_literal"):
        raise ExprError(f"`{show(expr)}` is {KIND_WORDS[value.kind]}, not a bool",
                        "write a bool: flag(output_mask, 0), defined(weight) or a bool argument")
    return value.cpp


def render_launch_arg(expr: Expr, scope: Scope, ctype: str, is_output: bool, includes: set[str]) -> str:
    """One launch argument as C++, checked against its parameter's C type and direction."""
    value = evaluate(expr, scope, "launch", includes)
    base = param_base(ctype)
    fits = PARAM_FITS[base]
    literal = _fallback_literal(expr)
    if literal is not None:
        # The literal is converted to the parameter's C type: it must fit it.
        target = base if base in INT_RANGES or base in ("double", "float") else (
            "int64_t" if isinstance(literal.value, int) else "double")
        why = literal_problem(literal.value, target)
        if why is not None:
            raise ExprError(f"`{show(expr)}`: {why}", f"pass a value a {target} holds")
    coerced = _coerce(value, fits)
    if coerced is None:
        accepted = " or ".join(dict.fromkeys(KIND_WORDS[k] for k in fits))
        raise ExprError(f"`{show(expr)}` is {KIND_WORDS[value.kind]} but the parameter is `{ctype}`",
                        f"pass {accepted} here")
    if is_output and not coerced.is_output:
        raise ExprError(f"`{show(expr)}` is an input but the operator writes this parameter",
                        "pass the allocated `out`, the out= argument or the in-place `self`")
    if not is_output and base in TENSOR_TYPES and coerced.is_output and scope.allocated_out \
            and show(expr) in scope.outputs:
        raise ExprError(f"the allocated `{show(expr)}` is passed to an input parameter",
                        f"pass `{show(expr)}` to a parameter that the entry point's `outputs:` lists")
    if coerced.kind == "int_literal" and base == "const aclScalar*":
        return f"at::Scalar(int64_t{{{coerced.cpp}}})"
    if coerced.kind in ("float_literal", "bool_literal") and base == "const aclScalar*":
        return f"at::Scalar({coerced.cpp})"
    if coerced.kind in ("int_literal", "float_literal"):
        return f"{base}{{{coerced.cpp}}}"
    if coerced.kind == "symint":
        return f"{coerced.cpp}.expect_int()"
    if coerced.kind == "symint_array":
        return f"C10_AS_INTARRAYREF_SLOW({coerced.cpp})"
    if coerced.kind == "tensor_list" and scope.schema.uses_ilistref:
        return f"flagos::gen::tensor_vector({coerced.cpp})"
    return coerced.cpp
