"""The ranks of a tests/distributed job. launch() starts each rank as a
subprocess with RANK, WORLD_SIZE, a FileStore path and a result folder in
its environment, killed if the job outlives its timeout; run_rank() is the
body of a rank (worker.py, parallel_worker.py)."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import traceback

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


def run_rank(run_one, current_device: int, default_timeout: float) -> None:
    """Makes flagos:`current_device` current, joins the job's group, runs the
    scenarios named by argv[1] (comma-separated, in order; the first failure
    ends the job) as run_one(scenario, result) and writes
    {scenario: {"ok", "log", "error", ...}} to RESULT_DIR/<rank>.json."""
    import torch
    import torch.distributed as dist

    timeout = datetime.timedelta(seconds=float(os.environ.get("TEST_PG_TIMEOUT", default_timeout)))
    torch.flagos.set_device(current_device)
    dist.init_process_group("cpu:gloo,flagos:hccl", init_method=f"file://{os.environ['STORE_FILE']}",
                            rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]), timeout=timeout)
    results = {}
    try:
        for scenario in sys.argv[1].split(","):
            results[scenario] = result = {"ok": False, "log": []}
            try:
                run_one(scenario, result)
                result["ok"] = True
            except BaseException:
                result["error"] = traceback.format_exc()
                raise
    finally:
        with open(os.path.join(os.environ["RESULT_DIR"], f"{os.environ['RANK']}.json"), "w") as handle:
            json.dump(results, handle)
    dist.destroy_process_group()
