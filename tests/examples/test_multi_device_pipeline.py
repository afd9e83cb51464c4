"""The README's main job: the multi-device pipeline matches the CPU with the
guards on, and fails as upstream did with them off (negative control)."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("torch_fl")

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "multi_device_pipeline.py")
README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def run(*args):
    return subprocess.run([sys.executable, EXAMPLE, *args], capture_output=True, text=True, timeout=300)


def test_pipeline_matches_cpu_without_set_device():
    result = run()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "OK: matches the CPU run" in result.stdout
    assert "rejected launches: 0" in result.stdout
    assert "ops on the CPU fallback: 0" in result.stdout
    # The README shows this output: it must be what the example prints.
    with open(README, encoding="utf-8") as handle:
        shown = handle.read().split("It prints\n\n```\n", 1)[1].split("```", 1)[0]
    assert result.stdout == shown, "README.md's output of the main job is stale; paste:\n" + result.stdout


def test_negative_control_error_mode():
    result = run("--no-guards")
    assert result.returncode == 1
    assert "lives on device 0 but the launch runs on device 3" in result.stdout


def test_negative_control_nan_mode():
    """Without guards, kernels launch on the wrong device and (nan mode) write NaN, unless a
    cross-device copy's asynchronous memcpy is refused first: the runtime's stream/device
    rule is not subject to nan mode, as on CANN."""
    result = run("--no-guards", "--mismatch", "nan")
    assert result.returncode == 1
    assert "finite: False" in result.stdout or "but the current device is" in result.stdout, result.stdout
    assert "mismatched launches: 0" not in result.stdout
