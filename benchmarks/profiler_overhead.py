"""Launch overhead of the profiler plugin (docs/profiler.md).

    python -m benchmarks.profiler_overhead [--against CHECKOUT] [--rounds N]

Host time per tiny op (`x + y` on flagos:0, 4 elements: all dispatch and
launch), in nanoseconds: a loop of n ops timed with time.perf_counter_ns,
divided by n, the streams drained after each loop. Variants:

- off: no profiler (what every program pays; the plugin must cost nothing here)
- cpu: torch.profiler with ProfilerActivity.CPU only (no device session)
- device: CPU + ProfilerActivity.PrivateUse1 (launch records on)

--against CHECKOUT also times "off" with another checkout's build (e.g. the
main branch, before the plugin), in subprocesses that alternate with this
one's, so that drift hits both alike. Timings on a shared machine are
reported, never judged.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

N = 2000
REPS = 15


def _loop(x, y, n: int) -> float:
    import torch_fl

    start = time.perf_counter_ns()
    for _ in range(n):
        x + y
    elapsed = time.perf_counter_ns() - start
    torch_fl.sim.drain_streams()
    return elapsed / n


def measure(variants: list[str], n: int, reps: int) -> dict:
    """ns per op for each variant, the variants interleaved round by round."""
    import torch
    from benchmarks.timing import summarize
    import torch_fl  # noqa: F401
    from torch.profiler import ProfilerActivity, profile

    x = torch.ones(4, device="flagos:0")
    y = torch.ones(4, device="flagos:0")
    _loop(x, y, n)  # warm up: executor cache, allocator
    activities = {"cpu": [ProfilerActivity.CPU], "device": [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]}
    samples = {v: [] for v in variants}
    for _ in range(reps):
        for v in variants:
            if v == "off":
                samples[v].append(_loop(x, y, n))
            else:
                with profile(activities=activities[v]):
                    samples[v].append(_loop(x, y, n))
    return {v: summarize(s) for v, s in samples.items()}


def _off_samples(n: int, reps: int) -> list[float]:
    import torch

    x = torch.ones(4, device="flagos:0")
    y = torch.ones(4, device="flagos:0")
    _loop(x, y, n)
    return [_loop(x, y, n) for _ in range(reps)]


# Loads this file by path: the other checkout has a `benchmarks` package of
# its own, and its torch_fl comes first on the path.
_SUBPROCESS = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("profiler_overhead", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps(module._off_samples(int(sys.argv[2]), int(sys.argv[3]))))
"""


def _subprocess_off(checkout: str, n: int, reps: int) -> list[float]:
    env = dict(os.environ, PYTHONPATH=checkout)
    out = subprocess.run([sys.executable, "-c", _SUBPROCESS, os.path.abspath(__file__), str(n), str(reps)],
                         env=env, cwd="/tmp", check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profiler_overhead")
    parser.add_argument("--against", metavar="CHECKOUT", help="another built checkout to time 'off' against")
    parser.add_argument("--rounds", type=int, default=5, help="alternating subprocess rounds with --against")
    parser.add_argument("--n", type=int, default=N)
    parser.add_argument("--reps", type=int, default=REPS)
    args = parser.parse_args(argv)
    from benchmarks.timing import summarize

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    result = {"ns_per_op": measure(["off", "cpu", "device"], args.n, args.reps)}
    if args.against:
        this, other, ratios = [], [], []
        for _ in range(args.rounds):
            a = _subprocess_off(here, args.n, args.reps)
            b = _subprocess_off(os.path.abspath(args.against), args.n, args.reps)
            this += a
            other += b
            ratios.append(statistics.median(a) / statistics.median(b))
        result["off_this_checkout"] = summarize(this)
        result["off_against"] = summarize(other)
        result["off_ratio_per_round"] = summarize(ratios)  # this / against, round by round
        result["against"] = os.path.abspath(args.against)
    for name, s in result["ns_per_op"].items():
        print(f"{name:>8}: {s['median']:8.0f} ns/op  (q1 {s['q1']:.0f}, q3 {s['q3']:.0f}, n {s['n']})")
    if args.against:
        for key in ("off_this_checkout", "off_against"):
            s = result[key]
            print(f"{key:>18}: {s['median']:8.0f} ns/op  (q1 {s['q1']:.0f}, q3 {s['q3']:.0f}, "
                  f"min {s['min']:.0f}, n {s['n']})")
        s = result["off_ratio_per_round"]
        print(f"{'this / against':>18}: {s['median']:8.3f}  (q1 {s['q1']:.3f}, q3 {s['q3']:.3f}, n {s['n']})")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
