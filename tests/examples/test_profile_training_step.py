"""examples/profile_training_step.py and docs/render_trace.py: the profiler's
table has device time, and the drawing of its Chrome trace has a row per
device stream."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch_fl")

REPO = Path(__file__).resolve().parents[2]


def test_profile_example_and_its_drawing(tmp_path):
    trace, svg = tmp_path / "trace.json", tmp_path / "trace.svg"
    run = subprocess.run([sys.executable, str(REPO / "examples" / "profile_training_step.py"), str(trace)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-4000:]
    assert "Self FLAGOS" in run.stdout and "aclnnAddmm" in run.stdout, run.stdout
    draw = subprocess.run([sys.executable, str(REPO / "docs" / "render_trace.py"), str(trace), str(svg)],
                          capture_output=True, text=True, timeout=120)
    assert draw.returncode == 0, draw.stderr
    text = svg.read_text()
    assert "flagos:0 stream 0" in text and "flagos:1 stream 0" in text
    assert "aclnnAddmm" in text
