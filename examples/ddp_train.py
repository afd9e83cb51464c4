"""DistributedDataParallel on flagos devices, one process per device.

    torchrun --nproc-per-node 4 examples/ddp_train.py

Each process trains a small MLP on flagos:LOCAL_RANK with its shard of the
batch; gradients are averaged with the "hccl" backend. No process calls
set_device: flagos:0 stays current everywhere, and every kernel and
collective still runs on the rank's own device. Rank 0 then trains the same
model on the CPU on the whole batch in one process and checks that both end
with the same parameters. On the simulator, FLAGOS_SIM_DEVICES must be at
least the number of processes per node (4 by default).
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import torch_fl  # noqa: F401  (registers the flagos device and the "hccl" backend)

BATCH, IN, HIDDEN = 64, 16, 32


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(IN, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, 1))


def make_data():
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(BATCH, IN, generator=gen)
    y = torch.sin(x.sum(dim=1, keepdim=True))
    return x, y


def train(model, x, y, steps: int, lr: float):
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()

    # Also runs as a single process without torchrun.
    for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                       ("MASTER_PORT", "29512")):
        os.environ.setdefault(key, value)
    dist.init_process_group("hccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("flagos", int(os.environ["LOCAL_RANK"]))
    assert BATCH % world == 0, f"the batch of {BATCH} does not split over {world} processes"

    x, y = make_data()
    shard = slice(rank * BATCH // world, (rank + 1) * BATCH // world)
    model = DDP(make_model().to(device))
    losses = train(model, x[shard].to(device), y[shard].to(device), args.steps, args.lr)
    assert torch.flagos.current_device() == 0, "something changed the current device"
    print(f"rank {rank}/{world} on {device}: loss {losses[0]:.4f} -> {losses[-1]:.4f}", flush=True)

    status = 0
    params = [p.detach().cpu() for p in model.module.parameters()]
    if rank == 0:
        reference = make_model()
        train(reference, x, y, args.steps, args.lr)
        diff = max((a - b).abs().max().item() for a, b in zip(params, reference.parameters()))
        if diff <= 1e-5:
            print(f"OK: DDP on {world} processes matches single-process training (max abs diff {diff:.2e})",
                  flush=True)
        else:
            print(f"MISMATCH: max abs diff {diff:.2e} from single-process training", flush=True)
            status = 1
    dist.destroy_process_group()
    return status


if __name__ == "__main__":
    sys.exit(main())
