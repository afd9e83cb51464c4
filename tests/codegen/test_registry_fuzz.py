"""A deterministic fuzz of the registry: malformed YAML must never become C++.

A small registry (every kind of field the generator reads: generated ops of
several shapes, structured in torch (no output rules) and not (output rules
and a `check:`), a `guard: none` reason, literals of every C parameter type,
named outputs, `when` flags, handwritten entries, one of them the body of a
structured op (`impl:`)) is mutated by a fixed list
of mutation classes, each expanded over fixed seeds. Every mutant must

- exit 2 with `file:line:` of the problem, the op when the problem lies in an
  op's entry, a `fix:`, and nothing written (not even a temporary file); or,
  where the mutation is legitimate (`ok` / `any` cases),
- exit 0 with generated C++ in which no registry text appears outside a
  comment or a string literal, every comment stays on its line, and every
  character is printable.

No mutant may raise a Python exception. The whole run takes a few seconds:
the registry is small, and `python -m codegen` runs in-process.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
from dataclasses import dataclass

import pytest

from codegen.lint import blank_comments
from codegen.main import main

ACLNN = """\
aclnnNeg:
  source: hicann/ops-math/math/neg/op_api/aclnn_neg.h
  params: [const aclTensor* self, aclTensor* out]
  outputs: [out]
aclnnAdd:
  source: hicann/ops-math/math/add/op_api/aclnn_add.h
  params: [const aclTensor* self, const aclTensor* other, const aclScalar* alpha, aclTensor* out]
  outputs: [out]
aclnnAdds:
  source: hicann/ops-math/math/add/op_api/aclnn_add.h
  params: [const aclTensor* self, const aclScalar* other, const aclScalar* alpha, aclTensor* out]
  outputs: [out]
aclnnAddmm:
  source: hicann/ops-nn/matmul/mat_mul_v3/op_host/op_api/aclnn_addmm.h
  params: [const aclTensor* self, const aclTensor* mat1, const aclTensor* mat2, const aclScalar* beta, const aclScalar* alpha, aclTensor* out, int8_t cubeMathType]
  outputs: [out]
aclnnDot:
  source: hicann/ops-math/math/dot/op_api/aclnn_dot.h
  params: [const aclTensor* self, const aclTensor* tensor, aclTensor* out]
  outputs: [out]
aclnnMaxDim:
  source: hicann/ops-math/math/arg_max_with_value/op_api/aclnn_max_dim.h
  params: [const aclTensor* self, int64_t dim, bool keepdim, aclTensor* out, aclTensor* indices]
  outputs: [out, indices]
aclnnLayerNormBackward:
  source: hicann/ops-nn/norm/layer_norm_grad_v3/op_host/op_api/aclnn_layer_norm_backward.h
  params: [const aclTensor* gradOut, const aclTensor* input, const aclIntArray* normalizedShape, const aclTensor* mean, const aclTensor* rstd, const aclTensor* weightOptional, const aclTensor* biasOptional, const aclBoolArray* outputMask, aclTensor* gradInputOut, aclTensor* gradWeightOut, aclTensor* gradBiasOut]
  outputs: [gradInputOut, gradWeightOut, gradBiasOut]
aclnnArange:
  source: hicann/ops-math/math/range/op_api/aclnn_arange.h
  params: [const aclScalar* start, const aclScalar* end, const aclScalar* step, aclTensor* out]
  outputs: [out]
aclnnFuzzLiterals:
  source: hicann/ops-math/math/fuzz/op_api/aclnn_fuzz.h
  params: [const aclTensor* self, int8_t i8, uint8_t u8, int16_t i16, int32_t i32, uint32_t u32, int64_t i64, uint64_t u64, float f32, double f64, const aclScalar* scalar, bool flag, aclTensor* out]
  outputs: [out]
"""

# neg, add.Tensor, addmm and max.dim are structured in torch: ATen's meta
# function computes their outputs, so their entries have no `out:`. abs, dot,
# native_layer_norm_backward and arange.start_step are not: their entries
# carry the output rules (and a `check:`).
OPS = """\
- op: neg
  shape: unary
  launch: aclnnNeg(self, out)
  guard: none
  reason: launches nothing
  device_check: same-device

- op: abs
  shape: unary
  launch: aclnnFuzzLiterals(self, 0, 0, 0, 0, 0, 0, 0, 0.5, 0.5, 1, true, out)
  out:
    size: self
    dtype: self
  check: abs
  guard: first-tensor

- op: add.Tensor
  shape: binary
  launch: aclnnAdd(self, other, alpha, out)
  wrapped_number: aclnnAdds(self, item(other), alpha, out)
  guard: first-tensor

- op: addmm
  shape: matmul
  launch: aclnnAddmm(self, mat1, mat2, beta, alpha, out, 0)
  guard: explicit-arg
  guard_arg: mat1

- op: dot
  shape: general
  launch: aclnnDot(self, tensor, out)
  out:
    size: matmul(self, tensor)
    dtype: self
  check: dot
  guard: first-tensor

- op: max.dim
  shape: general
  launch: aclnnMaxDim(self, dim, keepdim, values, indices)
  guard: first-tensor

- op: native_layer_norm_backward
  shape: general
  launch: aclnnLayerNormBackward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask, grad_input, grad_weight, grad_bias)
  out:
    - name: grad_input
      size: input
      dtype: input
      when: flag(output_mask, 0)
    - name: grad_weight
      size: normalized_shape
      dtype: weight or input
      when: flag(output_mask, 1)
    - name: grad_bias
      size: normalized_shape
      dtype: weight or input
      when: flag(output_mask, 2)
  guard: explicit-arg
  guard_arg: input

- op: arange.start_step
  shape: factory
  launch: aclnnArange(start, end, step, out)
  out:
    size: arange(start, end, step, dtype or arange_type(start, end, step))
    dtype: dtype or arange_type(start, end, step)
  guard: explicit-arg
  guard_arg: device
"""

HANDWRITTEN = """\
- op: isin.Tensor_Tensor
  guard: first-tensor
  impl: isin_Tensor_Tensor
  file: csrc/handwritten/isin.cc

- op: zero_
  impl: zero_
  guard: first-tensor
  file: csrc/handwritten/fill.cc

- op: fill_.Scalar
  impl: fill_
  guard: first-tensor
  device_check: no-check
  reason: launches nothing
  file: csrc/handwritten/fill.cc
"""

A = "yaml/aclnn.yaml"
O = "yaml/ops/fuzz.yaml"
H = "yaml/handwritten.yaml"
BASE = {A: ACLNN, O: OPS, H: HANDWRITTEN}

# Code a malicious or careless registry value might try to smuggle into C++.
# Every payload names FUZZ, which must never appear in the generated code
# outside comments and strings.
PAYLOADS = [
    '#include "/etc/FUZZ"',
    "#include </etc/FUZZ>",
    "int FUZZ_global = 1;",
    "#undef FLAGOS_GUARDED_LAUNCH",
    "#undef FLAGOS_GUARDED_LAUNCH\n#define FLAGOS_GUARDED_LAUNCH(d, op, ...) op##GetWorkspaceSize(FUZZ)",
    "} void FUZZ() {",
]
LINE_BREAKS = ["\n", "\r", "\r\n", "\u2028", "\u2029", "\x85", "\x0b", "\x0c"]
UNPRINTABLE = ["\x00", "\x07", "\x1b[31m", "\t", "\x7f", "\u202e", "\u2066", "\ufeff", "\u00a0", "\ud800", "\udfff",
               "\ue000"]


@dataclass
class Case:
    name: str
    file: str  # the mutated file
    content: str | bytes  # its new content
    expect: str  # "error": exit 2 at `line`; "ok": exit 0; "any": either, each checked
    line: int | None = None  # the expected line of the error (None: anywhere in `file`)
    op: str | None = None  # the op the error must name
    fragment: str | None = None  # a part of the expected message


def _line(text: str, needle: str) -> int:
    index = text.index(needle)
    return text.count("\n", 0, index) + 1


def _replace(file: str, old: str, new: str, needle: str | None = None) -> tuple[str, int]:
    text = BASE[file]
    assert text.count(old) == 1, (file, old)
    mutated = text.replace(old, new)
    index = text.index(old)
    line = text.count("\n", 0, index) + 1 + (new[: new.index(needle)].count("\n") if needle else 0)
    return mutated, line


def _quoted(text: str) -> str:
    """`text` as a YAML double-quoted scalar (JSON's escapes are YAML's)."""
    return json.dumps(text)


def _edit(name, file, old, new, expect="error", needle=None, op=None, fragment=None) -> Case:
    content, line = _replace(file, old, new, needle)
    return Case(name, file, content, expect, line if expect != "ok" else None, op, fragment)


# ---- mutation classes ----------------------------------------------------------


def reason_breaks_comment(rng: random.Random) -> Case:
    """A reason that would end its `//` comment: a line break, or a trailing backslash."""
    brk = rng.choice(LINE_BREAKS + ["\\", "\\ ", "??/", "\\\t"])
    payload = rng.choice(PAYLOADS)
    text = f"ok{brk}{payload}" if brk in LINE_BREAKS else f"ok {payload}{brk}"
    where = rng.choice([(O, "  reason: launches nothing", "neg"),
                        (H, "  reason: launches nothing", "fill_.Scalar")])
    return _edit(f"reason {brk!r}", where[0], where[1], f"  reason: {_quoted(text)}", op=where[2],
                 fragment="reason")


def reason_unprintable(rng: random.Random) -> Case:
    char = rng.choice(UNPRINTABLE)
    text = f"a reason{char}{rng.choice(PAYLOADS)}"
    return _edit(f"reason {char!r}", O, "  reason: launches nothing", f"  reason: {_quoted(text)}", op="neg",
                 fragment="reason")


def reason_raw_yaml_breaks(rng: random.Random) -> Case:
    """Unicode line breaks written raw, not escaped: YAML folds or refuses them; either way no C++ breaks."""
    char = rng.choice(["\u2028", "\u2029", "\x85", "\r", "\x0c"])
    return _edit(f"raw {char!r}", O, "  reason: launches nothing",
                 f"  reason: the fuzz{char} FUZZ_global = 1;", expect="any")


def reason_bad_value(rng: random.Random) -> Case:
    value = rng.choice(["", "''", "'   '", "~", "[a, b]", "{a: 1}", "12", "true", "2001-01-01", "x" * 400,
                        _quoted("x" * 321)])
    return _edit(f"reason {value[:10]!r}", O, "  reason: launches nothing", f"  reason: {value}", op="neg")


def reason_tricky_but_fine(rng: random.Random) -> Case:
    """Printable text with comment and string syntax in it. As text it is safe (the comment filter keeps
    it in its comment), but `guard: none` on an op with a tensor argument takes only a listed reason."""
    text = rng.choice(["ends */ a block FUZZ", "/* FUZZ */ x", '"FUZZ" quoted', "naïve ✓ FUZZ unicode",
                       "back\\slash FUZZ inside", "question?? FUZZ marks?", "x" * 319 + "Z"])
    return _edit(f"reason fine {text[:12]!r}", O, "  reason: launches nothing", f"  reason: {_quoted(text)}",
                 op="neg")


LITERAL_SLOTS = ["self", "i8", "u8", "i16", "i32", "u32", "i64", "u64", "f32", "f64", "scalar", "flag", "out"]
BAD_LITERALS = {
    "i8": ["128", "-129", "300"], "u8": ["-1", "256"], "i16": ["32768", "-32769"],
    "i32": ["2147483648", "-2147483649"], "u32": ["-1", "4294967296"],
    "i64": ["9223372036854775808", "-9223372036854775809", "1180591620717411303424"],
    "u64": ["-1", "18446744073709551616"],
    "f32": ["1e39", "-1e39", "1e-50", "16777217"], "f64": ["1e999", "-1e999", "1e-400", "9007199254740993"],
    "scalar": ["9223372036854775808", "1e999"], "flag": ["2", "nan"],
}
GOOD_LITERALS = {
    "i8": ["127", "-128"], "u8": ["255"], "i64": ["9223372036854775807", "-9223372036854775808"],
    "u64": ["18446744073709551615"], "f32": ["3.4e38", "-0.5"], "f64": ["1.7e308", "5e-324"], "scalar": ["-1.5"],
}
LITERAL_LAUNCH = "aclnnFuzzLiterals(self, 0, 0, 0, 0, 0, 0, 0, 0.5, 0.5, 1, true, out)"


def _literal_launch(slot: str, value: str) -> str:
    args = LITERAL_LAUNCH[len("aclnnFuzzLiterals("):-1].split(", ")
    args[LITERAL_SLOTS.index(slot)] = value
    return f"aclnnFuzzLiterals({', '.join(args)})"


def literal_out_of_range(rng: random.Random) -> Case:
    slot = rng.choice(sorted(BAD_LITERALS))
    value = rng.choice(BAD_LITERALS[slot])
    return _edit(f"literal {slot}={value}", O, LITERAL_LAUNCH, _literal_launch(slot, value), op="abs")


def literal_in_range(rng: random.Random) -> Case:
    slot = rng.choice(sorted(GOOD_LITERALS))
    value = rng.choice(GOOD_LITERALS[slot])
    return _edit(f"literal {slot}={value}", O, LITERAL_LAUNCH, _literal_launch(slot, value), expect="ok")


def yaml_literal(rng: random.Random) -> Case:
    """A rule written as a bare YAML number: .inf, .nan and huge integers are no C++ values."""
    value = rng.choice([".inf", "-.inf", ".nan", "1180591620717411303424", "1e999", "3", "[0]"])
    return _edit(f"when {value}", O, "      when: flag(output_mask, 1)", f"      when: {value}",
                 op="native_layer_norm_backward")


def flag_index(rng: random.Random) -> Case:
    index = rng.choice(["3", "-1", "9223372036854775808", "1.5"])
    return _edit(f"flag {index}", O, "      when: flag(output_mask, 2)", f"      when: flag(output_mask, {index})",
                 op="native_layer_norm_backward")


BAD_NAMES = ["delete", "class", "and", "new", "int", "this", "co_await", "_Values", "__x", "a__b", "_x",
             "launch_device", "flagos_x", "flagos_launch_guard_", "wrapper_neg", "linux", "unix", "errno", "assert",
             "NULL", "INT64_MAX", "EOF", "valuès", "vаlues", "values\n", "values ", "9lives", "", "a-b", "a.b"]


def output_name(rng: random.Random) -> Case:
    name = rng.choice(BAD_NAMES)
    return _edit(f"output {name!r}", O, "    - name: grad_weight", f"    - name: {_quoted(name)}",
                 op="native_layer_norm_backward")


# Names a wrapper calls: flagos::check::<check>, flagos::impl::<impl>.
BAD_FUNCTIONS = BAD_NAMES + ["abs(self); int FUZZ_global", "abs) { FUZZ(", "check::FUZZ", "abs\n#include <FUZZ>"]


def check_name(rng: random.Random) -> Case:
    name = rng.choice(BAD_FUNCTIONS)
    return _edit(f"check {name!r}", O, "  check: abs\n", f"  check: {_quoted(name)}\n", op="abs", fragment="check")


def impl_name(rng: random.Random) -> Case:
    name = rng.choice(BAD_FUNCTIONS)
    return _edit(f"impl {name!r}", H, "  impl: isin_Tensor_Tensor\n", f"  impl: {_quoted(name)}\n",
                 op="isin.Tensor_Tensor", fragment="impl")


def structured_rules(rng: random.Random) -> Case:
    """Output rules on an op that is structured in torch: ATen's meta function computes its outputs,
    the registry may not repeat them."""
    op, head = rng.choice([("neg", "  launch: aclnnNeg(self, out)\n"),
                           ("add.Tensor", "  wrapped_number: aclnnAdds(self, item(other), alpha, out)\n"),
                           ("addmm", "  launch: aclnnAddmm(self, mat1, mat2, beta, alpha, out, 0)\n"),
                           ("max.dim", "  launch: aclnnMaxDim(self, dim, keepdim, values, indices)\n")])
    key, text = rng.choice([("out", "  out:\n    size: self\n    dtype: self\n"),
                            ("out", "  out:\n    - name: values\n      size: self\n      dtype: self\n")])
    return _edit(f"{key} on {op}", O, head, head + text, needle=f"  {key}:", op=op, fragment="is structured in torch")


def parameter_name(rng: random.Random) -> Case:
    locals_only = ("launch_device", "flagos_", "wrapper_")  # fine in a prototype, not in a wrapper
    name = rng.choice([n for n in BAD_NAMES if not n.startswith(locals_only) and n != "values "]
                      + ["workspaceSize", "executor", "stream", "workspace"])
    return _edit(f"param {name!r}", A, "params: [const aclTensor* self, aclTensor* out]",
                 f"params: [const aclTensor* self, {_quoted('aclTensor* ' + name)}]")


def entry_name(rng: random.Random) -> Case:
    name = rng.choice(["aclnnNeg\n", "aclnnNeg ", " aclnnNeg", "aclnnNég", "aclnnΝeg", "aclnnStatus", "aclnn_neg",
                       "aclnnNeg GetWorkspaceSize", "aclnnNegGetWorkspaceSize", "aclnnNeg\u2028", "aclnn" + "X" * 100,
                       "aclnnNeg/../x", "aclnnNeg\"", "aclnnNeg//"])
    return _edit(f"entry {name!r}", A, "aclnnNeg:\n", f"{_quoted(name)}:\n")


def key_not_a_name(rng: random.Random) -> Case:
    key = rng.choice(["? [a, b]\n  ", "? {a: 1}\n  ", "1", "yes", "~", "2001-01-01", "1.5", "[guard, x]"])
    return _edit(f"key {key!r}", O, "  guard: first-tensor\n\n- op: add.Tensor",
                 f"  {key}: first-tensor\n\n- op: add.Tensor")


VALUES = ["[x]", "{a: 1}", "3", "true", "~", "2001-01-01", "1.5", "[[x]]", "''", "'x\\ny'", '"x\\ny"', "-1"]
# field: (its text, the op of the entry). Output rules and `check:` only on an op that is not
# structured (dot); the others on a structured one (addmm).
OP_FIELDS = {
    "op": ("- op: addmm\n", None), "shape": ("  shape: matmul\n", "addmm"),
    "launch": ("  launch: aclnnAddmm(self, mat1, mat2, beta, alpha, out, 0)\n", "addmm"),
    "out": ("  out:\n    size: matmul(self, tensor)\n    dtype: self\n", "dot"),
    "size": ("    size: matmul(self, tensor)\n", "dot"), "dtype": ("    dtype: self\n  check: dot", "dot"),
    "check": ("  check: dot\n", "dot"), "guard": ("  guard: explicit-arg\n  guard_arg: mat1\n", "addmm"),
    "guard_arg": ("  guard_arg: mat1\n", "addmm"),
}


def op_field_type(rng: random.Random) -> Case:
    field = rng.choice(sorted(OP_FIELDS))
    value = rng.choice(VALUES)
    old, op = OP_FIELDS[field]
    first, rest = old.split(":", 1)
    tail = rest[rest.index("\n"):] if field in ("dtype", "guard") else "\n"
    new = f"{first}: {value}{tail}"
    return _edit(f"{field}: {value}", O, old, new, op=op)


def other_field_type(rng: random.Random) -> Case:
    value = rng.choice(VALUES)
    file, old = rng.choice([
        (O, "  wrapped_number: aclnnAdds(self, item(other), alpha, out)\n"), (O, "  device_check: same-device\n"),
        (O, "      when: flag(output_mask, 0)\n"), (H, "  file: csrc/handwritten/fill.cc\n\n- op: fill_"),
        (H, "  guard: first-tensor\n  file"), (A, "  source: hicann/ops-math/math/neg/op_api/aclnn_neg.h\n"),
        (A, "  params: [const aclTensor* self, aclTensor* out]\n"), (A, "  outputs: [out, indices]\n"),
    ])
    first, rest = old.split(":", 1)
    new = f"{first}: {value}{rest[rest.index(chr(10)):]}"
    valid = "when" in old and value == "true"  # a constant condition is a bool
    return _edit(f"{first.strip()}: {value}", file, old, new, expect="any" if valid else "error")


def entry_not_a_mapping(rng: random.Random) -> Case:
    value = rng.choice(["- just text\n", "- [a, b]\n", "- 12\n", "- ~\n"])
    file, old = rng.choice([(O, "- op: addmm\n"), (H, "- op: zero_\n")])
    return _edit(f"entry {value.strip()}", file, old, value + "\n" + old, needle=value[2:].strip() or "-")


def file_not_a_list(rng: random.Random) -> Case:
    file = rng.choice([O, H, A])
    content, line = rng.choice([("# a comment\n\njust text\n", 3), ("a: 1\nb: 2\n", 1), ("- a\n- b\n", 1),
                                ("[[1], [2]]\n", 1), ("\n\n42\n", 3)])
    if file == A and content.startswith("a:"):
        content, line = "\n- a\n", 2
    return Case(f"{file} {content[:10]!r}", file, content, "error", line)


def emptied(rng: random.Random) -> Case:
    file = rng.choice([A, A, O, H])
    content = rng.choice(["", "# nothing here\n", "{}\n" if file == A else "[]\n"])
    return Case(f"empty {file}", file, content, "error" if file == A else "ok", 1 if file == A else None)


def syntax(rng: random.Random) -> Case:
    old, new, needle = rng.choice([
        ("  shape: matmul\n", '  shape: "matmul\n', '"matmul'),
        ("  shape: matmul\n", "  shape: 'matmul\n", "'matmul"),
        ("  shape: matmul\n", "  shape: [matmul\n", "[matmul"),
        ("  shape: matmul\n", "  shape: {matmul\n", "{matmul"),
        ("  shape: matmul\n", "  shape: matmul\n shape2: x\n", "shape2"),
        ("  shape: matmul\n", "\tshape: matmul\n", "\tshape"),
        ("  shape: matmul\n", "  shape: matmul\n  shape: unary\n", "shape: unary"),
        ("  shape: matmul\n", "  shape: mat\x07mul\n", "mat"),
        ("  shape: matmul\n", "  shape: &s matmul\n  launch2: *s\n", "*s"),
        ("  shape: matmul\n", "  <<: {shape: matmul}\n", None),
        ("  shape: matmul\n", "  shape: !!python/object:os.system matmul\n", "!!python"),
    ])
    return _edit(f"syntax {new.strip()[:16]!r}", O, old, new, needle=needle, expect="error" if needle else "any")


def not_utf8(rng: random.Random) -> Case:
    bad = rng.choice([b"\xff", b"\xc3\x28", b"\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"])
    file = rng.choice([O, H, A])
    text = BASE[file]
    lines = text.split("\n")
    index = rng.randrange(1, len(lines) - 1)
    lines[index] = lines[index] + "  # " if not lines[index].strip() else lines[index]
    encoded = "\n".join(lines).encode()
    split = [i for i, byte in enumerate(encoded) if byte == 0x0A]
    position = split[index] if index < len(split) else len(encoded)
    content = encoded[:position] + bad + encoded[position:]
    return Case(f"bytes {bad!r} in {file}", file, content, "error", index + 1)


def deep_expression(rng: random.Random) -> Case:
    depth = rng.choice([9, 60, 1000, 5000])
    kind = rng.choice(["call", "or", "when"])
    if kind == "call":
        expr = "aclnnAddmm(self, mat1, mat2, beta, alpha, out, " + "f(" * depth + "0" + ")" * depth + ")"
        return _edit(f"launch nested {depth}", O, "  launch: aclnnAddmm(self, mat1, mat2, beta, alpha, out, 0)",
                     f"  launch: {expr}", op="addmm")
    if kind == "or":
        expr = " or ".join(["weight"] * depth) + " or input"
        return _edit(f"or chain {depth}", O, "      dtype: weight or input\n      when: flag(output_mask, 1)",
                     f"      dtype: {expr}\n      when: flag(output_mask, 1)", op="native_layer_norm_backward")
    expr = "flag(" * depth + "output_mask, 1" + ")" * depth
    return _edit(f"when nested {depth}", O, "      when: flag(output_mask, 1)", f"      when: {expr}",
                 op="native_layer_norm_backward")


def deep_yaml(rng: random.Random) -> Case:
    depth = rng.choice([33, 500, 5000, 100000])
    kind = rng.choice(["seq", "map", "block"])
    if kind == "seq":
        value = "[" * depth + "]" * depth
    elif kind == "map":
        value = "{a: " * depth + "1" + "}" * depth
    else:
        depth = min(depth, 400)
        value = "".join("\n" + "  " * (i + 2) + "- " for i in range(depth)) + "x"
    case = _edit(f"yaml {kind} {depth}", O, "  guard_arg: mat1\n", f"  guard_arg: {value}\n")
    if kind == "block":
        case.line = None  # at the line that nests too deep
    return case


def expression_misc(rng: random.Random) -> Case:
    old = "  wrapped_number: aclnnAdds(self, item(other), alpha, out)"
    new = rng.choice([
        "aclnnAdds(self, item(), alpha, out)", "aclnnAdds(self, item(other, self), alpha, out)",
        "aclnnAdds(self, item(item(other)), alpha, out)", "aclnnAdds(self, other, alpha, out)",
        "aclnnAdds(self, item(0), alpha, out)", "aclnnAdds(self, item(nothing), alpha, out)",
        "aclnnAdds(self,, alpha, out)", "aclnnAdds(self, item(other), alpha, out,)", "aclnnAdds",
        "aclnnAdds(self, item(other), alpha, out))", "aclnnAdds(self\t, item(other), alpha, out)",
        "aclnnAdds(self, ítem(other), alpha, out)", "aclnnAdds(" + "self, " * 200 + "out)",
        "aclnnAdds(self, item(other), alpha, out) or aclnnAdd", "aclnnAdds(self, item(other), 1e999, out)",
    ])
    return _edit(f"wrapped {new[:30]!r}", O, old, f"  wrapped_number: {_quoted(new)}", op="add.Tensor")


def handwritten_file(rng: random.Random) -> Case:
    value = rng.choice(["../../etc/passwd", "/etc/passwd", "csrc/handwritten/../../x.cc", "csrc/handwritten/x.txt",
                        "csrc/handwritten/fill.cc\n", "csrc/handwritten/fi\u2028ll.cc", "csrc/generated/x.cpp", ""])
    return _edit(f"file {value!r}", H, "  file: csrc/handwritten/fill.cc\n\n- op: fill_",
                 f"  file: {_quoted(value)}\n\n- op: fill_", op="zero_")


def op_name(rng: random.Random) -> Case:
    value = rng.choice(["addmm\n", "addmm ", "addmm\u2028", "add\u200bmm", "addmm.", "addmm..x", "аddmm",
                        "addmm; int FUZZ;", "addmm/*"])
    return _edit(f"op {value!r}", O, "- op: addmm\n", f"- op: {_quoted(value)}\n")


def guard_arg_text(rng: random.Random) -> Case:
    value = rng.choice(["mat1\n", "mat1 ", "mat1\u2028", "mat1\\", "mat1; int FUZZ;", "mát1"])
    return _edit(f"guard_arg {value!r}", O, "  guard_arg: mat1\n", f"  guard_arg: {_quoted(value)}\n", op="addmm")


def source_text(rng: random.Random) -> Case:
    value = rng.choice(["hicann/ops-math/math/neg/op_api/aclnn_neg.h\n#include <FUZZ>",
                        "hicann/ops-math/math/neg/op_api/aclnn_neg.h\\", "hicann/ops-math/math/nég/aclnn_neg.h",
                        "hicann/ops-math/math/neg/op_api/aclnn_neg.h */ int FUZZ; /*"])
    return _edit(f"source {value[-12:]!r}", A, "  source: hicann/ops-math/math/neg/op_api/aclnn_neg.h\n",
                 f"  source: {_quoted(value)}\n")


def issue_13() -> list[Case]:
    """The malformed registries of issue 13, verbatim."""
    reason = "  reason: launches nothing"
    launch = "  launch: aclnnAddmm(self, mat1, mat2, beta, alpha, out, 0)"
    cases = [
        lambda: _edit("reason newline", O, reason, f"  reason: {_quoted('x' + chr(10) + '#include </etc/FUZZ>')}",
                      op="neg"),
        lambda: _edit("reason CR", O, reason, f"  reason: {_quoted('x' + chr(13) + 'int FUZZ_global;')}", op="neg"),
        lambda: _edit("reason backslash", O, reason, f"  reason: {_quoted('x ' + chr(92))}", op="neg"),
        lambda: _edit("reason #undef", O, reason, "  reason: " + _quoted(
            "x\n#undef FLAGOS_GUARDED_LAUNCH\n#define FLAGOS_GUARDED_LAUNCH(d, op, ...) FUZZ(__VA_ARGS__)"), op="neg"),
        lambda: _edit("int8_t 300", O, launch, launch.replace(", 0)", ", 300)"), op="addmm"),
        lambda: _edit("1e999", O, LITERAL_LAUNCH, _literal_launch("f64", "1e999"), op="abs"),
        lambda: _edit("2**70", O, LITERAL_LAUNCH, _literal_launch("i64", str(2**70)), op="abs"),
        lambda: _edit("output delete", O, "    - name: grad_weight", "    - name: delete",
                      op="native_layer_norm_backward"),
        lambda: _edit("output launch_device", O, "    - name: grad_weight", "    - name: launch_device",
                      op="native_layer_norm_backward"),
        lambda: _edit("key newline", A, "aclnnNeg:\n", '"aclnnNeg\\n":\n'),
        lambda: _edit("list key", O, "  guard: first-tensor\n\n- op: add.Tensor",
                      "  ? [guard, x]\n  : first-tensor\n\n- op: add.Tensor"),
        lambda: _edit("map key", O, "  guard: first-tensor\n\n- op: add.Tensor",
                      "  ? {guard: x}\n  : first-tensor\n\n- op: add.Tensor"),
        lambda: _edit("shape: [unary]", O, "  shape: matmul", "  shape: [matmul]", op="addmm"),
        lambda: Case("non-UTF-8", O, OPS.encode().replace(b"  shape: matmul", b"  shape: m\xffatmul"), "error",
                     _line(OPS, "  shape: matmul")),
        lambda: _edit("item()", O, "item(other)", "item()", op="add.Tensor"),
        lambda: _edit("launch 3000 deep", O, launch, launch.replace(", 0)", ", " + "f(" * 3000 + "0" + ")" * 3001),
                      op="addmm"),
        lambda: _edit("or 3000 long", O, "      dtype: weight or input\n      when: flag(output_mask, 1)",
                      "      dtype: " + "weight or " * 3000 + "input\n      when: flag(output_mask, 1)",
                      op="native_layer_norm_backward"),
        lambda: _edit("flow 100000 deep", O, "  guard_arg: mat1\n", "  guard_arg: " + "[" * 100000 + "]" * 100000 + "\n"),
        lambda: _edit("lone surrogate", O, reason, f"  reason: {_quoted('x' + chr(0xD800))}", op="neg"),
        lambda: _edit("unterminated quote", O, "  shape: matmul\n", '  shape: "matmul\n', needle='"matmul'),
        lambda: _edit("scalar entry", O, "- op: addmm\n", "- addmm\n\n- op: addmm\n"),
        lambda: Case("list of scalars", O, "# ops\n\n- neg\n- abs\n", "error", 3),
        lambda: Case("emptied aclnn.yaml", A, "", "error", 1, fragment="declares no ACLNN operator"),
    ]
    return [make() for make in cases]

def yaml_tags(rng: random.Random) -> Case:
    """YAML's other types where the registry expects text: sets, bytes, pairs, timestamps."""
    value = rng.choice(["!!set {a, b}", "!!binary aGVsbG8=", "!!omap [a: 1]", "!!pairs [a: 1]", "!!timestamp 2001-12-14",
                        "!!float 1", "!!int 3", "!!null ''", "!!bool yes", "!!str 12"])
    file, old, op = rng.choice([(O, "  reason: launches nothing\n", "neg"), (O, "  shape: matmul\n", "addmm"),
                                (O, "    size: matmul(self, tensor)\n", "dot"), (O, "  check: dot\n", "dot"),
                                (H, "  impl: isin_Tensor_Tensor\n", "isin.Tensor_Tensor"),
                                (H, "  file: csrc/handwritten/fill.cc\n\n", "zero_"),
                                (A, "  params: [const aclTensor* self, aclTensor* out]\n", None)])
    first, rest = old.split(":", 1)
    valid = value == "!!str 12" and "reason" in old  # the text "12" is a reason
    return _edit(f"{first.strip()}: {value}", file, old, f"{first}: {value}{rest[rest.index(chr(10)):]}", op=op,
                 expect="any" if valid else "error")


# (class, seeds): every class runs once per seed.
CLASSES = [
    (reason_breaks_comment, range(24)),
    (reason_unprintable, range(12)),
    (reason_raw_yaml_breaks, range(5)),
    (reason_bad_value, range(8)),
    (reason_tricky_but_fine, range(5)),
    (literal_out_of_range, range(16)),
    (literal_in_range, range(6)),
    (yaml_literal, range(6)),
    (flag_index, range(4)),
    (output_name, range(16)),
    (check_name, range(10)),
    (impl_name, range(8)),
    (structured_rules, range(8)),
    (parameter_name, range(8)),
    (entry_name, range(10)),
    (key_not_a_name, range(8)),
    (op_field_type, range(20)),
    (other_field_type, range(12)),
    (entry_not_a_mapping, range(4)),
    (file_not_a_list, range(6)),
    (emptied, range(5)),
    (syntax, range(11)),
    (not_utf8, range(6)),
    (deep_expression, range(8)),
    (deep_yaml, range(6)),
    (expression_misc, range(12)),
    (handwritten_file, range(6)),
    (op_name, range(6)),
    (guard_arg_text, range(5)),
    (source_text, range(4)),
    (yaml_tags, range(10)),
]


def _cases() -> list[Case]:
    cases = issue_13()
    for index, case in enumerate(cases):
        case.name = f"issue_13[{index}] {case.name}"
    for mutate, seeds in CLASSES:
        for seed in seeds:
            case = mutate(random.Random(f"{mutate.__name__}:{seed}"))
            case.name = f"{mutate.__name__}[{seed}] {case.name}"
            cases.append(case)
    return cases


def _write(root: str, files: dict[str, str | bytes]) -> None:
    for relative, content in files.items():
        path = os.path.join(root, *relative.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        mode = "wb" if isinstance(content, bytes) else "w"
        with open(path, mode, **({} if isinstance(content, bytes) else {"encoding": "utf-8", "newline": ""})) as f:
            f.write(content)


def _run(root: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--root", root])
    return code, out.getvalue(), err.getvalue()


def _generated(root: str) -> dict[str, str]:
    files = {}
    out_dir = os.path.join(root, "csrc", "generated")
    for folder, _, names in os.walk(out_dir):
        for name in names:
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8", newline="") as handle:
                files[os.path.relpath(path, out_dir)] = handle.read()
    return files


def check_generated_code(files: dict[str, str]) -> list[str]:
    """Why the generated C++ is not safe from the registry's text (empty when it is)."""
    problems = []
    for name, text in files.items():
        bad = sorted({c for c in text if c != "\n" and not c.isprintable()})
        if bad:
            problems.append(f"{name}: unprintable characters {bad!r}")
        for number, line in enumerate(text.split("\n"), 1):
            if "//" in line and (line.rstrip().endswith("\\") or line.rstrip().endswith("??/")):
                problems.append(f"{name}:{number}: a comment continues onto the next line")
            if line.lstrip().startswith("#") and "FUZZ" in line:
                problems.append(f"{name}:{number}: registry text in a preprocessor directive: {line!r}")
        code = blank_comments(text, strings_too=True)
        for number, line in enumerate(code.split("\n"), 1):
            if "FUZZ" in line:
                problems.append(f"{name}:{number}: registry text outside comments and strings: {line!r}")
    return problems


CASES = _cases()


def test_fuzz_is_large_enough():
    assert len(CASES) >= 200
    assert len({case.name for case in CASES}) > 150  # seeds do pick different variants


def test_base_registry_generates(tmp_path):
    _write(str(tmp_path), BASE)
    code, _, err = _run(str(tmp_path))
    assert code == 0, err
    assert not check_generated_code(_generated(str(tmp_path)))


@pytest.mark.parametrize("index", range(len(CASES)), ids=[case.name for case in CASES])
def test_mutant(tmp_path, index):
    case = CASES[index]
    root = str(tmp_path)
    _write(root, {**BASE, case.file: case.content})
    code, out, err = _run(root)  # any Python exception fails the test
    assert code in (0, 2), (code, err)
    if code == 0:
        assert case.expect in ("ok", "any"), f"accepted:\n{out}"
        problems = check_generated_code(_generated(root))
        assert not problems, "\n".join(problems)
        return
    assert case.expect in ("error", "any"), err
    assert "nothing was written" in err and "\n    fix: " in err, err
    assert not os.path.exists(os.path.join(root, "csrc", "generated")) or not _generated(root)
    located = [line for line in err.split("\n") if line.startswith(f"{case.file}:")]
    assert located, f"no error located in {case.file}:\n{err}"
    if case.expect == "error" and case.line is not None:
        at_line = [line for line in located if line.startswith(f"{case.file}:{case.line}:")]
        assert at_line, f"expected {case.file}:{case.line}:\n{err}"
        if case.op:
            assert any(f": {case.op}: " in line for line in at_line), f"expected op {case.op}:\n{err}"
        if case.fragment:
            assert any(case.fragment in line for line in at_line), err
    assert all(c == "\n" or c.isprintable() for c in err), f"unprintable characters in the message: {err!r}"
