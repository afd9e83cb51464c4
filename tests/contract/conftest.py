"""Helpers for the PyTorch device-contract tests: crash-prone code runs in a
fresh interpreter, so that a regression fails its test instead of killing
the suite."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_python(code: str, timeout: int = 120, env: dict | None = None) -> subprocess.CompletedProcess:
    """Runs `code` (import torch, torch_fl first) in a subprocess; the result carries its exit code,
    which is negative when a signal (SIGSEGV: -11) killed it. torch.compile's caches go to a fresh
    folder, so that no artifact of another build is reused."""
    program = "import torch\nimport torch_fl\n" + textwrap.dedent(code)
    with tempfile.TemporaryDirectory() as cache:
        return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=timeout,
                              cwd=ROOT, env={**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache, **(env or {})})


@pytest.fixture
def python():
    def check(code: str, **kwargs) -> str:
        result = run_python(code, **kwargs)
        assert result.returncode == 0, (
            f"exit code {result.returncode}{' (killed by a signal)' if result.returncode < 0 else ''}\n"
            f"stdout:\n{result.stdout}\nstderr:\n{result.stderr[-4000:]}")
        return result.stdout
    return check


@pytest.fixture
def python_run():
    """run_python itself, for a test that reads the child's stderr or expects it to fail."""
    return run_python
