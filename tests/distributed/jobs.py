"""Starting the ranks of a tests/distributed job: each rank is a subprocess
with RANK, WORLD_SIZE, a FileStore path and a result folder in its
environment, killed if the job outlives its timeout."""

from __future__ import annotations

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def launch(tmp_path, scenarios: str, world: int, timeout: float = 240, pg_timeout: float = 60, env=None,
           script: str = "worker.py"):
    """Starts `world` ranks of `script` like torchrun does; returns their exit codes and results."""
    results = tmp_path / f"{scenarios.replace(',', '+')}-{world}"
    results.mkdir()
    base = dict(os.environ, WORLD_SIZE=str(world), STORE_FILE=str(results / "store"), RESULT_DIR=str(results),
                FLAGOS_SIM_DEVICES=str(world + 1), TEST_PG_TIMEOUT=str(pg_timeout), HCCL_CONNECT_TIMEOUT="60",
                PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), **(env or {}))
    base.pop("HCCL_EXEC_TIMEOUT", None)
    procs = [subprocess.Popen([sys.executable, os.path.join(HERE, script), scenarios], cwd=ROOT,
                              env=dict(base, RANK=str(rank)), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) for rank in range(world)]
    outputs = []
    try:
        for proc in procs:
            outputs.append(proc.communicate(timeout=timeout)[0])
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    found = {}
    for rank in range(world):
        path = results / f"{rank}.json"
        found[rank] = json.loads(path.read_text()) if path.exists() else None
    return [p.returncode for p in procs], found, outputs


def assert_all_ok(codes, found, outputs, scenario):
    for rank, code in enumerate(codes):
        result = (found[rank] or {}).get(scenario) or {}
        detail = result.get("error") or outputs[rank][-3000:]
        assert code == 0 and result.get("ok"), f"rank {rank} (exit {code}), {scenario}:\n{detail}"
