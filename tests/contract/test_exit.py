"""A process that exits with work still queued on flagos streams, as a script
that never calls torch.flagos.synchronize() does. The simulated streams run on
worker threads: a kernel still running while C++ static destructors free
oneDNN's caches aborted the process ("corrupted double-linked list") or hung
it on a destroyed lock, so each case runs in a subprocess."""

from __future__ import annotations

import pytest

# Queues more than ten seconds of oneDNN-backed kernels (matmul, gelu) on a
# device's default stream and a side stream: the simulator's old exit handler
# gave up draining after ten seconds and let the workers run on.
QUEUE_AND_EXIT = """
    import torch.nn.functional as F
    {before}
    side = torch.flagos.Stream(device=1)
    x = torch.randn(1024, 1024, device="flagos:1")
    for _ in range(100):
        F.gelu(x @ x)
        with torch.flagos.stream(side):
            F.gelu(x @ x)
    print("queued", torch.flagos.current_device())
"""


NOT_RUN = "queued stream items not run"  # the simulator's exit handler, when it drops work


@pytest.mark.parametrize("path", ["interpreter_exit", "python_atexit_cleared"])
def test_exit_with_queued_work_does_not_crash(python_run, path):
    # torch_fl's module waits for every used device at the end of interpreter
    # finalization, from C (Py_AtExit): clearing Python's atexit handlers
    # cannot remove it. Without that wait, the simulator's own C exit handler
    # ran too late for a kernel already running (about 1 run in 20 crashed).
    before = "" if path == "interpreter_exit" else "import atexit; atexit._clear()"
    result = python_run(QUEUE_AND_EXIT.format(before=before), timeout=240)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip() == "queued 0"
    assert NOT_RUN not in result.stderr  # every queued kernel ran before exit


# Plain ATen adds (no lazily built oneDNN state), about a second of them.
QUEUE_ADDS = """
    x = torch.ones(1 << 20, device="flagos:1")
    for _ in range(2000):
        x.add_(1)
    {exit}
"""


def test_negative_control_exit_without_interpreter_finalization(python_run):
    # C exit() without finalizing the interpreter skips Py_AtExit, which is the
    # wait under test: the simulator's handler then finds the adds queued and
    # says so. (Asserted on its message only: dropping work is the point.)
    result = python_run(QUEUE_ADDS.format(exit="import ctypes; ctypes.CDLL(None).exit(0)"), timeout=240)
    assert NOT_RUN in result.stderr, result.stderr[-4000:]
    # The same script ending normally runs all of them.
    result = python_run(QUEUE_ADDS.format(exit=""), timeout=240)
    assert result.returncode == 0 and NOT_RUN not in result.stderr, result.stderr[-4000:]
