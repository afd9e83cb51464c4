"""benchmarks.instructions: its profiled loops run on the device, and the
counting (which needs valgrind, absent in CI) refuses clearly without it."""

import shutil

import pytest
import torch

pytest.importorskip("torch_fl")

from benchmarks import instructions  # noqa: E402


def test_profiled_loops_run_every_op_on_the_device():
    before = torch.flagos.memory_stats(0)["allocation.all.allocated"]
    instructions._loops(3)
    # each op's warm-up and loop allocated its outputs on flagos:0
    assert torch.flagos.memory_stats(0)["allocation.all.allocated"] - before >= len(instructions.OPS) * 3


@pytest.mark.skipif(shutil.which("valgrind") is not None, reason="valgrind is installed here")
def test_counting_without_valgrind_says_what_is_missing():
    with pytest.raises(SystemExit, match="needs valgrind"):
        instructions.count(1)
