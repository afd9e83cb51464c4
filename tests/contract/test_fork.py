"""fork() after the parent used a flagos device, as multiprocessing's default
start method on Linux does. The runtime's stream workers and locks do not
survive fork(): a child that used the device waited forever. As with CUDA,
such a child gets a clear error that names the 'spawn' start method. Each case
runs in a subprocess with a timeout, so a hang fails instead of stalling the
suite."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CHILD_TRIES = """
    import os
    {parent}
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            {child}
            message = "ran"
        except RuntimeError as e:
            message = str(e)
        os.write(write, message.encode())
        os._exit(0)
    os.close(write)
    message = os.read(read, 4096).decode()
    os.waitpid(pid, 0)
    print(message)
    print("parent still works", (x + 1).sum().item() if "x" in dir() else "")
"""

USED = 'x = torch.ones(4, device="flagos:1"); (x * 2).sum().item()'


@pytest.mark.parametrize("child", [
    'torch.ones(2, device="flagos:0")',             # a factory
    "(x + 1).sum().item()",                          # an op on an inherited tensor
    "x.cpu()",                                       # a copy to the host
    "torch.flagos.synchronize(1)",
], ids=["factory", "op", "copy", "synchronize"])
def test_a_child_forked_after_use_gets_a_clear_error(python, child):
    out = python(CHILD_TRIES.format(parent=USED, child=child), timeout=60)
    first, second = out.splitlines()[:2]
    assert "forked subprocess" in first and "'spawn'" in first, first
    assert second == "parent still works 8.0"


def test_a_child_forked_before_any_use_can_use_the_device(python):
    # Negative control: importing torch_fl does not make children unusable.
    out = python(CHILD_TRIES.format(parent="", child='torch.ones(2, device="flagos:0").sum().item()'),
                 timeout=60)
    assert out.splitlines()[0] == "ran"


def test_spawned_workers_use_the_device(tmp_path):
    # The route the error names works: spawn needs the workers' code in a file.
    script = tmp_path / "spawn_workers.py"
    script.write_text(textwrap.dedent("""
        import torch
        import torch_fl
        import torch.multiprocessing as mp

        def work(i):
            return (torch.ones(3, device=f"flagos:{i}") * i).sum().item()

        if __name__ == "__main__":
            torch.ones(1, device="flagos:0")
            with mp.get_context("spawn").Pool(2) as pool:
                print(pool.map(work, [1, 2]))
    """))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "[3.0, 6.0]"
