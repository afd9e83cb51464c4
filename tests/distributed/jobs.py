"""The ranks of a tests/distributed job. Job starts each rank with RANK,
WORLD_SIZE, a FileStore path and a result folder in its environment, as
torchrun would, and kills those that outlive its timeout; run_rank() is
the body of a rank (worker.py, parallel_worker.py).

Ranks are forked from a forkserver that has imported torch, torch_fl and
transformers' Llama once, without using a device: a fresh interpreter per
rank spent most of a job's time importing them. forkserver() starts it
without waiting for those imports."""

from __future__ import annotations

import datetime
import json
import multiprocessing
import multiprocessing.forkserver
import os
import runpy
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PRELOAD = ["torch", "torch_fl", "torch.distributed.fsdp", "torch.distributed.tensor.parallel",
           "torch.distributed.checkpoint", "transformers.models.llama.modeling_llama"]
MAX_WORLD = 4  # the simulator's device count is read at import, in the forkserver: one more than this

_context = None


def forkserver():
    """The forkserver context, the server started on first use."""
    global _context
    if _context is None:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        saved = os.environ.get("FLAGOS_SIM_DEVICES")
        os.environ["FLAGOS_SIM_DEVICES"] = str(MAX_WORLD + 1)
        try:
            multiprocessing.forkserver.ensure_running()
        finally:
            if saved is None:
                del os.environ["FLAGOS_SIM_DEVICES"]
            else:
                os.environ["FLAGOS_SIM_DEVICES"] = saved
        _context = context
    return _context


def _start(script: str, scenarios: str, env: dict, log: str) -> None:
    """A rank, in the forked process: output to `log`, then `script` as __main__."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.chdir(ROOT)
    os.environ.update(env)
    os.environ.pop("HCCL_EXEC_TIMEOUT", None)
    sys.argv = [script, scenarios]
    runpy.run_path(os.path.join(HERE, script), run_name="__main__")


class Job:
    """`world` ranks of `script` running `scenarios`; wait() returns their exit
    codes, results and outputs. Jobs may run at once: each has its own store."""

    def __init__(self, tmp_path, scenarios: str, world: int, timeout: float = 240, pg_timeout: float = 60,
                 env=None, script: str = "worker.py"):
        assert world <= MAX_WORLD, f"the forkserver's simulator has {MAX_WORLD + 1} devices, too few for {world} ranks"
        self.results = tmp_path / f"{scenarios.replace(',', '+')}-{world}"
        self.results.mkdir()
        base = dict(WORLD_SIZE=str(world), STORE_FILE=str(self.results / "store"), RESULT_DIR=str(self.results),
                    TEST_PG_TIMEOUT=str(pg_timeout), HCCL_CONNECT_TIMEOUT="60", **(env or {}))
        context = forkserver()
        self.procs = [context.Process(target=_start, args=(script, scenarios, dict(base, RANK=str(rank)),
                                                           str(self.results / f"{rank}.log")), name=f"rank {rank}")
                      for rank in range(world)]
        for proc in self.procs:
            proc.start()
        self.deadline = time.monotonic() + timeout

    def wait(self):
        try:
            for proc in self.procs:
                proc.join(max(0.0, self.deadline - time.monotonic()))
        finally:
            for proc in self.procs:
                if proc.exitcode is None:
                    proc.kill()
                    proc.join()
        found, outputs = {}, []
        for rank in range(len(self.procs)):
            path = self.results / f"{rank}.json"
            found[rank] = json.loads(path.read_text()) if path.exists() else None
            log = self.results / f"{rank}.log"
            outputs.append(log.read_text(errors="replace") if log.exists() else "")
        return [p.exitcode for p in self.procs], found, outputs


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
