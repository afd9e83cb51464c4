"""All-reduce bandwidth by message size with the "hccl" backend.

    torchrun --nproc-per-node 2 benchmarks/allreduce_bandwidth.py [--max-mib 16] [--reps 7]

Each rank all-reduces a float32 tensor on flagos:LOCAL_RANK (flagos:0 stays
current) and rank 0 prints, per size, the median time of `--reps` timed
repetitions (after one warm-up) and the bus bandwidth NCCL's tests report
for all-reduce: 2 (n - 1) / n x bytes / time. On the simulator this is the
shape of the c10d TCPStore transport the simulated HCCL is built on (a
fixed per-round cost, then a plateau), not a figure for Ascend hardware.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch
import torch.distributed as dist

import torch_fl  # noqa: F401


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-mib", type=float, default=16)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    dist.init_process_group("hccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("flagos", int(os.environ.get("LOCAL_RANK", rank)))
    if rank == 0:
        print(f"all_reduce(float32) over {world} processes, median of {args.reps}")
        print(f"{'bytes':>12} {'time (ms)':>10} {'bus bandwidth (MB/s)':>22}")
    nbytes = 4096
    while nbytes <= args.max_mib * 2**20:
        x = torch.ones(nbytes // 4, device=device)
        dist.all_reduce(x)  # warm-up
        times = []
        for _ in range(args.reps):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(x)
            torch.flagos.synchronize(device.index)
            times.append(time.perf_counter() - start)
        median = statistics.median(times)
        if rank == 0:
            bus = 2 * (world - 1) / world * nbytes / median / 1e6
            print(f"{nbytes:>12} {median * 1e3:>10.3f} {bus:>22.1f}", flush=True)
        nbytes *= 4
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
