"""One rank of a tests/distributed training job (FSDP2, tensor parallel, 2-D,
distributed checkpoints), started by jobs.Job like worker.py and run as
`parallel_worker.py scenario[,scenario...]`. Rank r
trains on flagos:r+1, made current (FSDP and DTensor place tensors on the
current device), so flagos:0 stays unused: a launch there means something
ran on the wrong device. Every scenario trains the small transformers Llama
of examples/fsdp_train.py and compares the result with the same training in
one process on the CPU. Writes {scenario: {"ok", "log", "error",
"max_abs_diff"}} to RESULT_DIR/<rank>.json."""

from __future__ import annotations

import os
import sys
import time

import torch
import torch.distributed as dist

import torch_fl
from jobs import ROOT, run_rank

sys.path.insert(0, os.path.join(ROOT, "examples"))
from fsdp_train import BATCH, make_batch, make_model, shard, tp_plan  # noqa: E402  (the example's model and plan)

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
DEVICE = torch.device("flagos", RANK + 1)
STEPS, LR = 3, 0.05


def loss_of(model, tokens):
    return model(input_ids=tokens, labels=tokens).loss


def train(model, tokens, steps=STEPS, clip=None):
    # foreach=False: under TP, plain (replicated) and DTensor parameters mix.
    opt = torch.optim.SGD(model.parameters(), lr=LR, foreach=False)
    for _ in range(steps):
        opt.zero_grad()
        loss_of(model, tokens).backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
    return opt


def reference(steps=STEPS, clip=None):
    """The same training in one process on the CPU, on the whole batch."""
    model = make_model()
    opt = train(model, make_batch(), steps, clip)
    return model, opt


def full_state(model):
    """Every parameter as a full CPU tensor (DTensors gathered)."""
    from torch.distributed.tensor import DTensor

    out = {}
    for name, p in model.named_parameters():
        p = p.detach()
        out[name] = (p.full_tensor() if isinstance(p, DTensor) else p).float().cpu()
    return out


def max_abs_diff(model, ref):
    got, want = full_state(model), {k: v.detach().float() for k, v in ref.named_parameters()}
    assert got.keys() == want.keys(), (sorted(got), sorted(want))
    return max((got[k] - want[k]).abs().max().item() for k in got)


def my_rows(tokens, dp_rank, dp_size):
    per = BATCH // dp_size
    return tokens[dp_rank * per:(dp_rank + 1) * per].to(DEVICE)


def fsdp(mesh, reshard_after_forward, mp_policy=None):
    from torch.distributed.fsdp import fully_shard

    model = make_model().to(DEVICE)
    kwargs = {"mesh": mesh, "reshard_after_forward": reshard_after_forward}
    if mp_policy is not None:
        kwargs["mp_policy"] = mp_policy
    for layer in model.model.layers:
        fully_shard(layer, **kwargs)
    fully_shard(model, **kwargs)
    return model


def scenario_fsdp(result):
    """fully_shard training with reshard_after_forward both ways and gradient
    clipping on DTensor parameters, against one CPU process."""
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("flagos", (WORLD,))
    ref, _ = reference(clip=0.5)
    diffs = {}
    for reshard in (True, False):
        model = fsdp(mesh, reshard)
        train(model, my_rows(make_batch(), RANK, WORLD), clip=0.5)
        diffs[f"reshard_after_forward={reshard}"] = max_abs_diff(model, ref)
    result["max_abs_diff"] = diffs
    for key, diff in diffs.items():
        assert diff < 1e-5, f"FSDP2 ({key}) differs from single-process training by {diff}"


def scenario_fsdp_mixed(result):
    """bf16 parameters, fp32 gradient reduction: close to fp32 training in one
    process (bf16 rounding), and equal across reshard modes."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy

    mesh = init_device_mesh("flagos", (WORLD,))
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    ref, _ = reference()
    model = fsdp(mesh, True, policy)
    train(model, my_rows(make_batch(), RANK, WORLD))
    diff = max_abs_diff(model, ref)
    result["max_abs_diff"] = diff
    # bf16 rounds the forward and backward (8 mantissa bits); the update stays
    # fp32. Measured 3.7e-5; gradients summed instead of averaged give ~1e-2.
    assert 0 < diff < 1e-3, f"FSDP2 with bf16 parameters differs from fp32 training by {diff}"
    for p in model.parameters():
        assert p.dtype == torch.float32, "the sharded parameters must stay fp32"


def tensor_parallel(tp_mesh):
    """TP only (the example's plan), no FSDP."""
    from torch.distributed.tensor.parallel import parallelize_module

    model = make_model().to(DEVICE)
    parallelize_module(model, tp_mesh, tp_plan(len(model.model.layers)))
    model.config.num_attention_heads //= tp_mesh.size()  # each rank's attention sees its heads only
    model.config.num_key_value_heads //= tp_mesh.size()
    return model


def scenario_tp(result):
    """parallelize_module with ColwiseParallel/RowwiseParallel on 2 processes,
    every rank on the whole batch."""
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("flagos", (WORLD,))
    ref, _ = reference()
    model = tensor_parallel(mesh)
    train(model, make_batch().to(DEVICE))
    diff = max_abs_diff(model, ref)
    result["max_abs_diff"] = diff
    assert diff < 1e-5, f"tensor parallel differs from single-process training by {diff}"


def scenario_fsdp_tp(result):
    """2-D: TP inside pairs of ranks, FSDP across them (4 processes)."""
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("flagos", (WORLD // 2, 2), mesh_dim_names=("dp", "tp"))
    ref, _ = reference()
    model = shard(make_model().to(DEVICE), mesh, 2)
    dp_rank = mesh["dp"].get_local_rank()
    train(model, my_rows(make_batch(), dp_rank, mesh["dp"].size()))
    diff = max_abs_diff(model, ref)
    result["max_abs_diff"] = diff
    assert diff < 1e-5, f"FSDP x TP differs from single-process training by {diff}"


def scenario_dcp_save(result):
    """Sharded model and optimizer (FSDP2 on WORLD ranks) saved with
    torch.distributed.checkpoint; dcp_load reads it back on another world size."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("flagos", (WORLD,))
    model = fsdp(mesh, True)
    opt = momentum_sgd(model)
    for _ in range(2):
        opt.zero_grad()
        loss_of(model, my_rows(make_batch(), RANK, WORLD)).backward()
        opt.step()
    model_sd, opt_sd = get_state_dict(model, opt)
    dcp.save({"model": model_sd, "optim": opt_sd}, checkpoint_id=os.environ["CHECKPOINT_DIR"])
    if RANK == 0:  # dcp.save returns once the checkpoint is whole; dcp_load waits for this
        write_atomically(os.environ["CHECKPOINT_STATUS"], "saved")
    diff = max_abs_diff(model, optimizer_reference()[0])
    result["max_abs_diff"] = diff
    assert diff < 1e-5, f"the model saved on {WORLD} ranks differs from single-process training by {diff}"


def write_atomically(path, text):
    with open(path + ".tmp", "w") as handle:
        handle.write(text)
    os.replace(path + ".tmp", path)


def wait_for_checkpoint():
    """dcp_save runs in another job at the same time: wait until it has saved
    (or test_parallel.py says it never will)."""
    path = os.environ["CHECKPOINT_STATUS"]
    while not os.path.exists(path):
        time.sleep(0.2)
    with open(path) as handle:
        status = handle.read()
    assert status == "saved", f"no checkpoint to load: {status}"


def momentum_sgd(model):
    """An optimizer with state (momentum buffers) that, unlike Adam, does not
    amplify the last bits of near-zero gradients: the sharded run matches
    one process to float32 rounding."""
    return torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9, foreach=False)


def optimizer_reference():
    model = make_model()
    opt = momentum_sgd(model)
    tokens = make_batch()
    for _ in range(2):
        opt.zero_grad()
        loss_of(model, tokens).backward()
        opt.step()
    return model, opt


def scenario_dcp_load(result):
    """Loads dcp_save's checkpoint into FSDP2 on this (different) world size;
    model and optimizer state must equal the single-process state."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor

    wait_for_checkpoint()
    mesh = init_device_mesh("flagos", (WORLD,))
    model = fsdp(mesh, True)
    opt = momentum_sgd(model)
    # The optimizer needs its state before loading into it: one step at lr 0.
    for group in opt.param_groups:
        group["lr"] = 0.0
    loss_of(model, my_rows(make_batch(), RANK, WORLD)).backward()
    opt.step()
    opt.zero_grad()
    model_sd, opt_sd = get_state_dict(model, opt)
    state = {"model": model_sd, "optim": opt_sd}
    dcp.load(state, checkpoint_id=os.environ["CHECKPOINT_DIR"])
    set_state_dict(model, opt, model_state_dict=state["model"], optim_state_dict=state["optim"])

    ref_model, ref_opt = optimizer_reference()
    diffs = {"model": max_abs_diff(model, ref_model)}
    names = {id(p): n for n, p in ref_model.named_parameters()}
    ref_state = {names[id(p)]: s for p, s in ref_opt.state.items()}
    opt_diff = 0.0
    for name, p in model.named_parameters():
        for key in ("momentum_buffer",):
            got = opt.state[p][key]
            got = (got.full_tensor() if isinstance(got, DTensor) else got).cpu()
            opt_diff = max(opt_diff, (got - ref_state[name][key]).abs().max().item())
    diffs["optimizer"] = opt_diff
    assert opt.param_groups[0]["lr"] == LR, "the optimizer's hyperparameters were not loaded"
    result["max_abs_diff"] = diffs
    for key, diff in diffs.items():
        assert diff < 1e-5, f"the {key} loaded on {WORLD} ranks differs from single-process state by {diff}"


def run_one(scenario, result):
    try:
        globals()[f"scenario_{scenario}"](result)
        stats = torch_fl.sim.stats()
        result["launches"] = stats["launches"]
        wrong = {d: n for d, n in stats["launches"].items() if d != DEVICE.index and n}
        assert not wrong, f"launches on devices other than rank {RANK}'s {DEVICE}: {wrong}"
        assert stats["rejected_launches"] == 0, stats
        # No rank leaves while another still finishes its last collective: the
        # simulated HCCL's signals go through a store served by rank 0's process.
        dist.barrier()
    finally:
        print(f"rank {RANK} {scenario}: max abs difference {result.get('max_abs_diff')}", flush=True)


if __name__ == "__main__":
    run_rank(run_one, DEVICE.index, 120)
