"""benchmarks/profiler_overhead.py runs (a smoke test: its timings are never judged)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch_fl")

REPO = Path(__file__).resolve().parents[2]


def test_profiler_overhead_smoke():
    run = subprocess.run([sys.executable, "-m", "benchmarks.profiler_overhead", "--n", "20", "--reps", "2"],
                         cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-4000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert set(result["ns_per_op"]) == {"off", "cpu", "device"}
    assert all(v["n"] == 2 and v["median"] > 0 for v in result["ns_per_op"].values())
