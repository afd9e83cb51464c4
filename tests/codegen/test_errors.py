"""Every class of registry error: exit 2, file:line + op + what + fix, nothing written."""

from __future__ import annotations

import os

import pytest

# neg is structured in torch (ATen's meta function computes its output): no `out:`.
NEG = """- op: neg
  variants: [functional, inplace, out]
  shape: unary
  launch: aclnnNeg(self, out)
  guard: first-tensor
"""

# relu is not structured: its entry keeps the registry's output rules.
RELU = """- op: relu
  variants: [functional, inplace]
  shape: unary
  launch: aclnnRelu(self, out)
  inplace_launch: aclnnInplaceRelu(self)
  out:
    size: self
    dtype: self
  check: relu
  guard: first-tensor
"""

# gelu's `approximate` string reaches aclnnGeluV2 as an int code.
GELU = """  launch: aclnnGeluV2(self, approximate, out)
  enums:
    approximate: {none: 0, tanh: 1}
"""

# div's `str? rounding_mode` reaches aclnnDivMod as an int code; None has one too.
DIV_MODE = """  enums:
    rounding_mode: {None: 0, trunc: 1, floor: 2}
"""

CASES = {
    # name: (file, old, new, needle locating the reported line, op, message fragment)
    "yaml syntax": ("yaml/ops/unary.yaml", "- op: exp\n  variants: [functional, inplace, out]\n  shape: unary",
                    "- op: exp\n  variants: [functional, inplace, out]\n  shape: [unary",
                    None, None, "YAML syntax error"),
    "unknown key": ("yaml/ops/unary.yaml", NEG, NEG.replace("  guard:", "  guards: first-tensor\n  guard:"),
                    "guards:", "neg", "unknown key `guards`"),
    "unknown op": ("yaml/ops/unary.yaml", NEG, NEG.replace("op: neg", "op: negg"),
                   "op: negg", "negg", "has no operator `negg`"),
    "explicit-arg, no such argument": (
        "yaml/ops/unary.yaml", NEG, NEG.replace("guard: first-tensor", "guard: explicit-arg\n  guard_arg: input"),
        "guard_arg: input", "neg", "guard_arg `input` is not an argument of neg"),
    "explicit-arg, not a tensor or device": (
        "yaml/ops/binary.yaml", "  inplace_wrapped_number: aclnnInplaceAdds(self, item(other), alpha)\n"
        "  guard: first-tensor\n\n- op: sub.Tensor",
        "  inplace_wrapped_number: aclnnInplaceAdds(self, item(other), alpha)\n"
        "  guard: explicit-arg\n  guard_arg: alpha\n\n- op: sub.Tensor",
        "guard_arg: alpha", "add.Tensor", "neither a tensor, a tensor list nor a device"),
    "first-tensor without tensors": (
        "yaml/ops/factory.yaml", "  guard: explicit-arg\n  guard_arg: device\n\n- op: zeros",
        "  guard: first-tensor\n\n- op: zeros", "guard: first-tensor", "full", "has no tensor argument"),
    "none without reason": ("yaml/ops/unary.yaml", NEG, NEG.replace("guard: first-tensor", "guard: none"),
                            "guard: none", "neg", "guard none without a `reason`"),
    "no-check without reason": (
        "yaml/ops/unary.yaml", NEG, NEG.replace("guard: first-tensor", "guard: first-tensor\n  device_check: no-check"),
        "device_check: no-check", "neg", "device_check no-check without a `reason`"),
    "same op twice": ("yaml/ops/unary.yaml", NEG, NEG + "\n" + NEG.replace("op: neg", "op: exp"),
                      None, "exp", "exp is registered twice"),
    "unknown shape": ("yaml/ops/unary.yaml", NEG, NEG.replace("shape: unary", "shape: unaryy"),
                      "shape: unaryy", "neg", "unknown kernel shape `unaryy`"),
    "entry point without prototype": (
        "yaml/ops/unary.yaml", NEG, NEG.replace("aclnnNeg(self, out)", "aclnnNegative(self, out)"),
        "aclnnNegative", "neg", "entry point `aclnnNegative` has no prototype"),
    "scalar onto an aclTensor": (
        "yaml/ops/scalar.yaml", "launch: aclnnPowTensorScalar(self, exponent, out)",
        "launch: aclnnPowTensorTensor(self, exponent, out)", "launch: aclnnPowTensorTensor(self, exponent, out)",
        "pow.Tensor_Scalar", "is a Scalar but the parameter is `const aclTensor*`"),
    "wrong argument count": ("yaml/ops/unary.yaml", NEG, NEG.replace("aclnnNeg(self, out)", "aclnnNeg(self)"),
                             "aclnnNeg(self)", "neg", "aclnnNeg takes 2 argument(s), the launch passes 1"),
    "input onto an output parameter": (
        "yaml/ops/unary.yaml", NEG, NEG.replace("aclnnNeg(self, out)", "aclnnNeg(self, self)"),
        "aclnnNeg(self, self)", "neg", "is an input but the operator writes this parameter"),
    "prototype without source": (
        "yaml/aclnn.yaml", "  source: hicann/ops-math/math/neg/op_api/aclnn_neg.h\n", "",
        "aclnnNeg:", None, "aclnnNeg: `source` must name the CANN header or doc that declares it"),
    "prototype source outside CANN": (
        "yaml/aclnn.yaml", "source: hicann/ops-math/math/neg/op_api/aclnn_neg.h",
        "source: somewhere/aclnn_neg.h", "source: somewhere", None, "`source` must name the CANN header"),
    "output that is not a tensor parameter": (
        "yaml/aclnn.yaml", "  params: [const aclTensor* self, const aclScalar* other, const aclScalar* alpha, "
        "aclTensor* out]\n  outputs: [out]", "  params: [const aclTensor* self, const aclScalar* other, "
        "const aclScalar* alpha, aclTensor* out]\n  outputs: [alpha]",
        "outputs: [alpha]", None, "aclnnAdds: output `alpha` is not a tensor parameter"),
    "prototype without outputs": (
        "yaml/aclnn.yaml", "  params: [const aclTensor* self, aclTensor* out]\n  outputs: [out]\naclnnExp:",
        "  params: [const aclTensor* self, aclTensor* out]\naclnnExp:",
        "aclnnNeg:", None, "aclnnNeg: `outputs` must list the parameters the operator writes"),
    "unknown prototype key": (
        "yaml/aclnn.yaml", "  source: hicann/ops-math/math/neg/op_api/aclnn_neg.h\n",
        "  source: hicann/ops-math/math/neg/op_api/aclnn_neg.h\n  direction: out\n",
        "direction: out", None, "unknown key `direction`"),
    "unknown rule": ("yaml/ops/unary.yaml", RELU, RELU.replace("size: self", "size: broadcast(self)"),
                     "size: broadcast(self)", "relu", "takes 2 argument(s), not 1"),
    # families: one entry, its forms under `variants`
    "unknown variant": ("yaml/ops/unary.yaml", NEG, NEG.replace("inplace, out]", "inplace, outt]"),
                        "outt]", "neg", "`variants` must list forms among functional, inplace, out, each once"),
    "variant twice": ("yaml/ops/unary.yaml", NEG, NEG.replace("inplace, out]", "inplace, inplace]"),
                      "inplace, inplace]", "neg", "`variants` must list forms among functional, inplace, out"),
    "variant torch lacks": ("yaml/ops/unary.yaml", RELU, RELU.replace("[functional, inplace]", "[functional, out]"),
                            "variants: [functional, out]", "relu",
                            "has no out form of relu (it has: functional, inplace)"),
    "family named by its in-place form": ("yaml/ops/unary.yaml", NEG, NEG.replace("op: neg", "op: neg_"),
                                          "op: neg_", "neg_", "neg_ is not the functional form of its family"),
    "inplace_launch without the in-place form": (
        "yaml/ops/unary.yaml", RELU, RELU.replace("[functional, inplace]", "[functional]"),
        "inplace_launch:", "relu", "`inplace_launch` without an in-place form"),
    # string arguments: `enums:` maps the strings ATen accepts to ACLNN's codes
    "string argument without enums": (
        "yaml/ops/unary_math.yaml", GELU, GELU.split("  enums:")[0], "aclnnGeluV2(self, approximate, out)", "gelu",
        "`approximate` is a string: ACLNN takes it only as one of the values it knows"),
    "enums of an argument that is not a string": (
        "yaml/ops/unary_math.yaml", GELU, GELU.replace("    approximate:", "    self: {a: 0, b: 1}\n    approximate:"),
        "self: {a: 0, b: 1}", "gelu", "enums: `self` is not a `str` or `str?` argument of gelu"),
    "enums of a str? argument without None": (
        "yaml/ops/binary.yaml", DIV_MODE, DIV_MODE.replace("None: 0, ", ""), "rounding_mode: {trunc: 1",
        "div.Tensor_mode", "enums: `rounding_mode` is a `str?`: `None` is the code of its absence, which it needs"),
    "enums of a str argument with None": (
        "yaml/ops/unary_math.yaml", GELU, GELU.replace("{none: 0,", "{None: 2, none: 0,"), "approximate: {None",
        "gelu", "enums: `approximate` is a `str`: `None` is the code of its absence, which it cannot have"),
    "at_least_1d of a number": (
        "yaml/ops/sort.yaml", "aclnnSort(at_least_1d(self)", "aclnnSort(at_least_1d(dim)", "aclnnSort(",
        "sort.stable", "argument 1 of `at_least_1d(dim)` must be a Tensor"),
    "wrap_dim of a tensor": (
        "yaml/ops/sort.yaml", "wrap_dim(dim, self), descending", "wrap_dim(self, dim), descending", "aclnnSort(",
        "sort.stable", "argument 1 of `wrap_dim(self, dim)` must be an int"),
    "any_given of a tensor": (
        "yaml/ops/upsample.yaml", "when: any_given(scales_h, scales_w)", "when: any_given(self, scales_w)",
        "launch: aclnnUpsampleNearest2dV2", "upsample_nearest2d", "argument 1 of `any_given(self, scales_w)` must be an optional float"),
    "as_dtype_of a number": (
        "yaml/ops/loss.yaml", "aclnnMseLoss(as_dtype_of(self, out)", "aclnnMseLoss(as_dtype_of(self, reduction)",
        "aclnnMseLoss(", "mse_loss", "argument 2 of `as_dtype_of(self, reduction)` must be a Tensor"),
    "enums with mixed codes": (
        "yaml/ops/unary_math.yaml", GELU, GELU.replace("tanh: 1", "tanh: tanh"), "approximate: {none: 0",
        "gelu", "the codes of `approximate` must be all integers or all strings"),
    "enums with one string": (
        "yaml/ops/unary_math.yaml", GELU, GELU.replace(", tanh: 1", ""), "approximate: {none: 0}",
        "gelu", "enums: `approximate` must map each string it takes to its code, two or more"),
    "enums string that is not a word": (
        "yaml/ops/unary_math.yaml", GELU, GELU.replace("tanh: 1", "'tanh\\\"': 1"), "approximate: {none: 0",
        "gelu", "enums: `approximate` must map each string it takes to its code, two or more"),
    # alternate launches
    "alternate without when": (
        "yaml/ops/selection.yaml", "  alternate:\n    when: not_floating(self)\n    launch: aclnnInplaceZero(out)\n"
        "  guard: first-tensor\n\n- op: isneginf", "  alternate:\n    launch: aclnnInplaceZero(out)\n"
        "  guard: first-tensor\n\n- op: isneginf", "alternate:", "isposinf", "`alternate` needs `when` and `launch`"),
    "alternate when that is not a bool": (
        "yaml/ops/selection.yaml", "    when: not_floating(self)\n    launch: aclnnInplaceZero(out)\n"
        "  guard: first-tensor\n\n- op: isneginf", "    when: self\n    launch: aclnnInplaceZero(out)\n"
        "  guard: first-tensor\n\n- op: isneginf", "launch: aclnnInplaceZero(out)", "isposinf",
        "alternate.when: `self` is a Tensor, not a bool"),
    "alternate launch of an unknown operator": (
        "yaml/ops/selection.yaml", "    launch: aclnnInplaceZero(out)\n  guard: first-tensor\n\n- op: isneginf",
        "    launch: aclnnInplaceZeros(out)\n  guard: first-tensor\n\n- op: isneginf", "aclnnInplaceZeros(out)",
        "isposinf", "entry point `aclnnInplaceZeros` has no prototype"),
    # argument transforms and the matrix size
    "wrap_dim of a tensor": (
        "yaml/ops/indexing.yaml", "launch: aclnnGather(self, wrap_dim(dim, self), index, out)",
        "launch: aclnnGather(self, wrap_dim(index, self), index, out)", "launch: aclnnGather(", "gather",
        "argument 2 of aclnnGather (const int64_t dim): argument 1 of `wrap_dim(index, self)` must be an int"),
    "zero_dim of an input onto the output": (
        "yaml/ops/selection.yaml", "invert, zero_dim(out))", "invert, zero_dim(test_elements))",
        "launch: aclnnIsInScalarTensor(", "isin.Scalar_Tensor",
        "`zero_dim(test_elements)` is an input but the operator writes this parameter"),
    "is_empty of an int": (
        "yaml/ops/indexing.yaml", "    when: is_empty(index)\n    launch: aclnnInplaceCopy(out, self)\n  guard: first-tensor\n\n# A",
        "    when: is_empty(dim)\n    launch: aclnnInplaceCopy(out, self)\n  guard: first-tensor\n\n# A",
        "launch: aclnnInplaceCopy(out, self)", "index_add", "alternate.when: argument 1 of `is_empty(dim)` must be a Tensor"),
    "matrix with one size": (
        "yaml/ops/factory.yaml", "    size: matrix(n, m)\n", "    size: matrix(n)\n", "size: matrix(n)", "eye.m",
        "out.size: `matrix(n)` takes 2 argument(s), not 1"),
    # the pooling, padding and product helpers
    "pool_pair of a bool": (
        "yaml/ops/pooling.yaml", "ceil_mode, count_include_pad, divisor_override or 0, 0, out)",
        "ceil_mode, count_include_pad, divisor_override or 0, 0, out)".replace("ceil_mode, count", "pool_pair(ceil_mode), count"),
        "pool_pair(ceil_mode)", "avg_pool2d", "argument 1 of `pool_pair(ceil_mode)` must be an int array"),
    "is_empty in a launch": (
        "yaml/ops/matmul.yaml", "  launch: aclnnMm(self, mat2, out, 0)\n", "  launch: aclnnMm(self, mat2, out, is_empty(self))\n",
        "launch: aclnnMm(self, mat2, out, is_empty(self))", "mm", "`is_empty` belongs in a when rule, not a launch one"),
    "padded of a Scalar": (
        "yaml/ops/padding.yaml", "    size: padded(self, pad)\n", "    size: padded(self, value)\n",
        "size: padded(self, value)", "constant_pad_nd", "argument 2 of `padded(self, value)` must be a SymInt array"),
    "inplace_launch outside a family": (
        "yaml/ops/unary.yaml", RELU, RELU.replace("  variants: [functional, inplace]\n", ""),
        "inplace_launch:", "relu", "`inplace_launch` belongs to a family entry"),
}


def _snapshot(ws):
    return {name: (os.stat(ws.output_path(name)).st_mtime_ns, data) for name, data in ws.outputs().items()}


@pytest.mark.parametrize("case", sorted(CASES))
def test_registry_error(ws, case):
    file, old, new, needle, op, message = CASES[case]
    assert ws.run().code == 0
    before = _snapshot(ws)
    ws.edit(file, old, new)

    run = ws.run()

    assert run.code == 2, run.err
    assert "nothing was written" in run.err
    assert message in run.err, run.err
    line = ws.line_of(file, needle) if needle else None
    location = f"{file}:{line}:" if line else f"{file}:"
    reported = [entry for entry in run.err.split("\n") if entry.startswith(location) and message in entry]
    assert reported, f"no `{location} ... {message}` in:\n{run.err}"
    if op:
        assert f" {op}: " in reported[0]
    assert "\n    fix: " in run.err
    assert _snapshot(ws) == before  # nothing written, not even touched


def test_handwritten_and_generated(ws):
    ws.edit("yaml/handwritten.yaml", "- op: zero_\n",
            "- op: exp\n  guard: first-tensor\n  file: csrc/handwritten/x.cc\n  impl: exp\n\n- op: zero_\n")
    run = ws.run()
    assert run.code == 2
    line = ws.line_of("yaml/handwritten.yaml", "- op: exp")
    generated = ws.line_of("yaml/ops/unary.yaml", "- op: exp")
    assert f"yaml/handwritten.yaml:{line}: exp: exp is both generated (at yaml/ops/unary.yaml:{generated})" in run.err
    assert "fix: remove one of the two entries" in run.err


def test_all_errors_at_once(ws):
    ws.edit("yaml/ops/unary.yaml", NEG, NEG.replace("guard: first-tensor", "guard: none"))
    ws.edit("yaml/ops/factory.yaml", "- op: zeros", "- op: zeroes")
    ws.edit("yaml/aclnn.yaml", "params: [const aclTensor* self, aclTensor* out]\n  outputs: [out]\naclnnNeg:",
            "params: [const aclTensr* self, aclTensor* out]\n  outputs: [out]\naclnnNeg:")
    run = ws.run()
    assert run.code == 2
    assert "problem(s)" in run.err
    assert "guard none without a `reason`" in run.err
    assert "has no operator `zeroes`" in run.err
    assert "cannot use parameter `const aclTensr* self`" in run.err
    assert not os.listdir(ws.out_dir) and not os.path.exists(ws.header_dir)


def test_none_needs_a_listed_reason_when_an_argument_names_a_device(ws):
    # neg's `self` names a device: its launch must run there, whatever reason is given.
    ws.edit("yaml/ops/unary.yaml", NEG,
            NEG.replace("guard: first-tensor", "guard: none\n  device_check: no-check\n  reason: a test"))
    run = ws.run()
    assert run.code == 2
    assert "guard none, but neg's arguments name a device (self)" in run.err
    assert "launches nothing" in run.err  # the fix lists the closed reasons


def test_none_with_a_listed_reason_is_accepted(ws):
    ws.edit("yaml/ops/unary.yaml", NEG,
            NEG.replace("guard: first-tensor", "guard: none\n  reason: launches nothing"))
    assert ws.run().code == 0
    report = ws.run("--report")
    assert "`launches nothing`" in report.out


# ---- structured ops, `check:` and `impl:` ------------------------------------------


def _torch() -> str:
    import torch

    return torch.__version__.split("+")[0]


def _refused(ws, file: str, needle: str, op: str, message: str, fix: str, before=None) -> None:
    """`python -m codegen` refuses the registry with `file:line: op: message` and its fix, writing nothing."""
    run = ws.run()
    assert run.code == 2, run.err
    assert "nothing was written" in run.err
    line = ws.line_of(file, needle)
    expected = f"{file}:{line}: {op}: {message}\n    fix: {fix}\n"
    assert expected in run.err + "\n", run.err
    if before is not None:
        assert _snapshot(ws) == before


# An `out:` rule on a structured op of each kind: functional (one output, several), out=, in place.
STRUCTURED_OUT = {
    # name: (file, entry head the rule is added after, op, meta class, the outputs the fix names)
    "functional": ("yaml/ops/unary.yaml", "- op: neg\n  variants: [functional, inplace, out]\n  shape: unary\n"
                   "  launch: aclnnNeg(self, out)\n", "neg", "at::meta::structured_neg", "out"),
    "several outputs": ("yaml/ops/reduction_more.yaml",
                        "- op: max.dim\n  variants: [functional, out]\n  shape: general\n"
                        "  launch: aclnnMaxDim(self, dim, keepdim, values, indices)\n",
                        "max.dim", "at::meta::structured_max_dim", "values, indices"),
    "out=": ("yaml/ops/binary_math.yaml",
             "- op: pow.Tensor_Tensor_out\n  shape: out\n  launch: aclnnPowTensorTensor(self, exponent, out)\n",
             "pow.Tensor_Tensor_out", "at::meta::structured_pow_Tensor_Tensor", "out"),
    # a family's out= form takes the functional form's rules without their dtype: still refused
    "out= of a family": ("yaml/ops/reduction_more.yaml",
                         "- op: max.dim\n  variants: [functional, out]\n  shape: general\n"
                         "  launch: aclnnMaxDim(self, dim, keepdim, values, indices)\n",
                         "max.dim_max", "at::meta::structured_max_dim", "max, max_values"),
    # mul_.Tensor out of mul's family, as an entry of its own (a family's in-place form has no rules)
    "in place": ("yaml/ops/binary.yaml",
                 "- op: mul_.Tensor\n  shape: inplace\n  launch: aclnnInplaceMul(self, other)\n",
                 "mul_.Tensor", "at::meta::structured_mul_Tensor", "self"),
}
# Edits made before the rule is added: (file, old, new) each.
STRUCTURED_OUT_SETUP = {
    "in place": [("yaml/ops/binary.yaml", "- op: mul.Tensor\n  variants: [functional, inplace, out]\n",
                  "- op: mul_.Tensor\n  shape: inplace\n  launch: aclnnInplaceMul(self, other)\n"
                  "  guard: first-tensor\n\n- op: mul.Tensor\n  variants: [functional, out]\n"),
                 ("yaml/ops/binary.yaml", "  inplace_launch: aclnnInplaceMul(self, other)\n"
                  "  inplace_wrapped_number: aclnnInplaceMuls(self, item(other))\n", "")],
}


@pytest.mark.parametrize("case", sorted(STRUCTURED_OUT))
def test_structured_op_with_out_rules_is_refused(ws, case):
    file, head, op, meta, outputs = STRUCTURED_OUT[case]
    for edit in STRUCTURED_OUT_SETUP.get(case, []):
        ws.edit(*edit)
    assert ws.run().code == 0
    before = _snapshot(ws)
    ws.edit(file, head, head + "  out:  # the refused rules\n    size: self\n    dtype: self\n")
    # at the line of the `out:` key
    _refused(ws, file, "out:  # the refused rules", op,
             f"{op} is structured in torch {_torch()}: its meta function ({meta}) computes the outputs' sizes "
             "and dtypes", f"remove `out:`; the launch names the outputs {outputs}", before)


def test_check_on_a_structured_op_runs_after_its_meta_function(ws):
    """A structured family's `check:` (what ATen's kernel checks beyond the meta function) is
    called by every form with the meta function's arguments, after it; op_checks.h declares it once
    with the meta function's parameters. Negative control: without `check:` no form calls it."""
    from codegen.main import generate
    from codegen.schemas import aten_schemas
    from codegen.registry import Paths

    head = "- op: neg\n  variants: [functional, inplace, out]\n  shape: unary\n  launch: aclnnNeg(self, out)\n"
    ws.edit("yaml/ops/unary.yaml", head, head + "  check: neg\n")
    assert ws.run().code == 0
    code = generate(Paths(ws.root), aten_schemas()).code
    for op in ("neg", "neg_", "neg.out"):
        assert "  op.meta(self);\n" in code[op], code[op]
        after_meta = code[op].split("  op.meta(self);\n")[1]
        assert "  flagos::check::neg(self);\n" in after_meta.split("FLAGOS_GUARDED_LAUNCH")[0], code[op]
    header = ws.read("csrc", "generated", "op_checks.h")
    assert header.count("void neg(") == 1
    comment = header.split("\nvoid neg(const at::Tensor & self);\n")[0].rsplit("\n", 1)[1]
    assert sorted(comment.removeprefix("// ").split(", ")) == ["neg", "neg.out", "neg_"]
    ws.edit("yaml/ops/unary.yaml", head + "  check: neg\n", head)
    code = generate(Paths(ws.root), aten_schemas()).code
    assert not any("flagos::check::neg" in code[op] for op in ("neg", "neg_", "neg.out"))


def test_check_on_a_structured_op_that_is_not_an_identifier_is_refused(ws):
    ws.edit("yaml/ops/matmul.yaml", "  check: mm\n", "  check: mm()\n")
    _refused(ws, "yaml/ops/matmul.yaml", "  check: mm()", "mm", "`check: mm()` is not a C++ function name",
             "name the check in lower_snake_case, after the op (dot, where)")


@pytest.mark.parametrize("name", ["dot()", "flagos::check::dot", "Dot Check", "class", "launch_device", "3"])
def test_check_that_is_not_an_identifier_is_refused(ws, name):
    ws.edit("yaml/ops/matmul.yaml", "  check: dot\n", f"  check: {name}\n")
    _refused(ws, "yaml/ops/matmul.yaml", f"  check: {name}", "dot", f"`check: {name}` is not a C++ function name",
             "name the check in lower_snake_case, after the op (dot, where)")


def test_a_handwritten_op_without_a_body_is_refused(ws):
    """The generator writes every handwritten op's wrapper and registration: an entry names its body."""
    ws.edit("yaml/handwritten.yaml", "  impl: zero_\n", "")
    _refused(ws, "yaml/handwritten.yaml", "- op: zero_", "zero_",
             "no `impl`: the generator writes every handwritten op's wrapper and registration, and calls its body",
             "add `impl: <name>` and define flagos::impl::<name>(const LaunchDevice& device, ...) in the file, as "
             "csrc/generated/impls.h declares it")


def test_fallthrough_names_known_keys_only(ws):
    ws.edit("yaml/handwritten.yaml", "  fallthrough: [Conjugate, Negative]\n", "  fallthrough: [Conjugate, CPU]\n")
    run = ws.run()
    assert run.code == 2
    assert "_copy_from: `fallthrough` names CPU: it lists dispatch keys among Conjugate, Negative" in run.err


def test_two_bodies_with_one_signature_and_two_results_are_refused(ws):
    """Ops that are not structured may share a body name only when C++ can overload it: var_mean's
    arguments are var's, its result is not."""
    ws.edit("yaml/handwritten.yaml", "  impl: var_mean_correction\n", "  impl: var_correction\n")
    run = ws.run()
    assert run.code == 2
    assert ("var_mean.correction: impl var_correction is also the body of var.correction (yaml/handwritten.yaml:"
            in run.err)
    assert "with the same arguments and another result: C++ cannot overload them" in run.err


@pytest.mark.parametrize("old,new,op,message,fix", [
    ("  impl: index_Tensor\n", "  impl: index-Tensor\n", "index.Tensor",
     "`impl: index-Tensor` is not a C++ function name",
     "name the body in lower_snake_case, as the structured group is named (gather, upsample_nearest2d)"),
    ("  impl: zero_\n", "  impl: zero_\n  composite: yes please\n", "zero_",
     "`composite: yes please` is not true or false",
     "write `composite: true` (the body composes other flagos ops) or leave it out"),
], ids=["impl not an identifier", "composite not a boolean"])
def test_a_bad_handwritten_key_is_refused(ws, old, new, op, message, fix):
    ws.edit("yaml/handwritten.yaml", old, new)
    _refused(ws, "yaml/handwritten.yaml", new.strip().split("\n")[-1], op, message, fix)


def test_one_impl_for_two_meta_classes_is_refused(ws):
    """isin.Tensor_Tensor's meta function is not index.Tensor's: one body cannot take both groups' arguments."""
    index = ws.line_of("yaml/handwritten.yaml", "- op: index.Tensor")
    text = ws.read("yaml", "handwritten.yaml")
    entry = text[text.index("- op: isin.Tensor_Tensor\n"):]
    entry = entry[: entry.index("\n\n") + 1]
    ws.edit("yaml/handwritten.yaml", entry,
            entry.replace("impl: isin_Tensor_Tensor", "impl: index_Tensor")
            .replace("file: csrc/handwritten/isin.cc", "file: csrc/handwritten/index.cc"))
    _refused(ws, "yaml/handwritten.yaml", "- op: isin.Tensor_Tensor", "isin.Tensor_Tensor",
             f"impl index_Tensor is also the body of index.Tensor (yaml/handwritten.yaml:{index}), whose "
             "meta function is at::meta::structured_index_Tensor, not at::meta::structured_isin_Tensor_Tensor",
             "give each structured group its own body")


def test_one_impl_in_two_files_is_refused(ws):
    text = ws.read("yaml", "handwritten.yaml")
    isin = text[: text.index("- op: isin.Tensor_Tensor\n")].count("\n") + 1
    entry = text[text.index("- op: isin.Tensor_Tensor_out\n"):]
    entry = entry[: entry.index("\n\n") + 1]
    ws.edit("yaml/handwritten.yaml", entry,
            entry.replace("file: csrc/handwritten/isin.cc", "file: csrc/handwritten/isin_out.cc"))
    _refused(ws, "yaml/handwritten.yaml", "- op: isin.Tensor_Tensor_out", "isin.Tensor_Tensor_out",
             f"impl isin_Tensor_Tensor is defined in csrc/handwritten/isin.cc (yaml/handwritten.yaml:{isin})",
             "write `file: csrc/handwritten/isin.cc`")


def test_family_forms_are_reported_by_their_own_names(ws):
    """A problem of one form (neg.out is structured: `out:` rules are refused) names that form, at the
    family entry's line; a problem of the shared launch is reported once, for the functional form."""
    ws.edit("yaml/ops/unary.yaml", NEG, NEG.replace("aclnnNeg(self, out)", "aclnnNeg(self)"))
    run = ws.run()
    assert run.code == 2
    line = ws.line_of("yaml/ops/unary.yaml", "aclnnNeg(self)")
    reported = [e for e in run.err.split("\n") if "aclnnNeg takes 2 argument(s)" in e]
    assert reported == [f"yaml/ops/unary.yaml:{line}: neg: launch: aclnnNeg takes 2 argument(s), the launch passes 1"]


def test_family_fix_names_the_functional_overload(ws):
    ws.edit("yaml/ops/unary.yaml", NEG, NEG.replace("op: neg", "op: neg.out"))
    _refused(ws, "yaml/ops/unary.yaml", "op: neg.out", "neg.out", "neg.out is not the functional form of its family",
             "name the functional overload (`op: neg`) and list the forms under `variants`")


@pytest.mark.parametrize("op, forms", [
    ("atan2", ("atan2", "atan2_", "atan2.out")),
    ("fmod.Tensor", ("fmod.Tensor", "fmod_.Tensor", "fmod.Tensor_out")),
    ("max.dim", ("max.dim", "max.dim_max")),
])
def test_family_forms_take_torchs_overload_names(ws, op, forms):
    """Each form is registered under the overload torchgen groups with the functional one."""
    from codegen.registry import Paths, load_registry

    ops = {entry.op: entry for entry in load_registry(Paths(ws.root)).ops}
    assert set(forms) <= set(ops)
    assert len({ops[form].loc for form in forms}) == 1  # one entry
    # Negative control: a family without its in-place form registers no in-place op.
    if len(forms) == 3:
        file = ops[op].loc.file
        ws.edit(file, f"- op: {op}\n  variants: [functional, inplace, out]\n", f"- op: {op}\n  variants: [functional, out]\n")
        ops = {entry.op for entry in load_registry(Paths(ws.root)).ops}
        assert forms[1] not in ops and forms[2] in ops


def test_enums_render_codes_and_atens_message(ws):
    """gelu's wrapper passes approximate's code; gelu_backward's passes the checked string."""
    from codegen.main import generate
    from codegen.schemas import aten_schemas
    from codegen.registry import Paths

    code = generate(Paths(ws.root), aten_schemas()).code
    assert ('flagos::gen::string_code<int64_t>("gelu", "approximate", approximate, '
            '{{"none", int64_t{0}}, {"tanh", int64_t{1}}}, "either none or tanh")') in code["gelu"]
    assert "int64_t{1}" in code["gelu_"] and "gelu_" in code["gelu_"]
    assert ('string_code<std::string_view>("gelu_backward.grad_input", "approximate", approximate, '
            '{{"none", std::string_view("none")}, {"tanh", std::string_view("tanh")}}') in code["gelu_backward.grad_input"]


def test_optional_string_enums_give_none_its_code(ws):
    """div.Tensor_mode passes rounding_mode's code, 0 when it is None; the string list leaves None out."""
    from codegen.main import generate
    from codegen.schemas import aten_schemas
    from codegen.registry import Paths

    code = generate(Paths(ws.root), aten_schemas()).code
    mode = ('flagos::gen::string_code<int64_t>("div.Tensor_mode", "rounding_mode", rounding_mode, int64_t{0}, '
            '{{"trunc", int64_t{1}}, {"floor", int64_t{2}}}, "one of trunc, floor, None")')
    assert f"aclnnDivMod, self, other, {mode}, out);" in code["div.Tensor_mode"]
    assert f"aclnnInplaceDivMods, self, flagos::gen::wrapped_value(other), {mode.replace('div.Tensor_mode', 'div_.Tensor_mode')});" \
        in code["div_.Tensor_mode"]


def test_argument_transforms_render(ws):
    """The transforms the sorting, upsampling and loss entries use, as C++."""
    from codegen.main import generate
    from codegen.schemas import aten_schemas
    from codegen.registry import Paths

    code = generate(Paths(ws.root), aten_schemas()).code
    assert ("aclnnSort, flagos::gen::at_least_1d(self), stable.value_or(false), at::maybe_wrap_dim(dim, self.dim()), "
            "descending, flagos::gen::at_least_1d(values), flagos::gen::at_least_1d(indices));") in code["sort.stable"]
    # the empty-tensor test names the outputs, not their views
    assert "nothing_to_write(values, indices)" in code["sort.values_stable"]
    nearest = code["upsample_nearest2d"]
    assert ("  if ((scales_h.has_value() || scales_w.has_value())) {\n    FLAGOS_GUARDED_LAUNCH(launch_device, "
            "aclnnUpsampleNearest2dV2, self, C10_AS_INTARRAYREF_SLOW(output_size), scales_h.value_or(double{0.0}), "
            "scales_w.value_or(double{0.0}), out);") in nearest
    assert "aclnnMseLoss, flagos::gen::as_dtype_of(self, out), flagos::gen::as_dtype_of(target, out)" in code["mse_loss"]
    assert "as_dtype_of(grad_output, grad_input)" in code["mse_loss_backward.grad_input"]


def test_alternate_launch_is_guarded_by_its_condition(ws):
    """isposinf.out writes false for integer inputs (aclnnInplaceZero on its out= argument) before the
    launch CANN would refuse; negative control: without `alternate` the wrapper has no such branch."""
    from codegen.main import generate
    from codegen.schemas import aten_schemas
    from codegen.registry import Paths

    code = generate(Paths(ws.root), aten_schemas()).code["isposinf.out"]
    branch = ("  if (!at::isFloatingType(self.scalar_type())) {\n"
              "    FLAGOS_GUARDED_LAUNCH(launch_device, aclnnInplaceZero, out);\n    return out;\n  }\n")
    assert branch + "  FLAGOS_GUARDED_LAUNCH(launch_device, aclnnIsPosInf, self, out);" in code
    ws.edit("yaml/ops/selection.yaml", "  launch: aclnnIsPosInf(self, out)\n  alternate:\n    when: not_floating(self)\n"
            "    launch: aclnnInplaceZero(out)\n", "  launch: aclnnIsPosInf(self, out)\n")
    assert "aclnnInplaceZero" not in generate(Paths(ws.root), aten_schemas()).code["isposinf.out"]
