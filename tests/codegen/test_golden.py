"""Golden wrappers, one per device policy, per structured kind (functional, out=, in place; ATen's
meta class) and per kind of op that is not structured (`check:`, check_written, output rules): what
the generator writes for each.

Set UPDATE_GOLDEN=1 to rewrite tests/codegen/golden/ after a deliberate change
(and review the diff).
"""

from __future__ import annotations

import os

import pytest

from codegen.main import generate
from codegen.registry import Paths
from codegen.schemas import aten_schemas

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")


POLICIES = {
    # golden file: (op, registry edit or None)
    "first_tensor.cpp": ("add.Tensor", None),
    "explicit_arg_tensor.cpp": ("addmm", None),
    "explicit_arg_device.cpp": ("full", None),
    "none.cpp": ("neg", ("yaml/ops/unary.yaml", "  guard: first-tensor\n\n- op: exp",
                         "  guard: none\n  reason: launches nothing\n\n- op: exp")),
    # structured in torch: ATen's meta class checks the arguments and computes the outputs
    "out.cpp": ("add.out", None),
    "inplace.cpp": ("mul_.Tensor", None),
    # not structured: the registry's `check:`, flagos::check_written, the registry's output rules
    "check.cpp": ("dot", None),
    "out_not_structured.cpp": ("where.self_out", None),
    "inplace_not_structured.cpp": ("relu_", None),
    # shape general: several outputs (structured, then not); optional (`when`) outputs
    "general_multi_output.cpp": ("max.dim", None),
    "general_multi_output_not_structured.cpp": ("native_layer_norm", None),
    "general_optional_outputs.cpp": ("native_layer_norm_backward", None),
    # a handwritten structured op (`impl:`): the generated wrapper calls its body
    "impl_functional.cpp": ("isin.Tensor_Tensor", None),
    "impl_out.cpp": ("isin.Tensor_Tensor_out", None),
}


@pytest.mark.parametrize("golden", sorted(POLICIES))
def test_golden(ws, golden):
    op, edit = POLICIES[golden]
    if edit:
        ws.edit(*edit)
    code = generate(Paths(ws.root), aten_schemas()).code[op] + "\n"
    path = os.path.join(GOLDEN, golden)
    if os.environ.get("UPDATE_GOLDEN"):
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(code)
    with open(path, encoding="utf-8") as handle:
        assert code == handle.read()


def test_policies_differ_only_in_their_lines(ws):
    """The none policy skips the guard's device resolution and nothing else."""
    paths = Paths(ws.root)
    guarded = generate(paths, aten_schemas()).code["neg"]
    ws.edit(*POLICIES["none.cpp"][1])
    unguarded = generate(paths, aten_schemas()).code["neg"]
    changed = {line for line in guarded.splitlines()} ^ {line for line in unguarded.splitlines()}
    assert changed == {
        "// guard first-tensor: the first flagos tensor among self",
        "// guard none: launches nothing",
        "  const flagos::LaunchDevice launch_device = flagos::launch_device_of(self);",
        "  const flagos::LaunchDevice launch_device = flagos::no_launch_device();",
    }
