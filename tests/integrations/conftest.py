"""Helpers of the integration tests: code that must start from a fresh
interpreter (an import order, a launcher's environment) runs in a
subprocess that imports this worktree's torch_fl, with the integration on
unless the test says otherwise."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def fresh_python(tmp_path):
    """run(code, *args, env=None, stdin=None): `python -c code *args` in tmp_path; fails the test if it fails."""

    def run(code: str, *args: str, env: dict | None = None, stdin: str | None = None) -> str:
        full_env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
        full_env.pop("FLAGOS_HF_INTEGRATION", None)
        full_env.update(env or {})
        done = subprocess.run([sys.executable, "-c", code, *args], env=full_env, input=stdin, capture_output=True,
                              text=True, timeout=3600, cwd=str(tmp_path))
        assert done.returncode == 0, f"exit code {done.returncode}\nstderr:\n{done.stderr[-4000:]}"
        return done.stdout

    return run
