"""All-reduce bandwidth by message size: the "hccl" backend next to gloo.

    torchrun --nproc-per-node 2 benchmarks/allreduce_bandwidth.py [--max-mib 64] [--reps 7] [--json PATH]

Each rank all-reduces a float32 tensor on flagos:LOCAL_RANK with hccl
(flagos:0 stays current) and the same tensor on the CPU with gloo, in the
same process group ("cpu:gloo,flagos:hccl"), so both run on the same machine
in the same run. Rank 0 prints, per size and backend, the median time of
`--reps` timed repetitions (after one warm-up) and the bus bandwidth NCCL's
tests report for all-reduce: 2 (n - 1) / n x bytes / time. On the simulator
hccl moves data through shared memory (csrc/sim/hccl): a figure for the
simulator, not for Ascend hardware. `python -m benchmarks` runs it on 2
processes (run()).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def measure(x, reps: int, sync) -> float:
    import torch.distributed as dist

    dist.all_reduce(x)  # warm-up
    times = []
    for _ in range(reps):
        dist.barrier()
        start = time.perf_counter()
        dist.all_reduce(x)
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    import torch
    import torch.distributed as dist

    import torch_fl  # noqa: F401

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-mib", type=float, default=64)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--json", default=None, help="rank 0 writes the rows here")
    args = parser.parse_args()
    dist.init_process_group("cpu:gloo,flagos:hccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("flagos", int(os.environ.get("LOCAL_RANK", rank)))
    if rank == 0:
        print(f"all_reduce(float32) over {world} processes, median of {args.reps}")
        print(f"{'bytes':>12} {'backend':>8} {'time (ms)':>10} {'bus bandwidth (MB/s)':>22}")
    rows = []
    nbytes = 4096
    while nbytes <= args.max_mib * 2**20:
        for backend, x, sync in (("hccl", torch.ones(nbytes // 4, device=device),
                                  lambda: torch.flagos.synchronize(device.index)),
                                 ("gloo", torch.ones(nbytes // 4), lambda: None)):
            median = measure(x, args.reps, sync)
            bus = 2 * (world - 1) / world * nbytes / median / 1e6
            rows.append({"bytes": nbytes, "backend": backend, "ms": median * 1e3, "bus_MBps": bus})
            if rank == 0:
                print(f"{nbytes:>12} {backend:>8} {median * 1e3:>10.3f} {bus:>22.1f}", flush=True)
        nbytes *= 4
    if rank == 0 and args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"world": world, "reps": args.reps, "rows": rows}, handle)
    dist.destroy_process_group()


def run(processes: int = 2, max_mib: float = 64, reps: int = 5) -> dict:
    """Runs this script under torchrun (a standalone rendezvous on a free
    port) and returns rank 0's rows; {"error": ...} if the run failed."""
    env = dict(os.environ, FLAGOS_SIM_DEVICES=str(max(processes, int(os.environ.get("FLAGOS_SIM_DEVICES", "0")))))
    env["PYTHONPATH"] = os.path.dirname(HERE) + os.pathsep + env.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory(prefix="flagos_allreduce_") as tmp:
        out = os.path.join(tmp, "rows.json")
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(processes),
               os.path.join(HERE, "allreduce_bandwidth.py"), "--max-mib", str(max_mib), "--reps", str(reps),
               "--json", out]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0 or not os.path.exists(out):
            return {"error": (proc.stdout + proc.stderr)[-2000:]}
        with open(out, encoding="utf-8") as handle:
            return json.load(handle)


def table(figure: dict) -> str:
    if "error" in figure:
        return f"all-reduce bandwidth: failed: {figure['error']}"
    by_size = {}
    for row in figure["rows"]:
        by_size.setdefault(row["bytes"], {})[row["backend"]] = row
    lines = [f"all_reduce(float32) bus bandwidth, {figure['world']} processes, median of {figure['reps']}",
             f"{'bytes':>12} {'hccl (MB/s)':>12} {'gloo (MB/s)':>12} {'hccl/gloo':>10}"]
    for nbytes, pair in sorted(by_size.items()):
        h, g = pair["hccl"]["bus_MBps"], pair["gloo"]["bus_MBps"]
        lines.append(f"{nbytes:>12} {h:>12.1f} {g:>12.1f} {h / g:>10.2f}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
