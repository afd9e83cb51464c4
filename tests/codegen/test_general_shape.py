"""Shape general: several outputs, optional (`when`) outputs, out= forms; its registry errors."""

from __future__ import annotations

import pytest

from codegen.main import generate
from codegen.registry import Paths
from codegen.schemas import aten_schemas

# native_layer_norm is not structured in torch: its entry lists its three
# outputs' rules. (max.dim, a structured op, has no `out:` any more: ATen's
# meta function computes its outputs.)
LAYER_NORM = """- op: native_layer_norm
  shape: general
  launch: aclnnLayerNorm(input, normalized_shape, weight, bias, eps, out, mean, rstd)
  out:
    - name: out
      size: input
      dtype: input
    - name: mean
      size: norm_stats(input, normalized_shape)
      dtype: norm_stat_type(input, weight)
    - name: rstd
      size: norm_stats(input, normalized_shape)
      dtype: norm_stat_type(input, weight)
"""
FILE = "yaml/ops/norm.yaml"
# addr.out is not structured: a mapping `out:` names its single out= argument.
ADDR = "- op: addr\n  variants: [functional, out]\n"
ADDR_OUT = ("- op: addr.out\n  shape: general\n  launch: aclnnAddr(self, vec1, vec2, beta, alpha, out)\n"
            "  out:\n    size: outer(vec1, vec2)\n  check: addr\n  guard: explicit-arg\n  guard_arg: vec1\n\n")

ERRORS = {
    # name: (file, old, new, needle of the reported line, message fragment)
    "an output missing": (
        FILE, LAYER_NORM, LAYER_NORM.split("    - name: rstd")[0].replace("out, mean, rstd)", "out, mean, mean)"),
        "out:", "native_layer_norm returns 3 tensor(s); `out` describes 2"),
    "an output named like an argument": (
        FILE, LAYER_NORM,
        LAYER_NORM.replace("name: rstd", "name: bias").replace("out, mean, rstd)", "out, mean, bias)"),
        "- name: bias", "output name `bias` is also an argument of native_layer_norm"),
    "an output without dtype": (
        FILE, LAYER_NORM, LAYER_NORM.replace("    - name: mean\n      size: norm_stats(input, normalized_shape)\n"
                                             "      dtype: norm_stat_type(input, weight)\n",
                                             "    - name: mean\n      size: norm_stats(input, normalized_shape)\n"),
        "- name: mean", "output `mean` is allocated: it needs `size` and `dtype`"),
    "out= outputs not the out= arguments": (
        "yaml/ops/linalg.yaml", ADDR, ADDR_OUT.replace("    size:", "    - name: result\n      size:") + ADDR.replace(
            "functional, out", "functional"),
        "- name: result", "an out= op's outputs are its out= arguments (out), not result"),
    "when that is not a bool": (
        FILE, "      dtype: bias or input\n      when: flag(output_mask, 2)",
        "      dtype: bias or input\n      when: input", "when: input", "`input` is a Tensor, not a bool"),
}


@pytest.mark.parametrize("case", sorted(k for k, v in ERRORS.items() if v[4]))
def test_general_registry_error(ws, case):
    file, old, new, needle, message = ERRORS[case]
    ws.edit(file, old, new)
    run = ws.run()
    assert run.code == 2, run.err
    assert message in run.err, run.err
    if needle:
        line = ws.line_of(file, needle)
        assert any(entry.startswith(f"{file}:") and message in entry for entry in run.err.split("\n")), run.err
        assert line is not None
    assert "nothing was written" in run.err


def test_list_out_only_for_general(ws):
    # relu (shape unary) is not structured: it keeps an `out:` mapping
    head = ("- op: relu\n  variants: [functional, inplace]\n  shape: unary\n  launch: aclnnRelu(self, out)\n"
            "  inplace_launch: aclnnInplaceRelu(self)\n  out:\n")
    ws.edit("yaml/ops/unary.yaml", head + "    size: self\n    dtype: self\n",
            head + "    - name: out\n      size: self\n      dtype: self\n")
    run = ws.run()
    assert run.code == 2
    assert "relu: shape unary has one output: `out` must be a mapping" in run.err, run.err


def test_general_wrappers(ws):
    code = generate(Paths(ws.root), aten_schemas()).code
    # structured in torch: ATen's meta function hands back both outputs
    max_dim = code["max.dim"]
    assert "::std::tuple<at::Tensor,at::Tensor> wrapper_max_dim(" in max_dim
    assert "flagos::StructuredFunctional<at::meta::structured_max_dim, 2> op(launch_device);" in max_dim
    assert "op.meta(self, dim, keepdim);" in max_dim
    assert "at::Tensor& values = op.outputs[0];" in max_dim
    assert "at::Tensor& indices = op.outputs[1];" in max_dim
    assert "FLAGOS_GUARDED_LAUNCH(launch_device, aclnnMaxDim, self, dim, keepdim, values, indices);" in max_dim
    assert "return {std::move(values), std::move(indices)};" in max_dim
    out = code["max.dim_max"]
    assert "flagos::StructuredOut<at::meta::structured_max_dim, 2> op(max, max_values);" in out
    assert 'op.check_written({{"self", self}});' in out
    assert "return {max, max_values};" in out
    # not structured: each output by its own rule, out= arguments resized
    layer_norm = code["native_layer_norm"]
    assert "::std::tuple<at::Tensor,at::Tensor,at::Tensor> wrapper_native_layer_norm(" in layer_norm
    assert ("at::Tensor rstd = flagos::empty_on(launch_device, flagos::gen::norm_stat_sizes(input, "
            "C10_AS_INTARRAYREF_SLOW(normalized_shape)), flagos::gen::norm_stat_type(input, weight));") in layer_norm
    assert "FLAGOS_GUARDED_LAUNCH(launch_device, aclnnLayerNorm, input, C10_AS_INTARRAYREF_SLOW(normalized_shape), " \
           "weight, bias, eps, out, mean, rstd);" in layer_norm
    assert "return {out, mean, rstd};" in layer_norm
    addr_out = code["addr.out"]
    assert "at::native::resize_output(out, flagos::gen::outer_sizes(vec1, vec2));" in addr_out
    assert "return out;" in addr_out
    backward = code["native_layer_norm_backward"]
    assert "at::Tensor grad_weight = (output_mask[1]) ? flagos::empty_on(" in backward
    assert "weight.value_or(input).scalar_type()) : at::Tensor();" in backward
    assert "flagos::launch_device_of(input)" in backward
    argmax = code["argmax"]
    assert "flagos::gen::flat_if_none(out, dim)" in argmax and "dim.value_or(int64_t{0})" in argmax
