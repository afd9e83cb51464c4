"""Where a flagos op's host time goes, phase by phase, beside CPU eager.

For each op three variants run interleaved in the same rounds:

- `flagos`: the op on flagos:0 (current), probes off: the shipped path.
- `cpu`: the same op on CPU tensors (CPU eager).
- `flagos_probed`: the flagos op with the phase probes on
  (`torch_fl._C._set_phase_probes`, csrc/runtime/phases.h), whose totals
  (read after each timed loop) split the op into phases.

Phases, in ns per op (per model step for the model), from the probed loop:

- `dispatch_entry`: everything before the flagos kernel is entered, the
  Python call, argument parsing and the dispatcher (and the autograd and
  composite layers for the model), = probed total - kernel.
- `wrapper`: the kernel less its launches: device check, output size and
  dtype rules, output allocation, = kernel - launch.
- `arg_conversion`: the launch record (the executor-cache key: dtypes,
  sizes, strides, offsets, scalars, absent optionals; the addresses).
- `cache_lookup`: hash, lookup, rebinding of a hit.
- `phase_one`: a cache miss (argument objects and phase 1).
- `launch_other`: the rest of the launch: stream, workspace, sanitizer.
- `simulator`: the phase-2 call: the simulator's own work (its validation
  and the CPU kernel that stands in for the device).

`layer` = kernel - simulator, the project's own time in its kernels;
`layer_net_of_probes` = unprobed total - dispatch_entry - simulator, the
same without the probes' own clock reads (which fall inside the kernel).
The targets: flagos / CPU at most 1.5 for each tiny op, and the layer at
most 700 ns per op.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
import torch_fl
from torch_fl import _C

from benchmarks.timing import Variant, interleave, paired, summarize

# Loops are timed in the host thread's CPU time (timing.CLOCKS): the machine
# this runs on is shared, and wall time would charge another process's use of
# the cores to whichever variant was running. The simulated streams run the
# kernels on their own worker threads, as an NPU runs them beside the host: a
# flagos op's host cost is what the calling thread spends, up to the queued
# phase 2. Each timed loop starts with every stream drained.
CLOCK = "thread_cpu"
# One intra-op thread, for the CPU and the simulator alike: the process CPU
# time of an op that forks to OpenMP threads would count their spin-waits.
THREADS = 1
TINY_RATIO_TARGET = 1.5
LAYER_TARGET_NS = 700.0

PHASES = ("dispatch_entry", "wrapper", "arg_conversion", "cache_lookup", "phase_one", "launch_other", "simulator")


class Block(torch.nn.Module):
    """A small pre-norm transformer layer: attention and a GELU MLP."""

    def __init__(self, dim: int = 64, heads: int = 4, hidden: int = 128):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.norm2 = torch.nn.LayerNorm(dim)
        self.up = torch.nn.Linear(dim, hidden)
        self.down = torch.nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


def _ops() -> dict:
    """name -> (make(device) -> args, fn(*args), ops per loop divisor, description)."""
    def pair(*shape):
        return lambda device: (torch.rand(*shape, device=device), torch.rand(*shape, device=device))

    def block(device):
        torch.manual_seed(0)
        model = Block().to(device)
        return model, torch.randn(2, 16, 64, device=device)

    def step(model, x):
        with torch.no_grad():
            model(x)

    return {
        "add_4": (pair(4), lambda a, b: a + b, 1, "x + y, float32[4]"),
        "add_scalar_4": (pair(4), lambda a, b: a + 0.5, 1, "x + 0.5, float32[4]"),
        "relu_4": (pair(4), lambda a, b: torch.relu(a), 1, "relu(x), float32[4]"),
        "mm_16x16": (pair(16, 16), lambda a, b: torch.mm(a, b), 1, "mm, float32[16, 16] @ [16, 16]"),
        "softmax_8x64": (pair(8, 64), lambda a, b: torch.softmax(a, -1), 1, "softmax(x, -1), float32[8, 64]"),
        "add_1m": (pair(1 << 20), lambda a, b: a + b, 100, "x + y, float32[1M]"),
        "transformer_layer": (block, step, 100,
                              "forward of a pre-norm transformer layer (LayerNorm, qkv Linear, causal SDPA, "
                              "Linear, LayerNorm, GELU MLP), dim 64, 4 heads, batch 2 x 16 tokens, no_grad"),
    }


def _probes(on: bool):
    return lambda: _C._set_phase_probes(on)


def _reset() -> None:
    torch.flagos.synchronize()
    _C._reset_phase_totals()
    torch_fl.sim.reset_stats()
    _C._reset_executor_cache_stats()


def _read() -> dict:
    totals = dict(_C._phase_totals())
    stats = torch_fl.sim.stats()
    cache = _C._executor_cache_stats()
    totals["set_device_calls"] = stats["set_device_calls"]
    totals["cache_hits"] = cache["hits"]
    totals["cache_misses"] = cache["misses"]
    totals["fallback_ops"] = sum(stats["fallback_ops"].values())
    return totals


def _phase_rounds(probed: Variant, unprobed: Variant, n: int) -> dict[str, list[float]]:
    """Per round: each phase in ns per op.

    The probes read the CPU's time stamp counter, a wall clock: a span in
    which the process waited for a core counts that wait. The loops are
    timed in the host thread's CPU time, so each round's phases are scaled by the
    probed loop's CPU time over its wall time: a wait lands in a phase in
    proportion to the phase's length, and the scaled phases add up to the
    probed loop's CPU time.
    """
    out: dict[str, list[float]] = {k: [] for k in (*PHASES, "kernel", "layer", "layer_net_of_probes",
                                                    "probe_overhead")}
    for total, wall, plain, t in zip(probed.samples, probed.wall_samples, unprobed.samples, probed.rounds):
        scale = total / wall if wall > 0 else 1.0
        per = {k: t[k] * scale / n for k in t if k.endswith("_ns")}
        kernel = per["kernel_ns"]
        launch = per["launch_ns"]
        entry = total - kernel
        row = {
            "dispatch_entry": entry,
            "wrapper": kernel - launch,
            "arg_conversion": per["record_ns"],
            "cache_lookup": per["cache_ns"],
            "phase_one": per["phase_one_ns"],
            "launch_other": launch - per["record_ns"] - per["cache_ns"] - per["phase_one_ns"] - per["phase_two_ns"],
            "simulator": per["phase_two_ns"],
            "kernel": kernel,
            "layer": kernel - per["phase_two_ns"],
            "layer_net_of_probes": plain - entry - per["phase_two_ns"],
            "probe_overhead": total - plain,
        }
        for k, v in row.items():
            out[k].append(v)
    return out


def run(n: int, reps: int) -> dict:
    """Every op's three variants, with one intra-op thread (see THREADS)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(THREADS)
    try:
        return _run(n, reps)
    finally:
        torch.set_num_threads(threads)


def _run(n: int, reps: int) -> dict:
    torch.flagos.set_device(0)
    result = {"method": __doc__.split("\n\n", 1)[1].strip(), "intra_op_threads": THREADS, "ops": {}}
    for name, (make, fn, divisor, description) in _ops().items():
        loop = max(n // divisor, 3)
        fl_args, cpu_args = make("flagos:0"), make("cpu")

        def loop_of(args):
            def body(k):
                for _ in range(k):
                    fn(*args)
            return body

        flagos = Variant("flagos", loop_of(fl_args), _probes(False))
        cpu = Variant("cpu", loop_of(cpu_args), _probes(False))
        probed = Variant("flagos_probed", loop_of(fl_args), _probes(True), _probes(False))
        interleave([flagos, cpu, probed], loop, reps, before=_reset, after=_read, clock=CLOCK)
        phases = _phase_rounds(probed, flagos, loop)
        ratio = paired(flagos.samples, cpu.samples, "ratio")
        ops_timed = loop * reps
        entry = {
            "op": description,
            "ops_per_loop": loop,
            "clock": CLOCK,
            "ns_per_op": {v.name: summarize(v.samples) for v in (flagos, cpu, probed)},
            "wall_ns_per_op": {v.name: summarize(v.wall_samples) for v in (flagos, cpu, probed)},
            "flagos_vs_cpu_wall": paired(flagos.wall_samples, cpu.wall_samples, "ratio"),
            "flagos_vs_cpu": ratio,
            "flagos_minus_cpu_ns": paired(flagos.samples, cpu.samples, "diff"),
            "phases_ns_per_op": {k: summarize(v) for k, v in phases.items()},
            "per_op_counts": {
                "kernels": probed.counters.get("kernels", 0) / ops_timed,
                "launches": probed.counters.get("launches", 0) / ops_timed,
                "cache_misses": flagos.counters.get("cache_misses", 0) / ops_timed,
                "set_device_calls": flagos.counters.get("set_device_calls", 0) / ops_timed,
                "fallback_ops": flagos.counters.get("fallback_ops", 0) / ops_timed,
            },
        }
        launches = entry["per_op_counts"]["launches"]
        if launches > 1:
            entry["layer_ns_per_launch"] = entry["phases_ns_per_op"]["layer_net_of_probes"]["median"] / launches
        if divisor == 1:
            entry["target"] = {"flagos_vs_cpu_at_most": TINY_RATIO_TARGET, "layer_ns_at_most": LAYER_TARGET_NS}
            entry["within_target"] = (ratio["median"] <= TINY_RATIO_TARGET and
                                      entry["phases_ns_per_op"]["layer_net_of_probes"]["median"] <= LAYER_TARGET_NS)
        result["ops"][name] = entry
    return result
