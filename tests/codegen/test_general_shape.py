"""Shape general: several outputs, optional (`when`) outputs, out= forms; its registry errors."""

from __future__ import annotations

import pytest

from codegen.main import generate
from codegen.registry import Paths
from codegen.schemas import aten_schemas

MAX_DIM = """- op: max.dim
  shape: general
  launch: aclnnMaxDim(self, dim, keepdim, values, indices)
  out:
    - name: values
      size: reduced(self, dim, keepdim)
      dtype: self
    - name: indices
      size: reduced(self, dim, keepdim)
      dtype: int64
"""
FILE = "yaml/ops/reduction_more.yaml"

ERRORS = {
    # name: (old, new, needle of the reported line, message fragment)
    "an output missing": (
        MAX_DIM, MAX_DIM.split("    - name: indices")[0].replace("values, indices)", "values, values)"),
        "out:", "max.dim returns 2 tensor(s); `out` describes 1"),
    "an output named like an argument": (
        MAX_DIM, MAX_DIM.replace("name: indices", "name: dim").replace("values, indices)", "values, dim)"),
        "- name: dim", "output name `dim` is also an argument of max.dim"),
    "an output without dtype": (
        MAX_DIM, MAX_DIM.replace("      dtype: int64\n", ""), "- name: indices",
        "output `indices` is allocated: it needs `size` and `dtype`"),
    "out= outputs not the out= arguments": (
        "    - name: max_values\n", "    - name: max_valuez\n", "out:", "an out= op's outputs are its out= arguments"),
    "when that is not a bool": (
        "      dtype: bias or input\n      when: flag(output_mask, 2)",
        "      dtype: bias or input\n      when: input", "when: input", "`input` is a Tensor, not a bool"),
}


@pytest.mark.parametrize("case", sorted(k for k, v in ERRORS.items() if v[3]))
def test_general_registry_error(ws, case):
    old, new, needle, message = ERRORS[case]
    file = "yaml/ops/norm.yaml" if "when" in case else FILE
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
    head = "- op: amax\n  shape: reduction\n  launch: aclnnAmax(self, reduction_dims(dim, self), keepdim, out)\n  out:\n"
    ws.edit("yaml/ops/reduction.yaml", head + "    size: reduced(self, dim, keepdim)\n    dtype: self\n",
            head + "    - name: out\n      size: reduced(self, dim, keepdim)\n      dtype: self\n")
    run = ws.run()
    assert run.code == 2
    assert "amax: shape reduction has one output: `out` must be a mapping" in run.err, run.err


def test_general_wrappers(ws):
    code = generate(Paths(ws.root), aten_schemas()).code
    max_dim = code["max.dim"]
    assert "::std::tuple<at::Tensor,at::Tensor> wrapper_max_dim(" in max_dim
    assert "at::Tensor indices = flagos::empty_on(launch_device, flagos::gen::reduced_sizes(self, dim, keepdim), at::kLong);" in max_dim
    assert "FLAGOS_GUARDED_LAUNCH(launch_device, aclnnMaxDim, self, dim, keepdim, values, indices);" in max_dim
    assert "return {values, indices};" in max_dim
    out = code["max.dim_max"]
    assert "at::native::resize_output(max_values, flagos::gen::reduced_sizes(self, dim, keepdim));" in out
    assert "return {max, max_values};" in out
    backward = code["native_layer_norm_backward"]
    assert "at::Tensor grad_weight = (output_mask[1]) ? flagos::empty_on(" in backward
    assert "weight.value_or(input).scalar_type()) : at::Tensor();" in backward
    assert "flagos::launch_device_of(input)" in backward
    argmax = code["argmax"]
    assert "flagos::gen::flat_if_none(out, dim)" in argmax and "dim.value_or(int64_t{0})" in argmax
