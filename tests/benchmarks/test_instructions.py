"""benchmarks.instructions: its profiled loops launch every op on the device,
and the counting (which needs valgrind, absent in CI) refuses clearly
without it."""

import shutil

import pytest
import torch

torch_fl = pytest.importorskip("torch_fl")

from benchmarks import instructions  # noqa: E402


def test_profiled_loops_launch_every_op_on_the_device():
    torch_fl.sim.reset_stats()
    instructions._loops(3)
    stats = torch_fl.sim.stats()
    # each op: 50 warm-up calls and 3 profiled ones, one launch each, none
    # on the CPU fallback (the tensors' creation launches too)
    assert stats["launches"][0] >= len(instructions.OPS) * 53
    assert stats["fallback_ops"] == {}
    assert stats["rejected_launches"] == 0


@pytest.mark.skipif(shutil.which("valgrind") is not None, reason="valgrind is installed here")
def test_counting_without_valgrind_says_what_is_missing():
    with pytest.raises(SystemExit, match="needs valgrind"):
        instructions.count(1)
