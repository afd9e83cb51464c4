"""One rank of a tests/distributed job, started by jobs.Job with RANK,
WORLD_SIZE and a FileStore path in the environment, as torchrun would set
them, and run as `worker.py scenario[,scenario...]`. Rank r works on
flagos:r+1 while flagos:0 stays current, so no collective can pass by
running on the ambient device. Writes {scenario: {"ok", "log", "error"}} to
RESULT_DIR/<rank>.json; a failure also shows in the exit status."""

from __future__ import annotations

import json
import os
import time

import torch
import torch.distributed as dist

import torch_fl
from jobs import run_rank

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
DEVICE = torch.device("flagos", RANK + 1)
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64]


def values(dtype, n=6, rank=RANK, small=False):
    """A rank-dependent CPU tensor: exact in every dtype (small values for products)."""
    base = torch.arange(n, dtype=torch.float64)
    t = (base % 3 + 1 + rank % 2) if small else (base * (rank + 1) - 2 * rank)
    return t.to(dtype)


def check(name, got, expected):
    assert got.device == DEVICE, f"{name}: result on {got.device}, expected {DEVICE}"
    assert torch.flagos.current_device() == 0, f"{name}: the current device changed to {torch.flagos.current_device()}"
    torch.testing.assert_close(got.cpu(), expected, msg=lambda m: f"{name} (rank {RANK}): {m}")


def scenario_collectives(log):
    ops = {"sum": dist.ReduceOp.SUM, "avg": dist.ReduceOp.AVG, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN,
           "product": dist.ReduceOp.PRODUCT}
    for dtype in DTYPES:
        floating = dtype.is_floating_point
        gloo_ok = dtype not in (torch.float16, torch.bfloat16)  # computed in float64 below otherwise
        for name, op in ops.items():
            if name == "avg" and not floating:
                continue
            small = name == "product"
            x = values(dtype, small=small)
            if gloo_ok and name != "avg":
                ref = x.clone()
                dist.all_reduce(ref, op=op)
            else:  # gloo has no AVG and no half types: reduce every rank's values in float64
                stack = torch.stack([values(dtype, rank=r, small=small).double() for r in range(WORLD)])
                ref = {"sum": stack.sum(0), "avg": stack.mean(0), "max": stack.amax(0), "min": stack.amin(0),
                       "product": stack.prod(0)}[name].to(dtype)
            dev = x.to(DEVICE)
            dist.all_reduce(dev, op=op)
            check(f"all_reduce {name} {dtype}", dev, ref)

        # broadcast from the last rank
        x = values(dtype)
        ref = x.clone()
        dist.broadcast(ref, src=WORLD - 1)
        dev = x.to(DEVICE)
        dist.broadcast(dev, src=WORLD - 1)
        check(f"broadcast {dtype}", dev, ref)

        # all_gather: list and tensor forms
        refs = [torch.empty(6, dtype=dtype) for _ in range(WORLD)]
        dist.all_gather(refs, values(dtype))
        outs = [torch.empty(6, dtype=dtype, device=DEVICE) for _ in range(WORLD)]
        dist.all_gather(outs, values(dtype).to(DEVICE))
        for r in range(WORLD):
            check(f"all_gather[{r}] {dtype}", outs[r], refs[r])
        out = torch.empty(WORLD * 6, dtype=dtype, device=DEVICE)
        dist.all_gather_into_tensor(out, values(dtype).to(DEVICE))
        check(f"all_gather_into_tensor {dtype}", out, torch.cat(refs))

        # reduce_scatter: list and tensor forms (sum), against the summed inputs
        inputs = [values(dtype, rank=RANK * WORLD + r) for r in range(WORLD)]
        expected = sum(values(dtype, rank=s * WORLD + RANK).double() for s in range(WORLD)).to(dtype)
        out = torch.empty(6, dtype=dtype, device=DEVICE)
        dist.reduce_scatter(out, [t.to(DEVICE) for t in inputs])
        check(f"reduce_scatter {dtype}", out, expected)
        out = torch.empty(6, dtype=dtype, device=DEVICE)
        dist.reduce_scatter_tensor(out, torch.cat(inputs).to(DEVICE))
        check(f"reduce_scatter_tensor {dtype}", out, expected)

        # all_to_all: single-tensor and list forms, against gloo
        x = torch.arange(WORLD * 3, dtype=torch.float64).mul(RANK + 1).to(dtype)
        ref = torch.empty_like(x)
        dist.all_to_all_single(ref, x)
        out = torch.empty(WORLD * 3, dtype=dtype, device=DEVICE)
        dist.all_to_all_single(out, x.to(DEVICE))
        check(f"all_to_all_single {dtype}", out, ref)
        outs = [torch.empty(3, dtype=dtype, device=DEVICE) for _ in range(WORLD)]
        dist.all_to_all(outs, [t.to(DEVICE) for t in x.chunk(WORLD)])
        check(f"all_to_all {dtype}", torch.cat(outs), ref)

        # send/recv around a ring, with a tag (matched in order, as on NCCL)
        to, frm = (RANK + 1) % WORLD, (RANK - 1) % WORLD
        got = torch.empty(6, dtype=dtype, device=DEVICE)
        if RANK % 2 == 0:
            dist.send(values(dtype).to(DEVICE), to, tag=7)
            dist.recv(got, frm, tag=7)
        else:
            dist.recv(got, frm, tag=7)
            dist.send(values(dtype).to(DEVICE), to, tag=7)
        check(f"send/recv {dtype}", got, values(dtype, rank=frm))

        scenario_more_collectives(dtype)
        log.append(f"{dtype}: ok")

    # the backend's other dtypes: int8, uint8, int16 (reduced and moved), bool
    # (moved only); gloo has no int16, so the expected values are computed here
    for dtype in (torch.int8, torch.uint8, torch.int16, torch.bool):
        every = [values(dtype, small=True, rank=r) for r in range(WORLD)]
        out = torch.empty(WORLD * 6, dtype=dtype, device=DEVICE)
        dist.all_gather_into_tensor(out, every[RANK].to(DEVICE))
        check(f"all_gather_into_tensor {dtype}", out, torch.cat(every))
        dev = every[RANK].to(DEVICE)
        dist.broadcast(dev, src=WORLD - 1)
        check(f"broadcast {dtype}", dev, every[-1])
        if dtype != torch.bool:
            dev = every[RANK].to(DEVICE)
            dist.all_reduce(dev, op=dist.ReduceOp.MAX)
            check(f"all_reduce max {dtype}", dev, torch.stack(every).amax(0))
        log.append(f"{dtype}: ok")

    # a message larger than the store's old 8 MiB limit on one message
    big = torch.full((5 << 19,), float(RANK + 1))  # 10 MiB of float32
    dev = big.to(DEVICE)
    dist.all_reduce(dev)
    check("all_reduce of 10 MiB", dev, torch.full_like(big, WORLD * (WORLD + 1) / 2))
    src = torch.arange(5 << 19, dtype=torch.float32) + RANK
    got = torch.empty_like(src, device=DEVICE)
    if RANK == 0:
        dist.send(src.to(DEVICE), 1)
    elif RANK == 1:
        dist.recv(got, 0)
        check("recv of 10 MiB", got, src - 1)

    # async_op: the Work completes on the launch device's stream; its future holds the result
    x = values(torch.float32).to(DEVICE)
    work = dist.all_reduce(x, async_op=True)
    assert work.wait()
    assert work.is_completed()
    fut = dist.all_reduce(x, async_op=True).get_future()
    result = fut.wait()[0]
    expected = sum(values(torch.float32, rank=r) for r in range(WORLD)) * WORLD
    check("async all_reduce", result, expected)
    dist.barrier()  # on gloo: the group has a CPU backend
    dist.barrier(device_ids=[RANK + 1])  # on hccl

    # every collective ran on the rank's own device, none on the current device 0
    stats = torch_fl.sim.stats()
    assert stats["launches"][0] == 0, f"launches on the current device 0: {stats['launches']}"
    for api in ("HcclAllReduce", "HcclBroadcast", "HcclAllGather", "HcclReduceScatter", "HcclAlltoAll", "HcclSend",
                "HcclRecv", "HcclBarrier", "HcclReduce", "HcclScatter", "HcclAlltoAllV"):
        assert stats["op_launches"].get(api, 0) > 0, (api, stats["op_launches"])
    assert stats["rejected_launches"] == 0, stats
    log.append("launches " + json.dumps(stats["launches"]))


def summed(dtype, ranks=range(WORLD), n=6, offset=0):
    """The float64 sum of the ranks' values, in `dtype` (gloo reduces no half types)."""
    return sum(values(dtype, n=n, rank=r + offset).double() for r in ranks).to(dtype)


def scenario_more_collectives(dtype):
    """reduce, gather, scatter, uneven all_to_all_single, coalesced collectives
    and PREMUL_SUM, against gloo on the CPU (or float64 where gloo has no such
    dtype). Roots are the last rank, so rank 0 is not special."""
    gloo_ok = dtype not in (torch.float16, torch.bfloat16)
    root = WORLD - 1

    # reduce (SUM): only the root's tensor holds the result
    ref = values(dtype)
    if gloo_ok:
        dist.reduce(ref, dst=root)
    else:
        ref = summed(dtype)
    dev = values(dtype).to(DEVICE)
    dist.reduce(dev, dst=root)
    check(f"reduce {dtype}", dev, ref if RANK == root else values(dtype))

    # gather to the root
    refs = [torch.empty(6, dtype=dtype) for _ in range(WORLD)] if RANK == root else None
    dist.gather(values(dtype), refs, dst=root)
    outs = [torch.empty(6, dtype=dtype, device=DEVICE) for _ in range(WORLD)] if RANK == root else None
    dist.gather(values(dtype).to(DEVICE), outs, dst=root)
    if RANK == root:
        for r in range(WORLD):
            check(f"gather[{r}] {dtype}", outs[r], refs[r])

    # scatter from the root
    parts = [values(dtype, rank=10 + r) for r in range(WORLD)]
    ref = torch.empty(6, dtype=dtype)
    dist.scatter(ref, parts if RANK == root else None, src=root)
    out = torch.empty(6, dtype=dtype, device=DEVICE)
    dist.scatter(out, [p.to(DEVICE) for p in parts] if RANK == root else None, src=root)
    check(f"scatter {dtype}", out, ref)

    # all_to_all_single with uneven splits of rows of 2: rank r sends r + j + 1 rows to rank j
    in_splits = [RANK + j + 1 for j in range(WORLD)]
    out_splits = [j + RANK + 1 for j in range(WORLD)]
    x = (torch.arange(sum(in_splits) * 2, dtype=torch.float64).view(-1, 2) + 10 * RANK).to(dtype)
    ref = torch.empty(sum(out_splits), 2, dtype=dtype)
    dist.all_to_all_single(ref, x, out_splits, in_splits)
    out = torch.empty(sum(out_splits), 2, dtype=dtype, device=DEVICE)
    dist.all_to_all_single(out, x.to(DEVICE), out_splits, in_splits)
    check(f"all_to_all_single uneven {dtype}", out, ref)

    # coalesced all-gather and reduce-scatter (the path FSDP2 takes), with and
    # without a device given to _coalescing_manager
    for device in (DEVICE, None):
        inputs = [values(dtype, n=4), values(dtype, n=6, rank=RANK + 5)]
        outs = [torch.empty(WORLD * t.numel(), dtype=dtype, device=DEVICE) for t in inputs]
        with dist._coalescing_manager(device=device, async_ops=True) as cm:
            for o, i in zip(outs, inputs):
                dist.all_gather_into_tensor(o, i.to(DEVICE), async_op=True)
        cm.wait()
        check(f"allgather_into_tensor_coalesced {dtype}", outs[0],
              torch.cat([values(dtype, n=4, rank=r) for r in range(WORLD)]))
        check(f"allgather_into_tensor_coalesced {dtype}", outs[1],
              torch.cat([values(dtype, n=6, rank=r + 5) for r in range(WORLD)]))

        inputs = [values(dtype, n=2 * WORLD), values(dtype, n=3 * WORLD, rank=RANK + 5)]
        outs = [torch.empty(t.numel() // WORLD, dtype=dtype, device=DEVICE) for t in inputs]
        with dist._coalescing_manager(device=device, async_ops=True) as cm:
            for o, i in zip(outs, inputs):
                dist.reduce_scatter_tensor(o, i.to(DEVICE), async_op=True)
        cm.wait()
        check(f"reduce_scatter_tensor_coalesced {dtype}", outs[0],
              summed(dtype, n=2 * WORLD).chunk(WORLD)[RANK])
        check(f"reduce_scatter_tensor_coalesced {dtype}", outs[1],
              summed(dtype, n=3 * WORLD, offset=5).chunk(WORLD)[RANK])

        tensors = [values(dtype).to(DEVICE), values(dtype, n=3, rank=RANK + 5).to(DEVICE)]
        with dist._coalescing_manager(device=device, async_ops=True) as cm:
            for t in tensors:
                dist.all_reduce(t, async_op=True)
        cm.wait()
        check(f"allreduce_coalesced {dtype}", tensors[0], summed(dtype))
        check(f"allreduce_coalesced {dtype}", tensors[1], summed(dtype, n=3, offset=5))

    # PREMUL_SUM (FSDP's gradient scaling on NCCL): sum of the inputs times a factor
    if dtype.is_floating_point:
        premul = dist.ReduceOp.PREMUL_SUM(0.5)
        dev = values(dtype).to(DEVICE)
        dist.all_reduce(dev, op=premul)
        check(f"all_reduce premul_sum {dtype}", dev, (summed(torch.float64) * 0.5).to(dtype))
        out = torch.empty(3, dtype=dtype, device=DEVICE)
        dist.reduce_scatter_tensor(out, values(dtype, n=3 * WORLD).to(DEVICE), op=premul)
        check(f"reduce_scatter_tensor premul_sum {dtype}", out,
              (summed(torch.float64, n=3 * WORLD) * 0.5).to(dtype).chunk(WORLD)[RANK])


def scenario_negative_control(log):
    """Guards on: all_reduce on flagos:r+1 works. Guards off: it launches on the
    ambient device 0 and HCCL rejects it; nothing hangs."""
    x = values(torch.float32).to(DEVICE)
    dist.all_reduce(x)
    y = values(torch.float32).to(DEVICE)
    torch_fl._C._set_guards_enabled(False)
    try:
        dist.all_reduce(y)
    except dist.DistBackendError as error:
        log.append(str(error).splitlines()[0])
        assert "HcclAllReduce returned HCCL_E_PARA" in str(error), str(error)
        assert f"lives on device {RANK + 1} but the communicator" in str(error), str(error)
    else:
        raise AssertionError("with guards off, all_reduce on a non-current device passed")
    finally:
        torch_fl._C._set_guards_enabled(True)
    # tensors that span devices are an error naming the op and the devices
    try:
        dist.all_gather_into_tensor(torch.empty(WORLD * 6, device="flagos:0"), values(torch.float32).to(DEVICE))
    except RuntimeError as error:
        assert "allgather_into_tensor" in str(error) and f"flagos:{RANK + 1}" in str(error) and "flagos:0" in str(error), str(error)
        log.append(str(error).splitlines()[0])
    else:
        raise AssertionError("all_gather over two devices passed")
    dist.barrier()


def scenario_rank_fails(log):
    """Rank 1 raises after the first collective; the others' next one must fail
    within the group's timeout instead of hanging, naming rank 1."""
    x = values(torch.float32).to(DEVICE)
    dist.all_reduce(x)
    if RANK == 1:
        raise RuntimeError("rank 1 fails on purpose")
    expect_next_all_reduce_to_fail(log, x)


def scenario_rank_dies(log):
    """Rank 1's process ends abruptly (no exception, no cleanup) after the
    first collective; the others fail as in scenario_rank_fails."""
    x = values(torch.float32).to(DEVICE)
    dist.all_reduce(x)
    if RANK == 1:
        os._exit(3)
    expect_next_all_reduce_to_fail(log, x)


def expect_next_all_reduce_to_fail(log, x):
    start = time.monotonic()
    try:
        dist.all_reduce(x)
    except dist.DistBackendError as error:
        log.append(f"failed after {time.monotonic() - start:.1f} s: {str(error).splitlines()[0]}")
        assert "HcclAllReduce returned HCCL_E_" in str(error), str(error)
        assert "rank(s) 1 never arrived" in str(error), str(error)  # names the rank that is gone
    else:
        raise AssertionError("all_reduce passed although rank 1 is gone")


if __name__ == "__main__":
    run_rank(lambda scenario, result: globals()[f"scenario_{scenario}"](result["log"]), 0, 60)
