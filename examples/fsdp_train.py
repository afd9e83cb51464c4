"""FSDP2 (optionally x tensor parallel) and a distributed checkpoint on flagos.

    torchrun --nproc-per-node 4 examples/fsdp_train.py [--tp 2] [--steps 5]

Each process makes its flagos:LOCAL_RANK current, builds a small
transformers Llama from a config, shards it with `fully_shard` (every
decoder layer, then the model) over a 1-D mesh, or with --tp N over a 2-D
(data x tensor) mesh with ColwiseParallel/RowwiseParallel inside groups of
N ranks, and trains it on its shard of the batch with the "hccl" backend.
Gradients are clipped to norm 1 (1-D only: see train's caller). It then
saves model and optimizer with torch.distributed.checkpoint, loads
them into a freshly sharded model, and rank 0 trains the same model in one
process on the CPU on the whole batch. Each rank prints the largest
absolute difference from that reference. On the simulator,
FLAGOS_SIM_DEVICES must be at least the number of processes per node.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

import torch_fl  # noqa: F401  (registers the flagos device and the "hccl" backend)

BATCH, SEQ, LR = 8, 16, 0.05


def make_model():
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=SEQ,
                         tie_word_embeddings=False, attn_implementation="eager")
    torch.manual_seed(0)
    return LlamaForCausalLM(config)


def make_batch():
    return torch.randint(0, 128, (BATCH, SEQ), generator=torch.Generator().manual_seed(1))


def train(model, tokens, steps, clip: bool):
    # foreach=False: with TP, plain (replicated) and DTensor parameters mix.
    opt = torch.optim.SGD(model.parameters(), lr=LR, foreach=False)
    for _ in range(steps):
        opt.zero_grad()
        model(input_ids=tokens, labels=tokens).loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    return opt


def tp_plan(layers: int) -> dict:
    """Megatron-style: q/k/v and the MLP's gate/up split by columns (heads,
    hidden units), o_proj and down_proj by rows, one all-reduce after each."""
    plan = {}
    for i in range(layers):
        for name in ("q_proj", "k_proj", "v_proj"):
            plan[f"model.layers.{i}.self_attn.{name}"] = ColwiseParallel()
        plan[f"model.layers.{i}.self_attn.o_proj"] = RowwiseParallel()
        plan[f"model.layers.{i}.mlp.gate_proj"] = ColwiseParallel()
        plan[f"model.layers.{i}.mlp.up_proj"] = ColwiseParallel()
        plan[f"model.layers.{i}.mlp.down_proj"] = RowwiseParallel()
    return plan


def shard(model, mesh, tp: int):
    """TP inside mesh["tp"] (heads and MLP units split), then FSDP over mesh["dp"]."""
    if tp > 1:
        plan = tp_plan(len(model.model.layers))
        parallelize_module(model, mesh["tp"], plan)
        # Each rank's attention now sees num_heads / tp heads.
        model.config.num_attention_heads //= tp
        model.config.num_key_value_heads //= tp
    for layer in model.model.layers:
        fully_shard(layer, mesh=mesh["dp"])
    fully_shard(model, mesh=mesh["dp"])
    return model


def full_params(model):
    return {n: (p.full_tensor() if isinstance(p, DTensor) else p).detach().float().cpu()
            for n, p in model.named_parameters()}


def max_abs_diff(a, b):
    return max((a[k] - b[k]).abs().max().item() for k in a)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--tp", type=int, default=1, help="tensor-parallel degree (1: FSDP2 only)")
    parser.add_argument("--checkpoint", default=None, help="folder for the checkpoint (default: a temporary one)")
    args = parser.parse_args()

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("flagos", local_rank)
    torch.flagos.set_device(device)  # FSDP and DTensor place tensors on the current device
    dist.init_process_group("cpu:gloo,flagos:hccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    assert world % args.tp == 0, f"--tp {args.tp} does not divide {world} processes"
    dp = world // args.tp
    assert BATCH % dp == 0, f"the batch of {BATCH} does not split over {dp} data-parallel groups"
    mesh = init_device_mesh("flagos", (dp, args.tp), mesh_dim_names=("dp", "tp"))

    model = shard(make_model().to(device), mesh, args.tp)
    rows = BATCH // dp
    dp_rank = mesh["dp"].get_local_rank()
    tokens = make_batch()[dp_rank * rows:(dp_rank + 1) * rows].to(device)
    # clip_grad_norm_ needs every gradient on one mesh: in 2-D the TP
    # parameters' mesh is (dp, tp), the others' (dp), which torch refuses.
    clip = args.tp == 1
    opt = train(model, tokens, args.steps, clip)
    trained = full_params(model)

    # Save the sharded state, load it into a freshly sharded model.
    folder = args.checkpoint or os.path.join(tempfile.gettempdir(), f"fsdp_train_{os.environ.get('TORCHELASTIC_RUN_ID', 'run')}")
    model_sd, opt_sd = get_state_dict(model, opt)
    dcp.save({"model": model_sd, "optim": opt_sd}, checkpoint_id=folder)
    fresh = shard(make_model().to(device), mesh, args.tp)
    fresh_sd, _ = get_state_dict(fresh, [])
    state = {"model": fresh_sd}
    dcp.load(state, checkpoint_id=folder)
    set_state_dict(fresh, [], model_state_dict=state["model"], optim_state_dict={})
    loaded = full_params(fresh)

    reference = make_model()
    train(reference, make_batch(), args.steps, clip)
    expected = {n: p.detach().float() for n, p in reference.named_parameters()}
    trained_diff, loaded_diff = max_abs_diff(trained, expected), max_abs_diff(loaded, expected)
    print(f"rank {rank}/{world} on {device} (dp {dp} x tp {args.tp}): max abs difference from single-process "
          f"training {trained_diff:.3g}, after a checkpoint round trip {loaded_diff:.3g}", flush=True)

    status = 0 if max(trained_diff, loaded_diff) < 1e-5 else 1
    stats = getattr(torch_fl, "sim", None) and torch_fl.sim.stats()
    if stats:  # on the simulator: no rank launched on another rank's device
        elsewhere = {d: n for d, n in stats["launches"].items() if d != device.index and n}
        if elsewhere:
            print(f"rank {rank}: launches on other devices {elsewhere}", flush=True)
            status = 1
    flags = torch.tensor([status])
    dist.all_reduce(flags)  # on gloo
    if rank == 0:
        print("OK: FSDP2" + (f" x TP {args.tp}" if args.tp > 1 else "") +
              f" on {world} processes matches single-process training" if flags.item() == 0 else "FAILED")
    dist.destroy_process_group()
    return 1 if flags.item() else 0


if __name__ == "__main__":
    sys.exit(main())
