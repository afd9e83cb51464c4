"""Per-op host time of tiny flagos ops: guard overhead, its alternatives,
cross-device ops, the launch path against CPU eager, the executor cache.

Each figure is nanoseconds per op: a loop of n ops timed with
time.perf_counter_ns (or std::chrono in the C++ loops), divided by n. The
Python loops include Python's own cost of `x + y`, the same in every variant.
The launch-time sanitizer is off throughout, as it is outside the tests.
"""

from __future__ import annotations

from types import ModuleType
from typing import Optional

import torch
import torch_fl
from torch_fl import _C

from benchmarks import breakdown
from benchmarks.timing import Variant, compare, interleave, paired, summarize

SIZE = 4  # elements: the op is all dispatch and launch, no arithmetic to speak of


def _sim_counters_reset() -> None:
    torch_fl.sim.reset_stats()
    _C._reset_executor_cache_stats()


def _sim_counters() -> dict:
    stats = torch_fl.sim.stats()
    cache = _C._executor_cache_stats()
    counts = {
        "set_device_calls": stats["set_device_calls"],
        "rejected_launches": stats["rejected_launches"],
        "fallback_ops": sum(stats["fallback_ops"].values()),
        "executor_cache_hits": cache["hits"],
        "executor_cache_misses": cache["misses"],
        "executor_cache_evictions": cache["evictions"],
    }
    for device, launches in stats["launches"].items():
        counts[f"launches_on_flagos:{device}"] = launches
    return counts


def _guards(enabled: bool):
    return lambda: _C._set_guards_enabled(enabled)


def _variant_report(variant: Variant, n: int, reps: int) -> dict:
    ops = n * reps
    report = {"ns_per_op": summarize(variant.samples)}
    counters = {key: value for key, value in variant.counters.items() if value or key == "set_device_calls"}
    if counters:
        report["counts_over_timed_loops"] = counters
        report["ops_timed"] = ops
        report["set_device_calls_per_op"] = variant.counters.get("set_device_calls", 0) / ops
    return report


def _group(variants: list[Variant], n: int, reps: int) -> dict:
    interleave(variants, n, reps, before=_sim_counters_reset, after=_sim_counters)
    return {v.name: _variant_report(v, n, reps) for v in variants}


def _by_name(variants: list[Variant]) -> dict[str, list[float]]:
    return {v.name: v.samples for v in variants}


def _tensors(device: str):
    return torch.ones(SIZE, device=device), torch.full((SIZE,), 2.0, device=device)


def same_device(n: int, reps: int, ext: Optional[ModuleType]) -> dict:
    """x + y on flagos:0 with flagos:0 current: the injected guard on and off,
    and the alternatives (Python set_device hook, unconditional c10::DeviceGuard)."""
    torch.flagos.set_device(0)
    x, y = _tensors("flagos:0")
    current_device, set_device = torch.flagos.current_device, torch.flagos.set_device

    def plain(k):
        for _ in range(k):
            x + y

    def hook(k):
        for _ in range(k):
            prev = current_device()
            set_device(x.device.index)
            x + y
            set_device(prev)

    variants = [
        Variant("guards_on", plain, _guards(True)),
        Variant("guards_off", plain, _guards(False), _guards(True)),
        Variant("python_set_device_hook", hook, _guards(False), _guards(True)),
    ]
    if ext is not None:
        add_plain, add_device_guard = ext.add_plain, ext.add_device_guard

        def ext_plain(k):
            for _ in range(k):
                add_plain(x, y)

        def ext_device_guard(k):
            for _ in range(k):
                add_device_guard(x, y)

        variants += [
            Variant("cpp_call_guards_off", ext_plain, _guards(False), _guards(True)),
            Variant("cpp_call_c10_device_guard", ext_device_guard, _guards(False), _guards(True)),
        ]
    result = {
        "op": f"x + y, float32[{SIZE}] on flagos:0, flagos:0 current, Python loop",
        "variants": _group(variants, n, reps),
    }
    samples = _by_name(variants)
    on, off = samples["guards_on"], samples["guards_off"]
    calls = result["variants"]["guards_on"]["counts_over_timed_loops"]["set_device_calls"]
    result["guard_overhead_ratio"] = paired(on, off, "ratio")
    result["guard_overhead_ns"] = paired(on, off, "diff")
    result["set_device_calls_guards_on"] = calls
    result["target"] = {"ratio_at_most": 1.02, "set_device_calls": 0}
    result["within_target"] = result["guard_overhead_ratio"]["median"] <= 1.02 and calls == 0
    result["python_hook_vs_guards_off"] = compare(samples["python_set_device_hook"], off)
    if ext is not None:
        # Called through pybind11, not Tensor.__add__: compared with each other.
        result["c10_device_guard_vs_plain_cpp_call"] = compare(
            samples["cpp_call_c10_device_guard"], samples["cpp_call_guards_off"])
    return result


def cpp_loops(n: int, reps: int, ext: ModuleType, launch_ext: Optional[ModuleType], launch_status: str) -> dict:
    """The same comparison with the loop in C++: at::add with the injected guard
    on or off, or inside an unconditional c10::DeviceGuard; then each guard
    alone, without an op, on the current device and on another one."""
    torch.flagos.set_device(0)
    x, y = _tensors("flagos:0")
    x1, y1 = _tensors("flagos:1") if torch.flagos.device_count() > 1 else (None, None)
    variants = [
        Variant("at_add_guards_on", lambda k: ext.loop_plain(x, y, k), _guards(True)),
        Variant("at_add_guards_off", lambda k: ext.loop_plain(x, y, k), _guards(False), _guards(True)),
        Variant("c10_device_guard_at_add_guards_off", lambda k: ext.loop_device_guard(x, y, k),
                _guards(False), _guards(True)),
        Variant("c10_device_guard_alone", lambda k: ext.loop_guard_only(x, k)),
    ]
    if launch_ext is not None:
        variants.append(Variant("launch_guard_alone", lambda k: launch_ext.loop_launch_guard_only(x, y, k)))
    if x1 is not None:
        variants.append(Variant("c10_device_guard_alone_other_device", lambda k: ext.loop_guard_only(x1, k)))
        if launch_ext is not None:
            variants.append(Variant("launch_guard_alone_other_device",
                                    lambda k: launch_ext.loop_launch_guard_only(x1, y1, k)))
    result = {
        "op": f"at::add(x, y), float32[{SIZE}] on flagos:0, flagos:0 current, C++ loop; "
              "the guards alone also on flagos:1 tensors",
        "variants": _group(variants, n, reps),
        "launch_guard_helper": launch_status,
    }
    s = _by_name(variants)
    result["guard_overhead_ratio"] = paired(s["at_add_guards_on"], s["at_add_guards_off"], "ratio")
    result["guard_overhead_ns"] = paired(s["at_add_guards_on"], s["at_add_guards_off"], "diff")
    result["c10_device_guard_ratio"] = paired(
        s["c10_device_guard_at_add_guards_off"], s["at_add_guards_off"], "ratio")
    result["c10_device_guard_ns"] = paired(
        s["c10_device_guard_at_add_guards_off"], s["at_add_guards_off"], "diff")
    return result


def cross_device(n: int, reps: int) -> dict:
    """x + y on flagos:1 with flagos:0 current: the guard switches and restores."""
    if torch.flagos.device_count() < 2:
        return {"status": "skipped: fewer than 2 flagos devices (FLAGOS_SIM_DEVICES)"}
    torch.flagos.set_device(0)
    x0, y0 = _tensors("flagos:0")
    x1, y1 = _tensors("flagos:1")
    current_device, set_device = torch.flagos.current_device, torch.flagos.set_device

    def add(a, b):
        def run(k):
            for _ in range(k):
                a + b
        return run

    def hook(k):
        for _ in range(k):
            prev = current_device()
            set_device(x1.device.index)
            x1 + y1
            set_device(prev)

    variants = [
        Variant("other_device_guards_on", add(x1, y1), _guards(True)),
        Variant("other_device_python_hook_guards_off", hook, _guards(False), _guards(True)),
        Variant("same_device_guards_on", add(x0, y0), _guards(True)),
    ]
    result = {
        "op": f"x + y, float32[{SIZE}] on flagos:1, flagos:0 current, Python loop",
        "variants": _group(variants, n, reps),
    }
    s = _by_name(variants)
    guarded = result["variants"]["other_device_guards_on"]
    result["set_device_calls_per_op"] = guarded["set_device_calls_per_op"]
    result["target"] = {"set_device_calls_per_op": 2}
    result["current_device_after"] = torch.flagos.current_device()
    result["cost_of_switch_and_restore_ns"] = paired(
        s["other_device_guards_on"], s["same_device_guards_on"], "diff")
    return result


def launch_path(n: int, reps: int) -> dict:
    """flagos against CPU eager for the same tiny ops: the simulator runs the same
    CPU arithmetic, so the difference is the backend's dispatch and launch."""
    torch.flagos.set_device(0)
    ops = {
        "add": lambda a, b: a + b,
        "mul": lambda a, b: a * b,
        "relu": lambda a, b: torch.relu(a),
        "sum": lambda a, b: a.sum(),
    }
    variants = []
    for op_name, op in ops.items():
        for device in ("flagos:0", "cpu"):
            a, b = _tensors(device)

            def run(k, op=op, a=a, b=b):
                for _ in range(k):
                    op(a, b)

            variants.append(Variant(f"{op_name}_{device.split(':')[0]}", run, _guards(True)))
    result = {"tensors": f"float32[{SIZE}]", "variants": _group(variants, n, reps)}
    s = _by_name(variants)
    result["flagos_vs_cpu"] = {op_name: compare(s[f"{op_name}_flagos"], s[f"{op_name}_cpu"]) for op_name in ops}
    return result


def executor_cache(n: int, reps: int) -> dict:
    """A cached executor against a fresh phase 1: the cache switched off, and
    `x + s` with a new scalar every call (each call misses, inserts, evicts)."""
    torch.flagos.set_device(0)
    x, y = _tensors("flagos:0")
    scalars: list[float] = []  # refilled before each sample, outside the timed loop
    fresh = iter(range(1, 1 << 62))

    def same_value():
        scalars[:] = [0.5] * n

    def new_values():  # never seen before in this process: every launch misses
        scalars[:] = [0.5 + next(fresh) for _ in range(n)]

    def add(k):
        for _ in range(k):
            x + y

    def add_scalars(k):
        for s in scalars:
            x + s

    def cache(enabled: bool):
        return lambda: _C._set_executor_cache(enabled)

    variants = [
        Variant("tensor_cache_hit", add, cache(True)),
        Variant("tensor_cache_off", add, cache(False), cache(True)),
        Variant("scalar_same_value_hit", add_scalars, same_value),
        Variant("scalar_new_value_miss", add_scalars, new_values),
    ]
    result = {"op": f"x + y and x + s, float32[{SIZE}] on flagos:0", "variants": _group(variants, n, reps)}
    s = _by_name(variants)
    result["cache_off_vs_hit"] = compare(s["tensor_cache_off"], s["tensor_cache_hit"])
    result["scalar_miss_vs_hit"] = compare(s["scalar_new_value_miss"], s["scalar_same_value_hit"])
    return result


def run_all(n: int, reps: int, helpers: dict[str, tuple[Optional[ModuleType], str]]) -> dict:
    """Every host-time figure, with the backend in its benchmark state.
    `helpers`: the C++ helpers (guard_ext), name -> (module or None, status)."""
    ext, ext_status = helpers["device_guard"]
    launch_ext, launch_status = helpers["launch_guard"]
    previous_check = _C._device_check()
    _C._set_device_check(False)
    _C._set_guards_enabled(True)
    _C._set_executor_cache(True)
    try:
        figures = {"same_device": same_device(n, reps, ext)}
        figures["cpp_loops"] = (cpp_loops(n, reps, ext, launch_ext, launch_status) if ext is not None
                                else {"status": ext_status})
        figures["cross_device"] = cross_device(n, reps)
        figures["launch_path"] = launch_path(n, reps)
        figures["executor_cache"] = executor_cache(n, reps)
        figures["breakdown"] = breakdown.run(n, reps)
    finally:
        _C._set_guards_enabled(True)
        _C._set_executor_cache(True)
        _C._set_phase_probes(False)
        _C._set_device_check(previous_check)
        torch.flagos.set_device(0)
    figures["same_device"]["cpp_helper"] = ext_status
    return figures
