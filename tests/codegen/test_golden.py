"""Golden wrappers, one per device policy: what the generator writes for each.

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
    "out.cpp": ("add.out", None),
    "inplace.cpp": ("mul_.Tensor", None),
    # shape general: several outputs; optional (`when`) outputs
    "general_multi_output.cpp": ("max.dim", None),
    "general_optional_outputs.cpp": ("native_layer_norm_backward", None),
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
