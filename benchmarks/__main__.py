"""python -m benchmarks [--json PATH] [--quick]

Prints a table and writes the results as JSON (default
benchmarks/results.json). --quick is the CI smoke test: fewer, shorter
repetitions, no compile timing, and the C++ helpers only if already built.
It never judges the numbers: timings on shared machines are not pass/fail.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile
import time

from benchmarks.generator import REPO

FULL = {"ops_per_loop": 2000, "host_repetitions": 31, "tool_repetitions": 5, "compile_repetitions": 5,
        "model_repetitions": 11}
QUICK = {"ops_per_loop": 200, "host_repetitions": 5, "tool_repetitions": 1, "compile_repetitions": 0,
         "model_repetitions": 0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[1])
    parser.add_argument("--json", default=os.path.join(REPO, "benchmarks", "results.json"),
                        help="where to write the results (default benchmarks/results.json)")
    parser.add_argument("--quick", action="store_true", help="smoke test: small loops, few repetitions")
    parser.add_argument("--clean-builds", type=int, default=None, metavar="N",
                        help="builds from scratch to time (default 1, 0 with --quick); each takes minutes")
    args = parser.parse_args(argv)
    settings = dict(QUICK if args.quick else FULL)

    import torch
    import torch_fl  # noqa: F401  (registers the flagos device)

    from benchmarks import allreduce_bandwidth, build, executor_cache, generator, guard_ext, host, models, report

    started = time.perf_counter()
    # How busy other processes keep the machine (1 s of sampling, not in --quick).
    machine_load = report.load if not args.quick else report.load_average
    load_before = machine_load()
    print(f"torch {torch.__version__}, {settings}", file=sys.stderr)

    helpers = {"device_guard": guard_ext.load(guard_ext.DEVICE_GUARD, build=not args.quick),
               "launch_guard": guard_ext.load(guard_ext.LAUNCH_GUARD, build=not args.quick)}
    for name, (_, status) in helpers.items():
        print(f"C++ helper {name}: {status}", file=sys.stderr)

    n, reps = settings["ops_per_loop"], settings["host_repetitions"]
    others = {}  # section -> fraction of all CPUs that other processes used meanwhile
    meter = report.OthersLoad()
    figures = {"host": host.run_all(n, reps, helpers)}
    others["host"] = meter.fraction()
    # Counts, not times: measured in --quick too (fewer rounds of the cycle).
    figures["cache_hit_rates"] = executor_cache.run_all(args.quick)
    with tempfile.TemporaryDirectory(prefix="flagos_bench_") as workdir:
        # The generator's repetitions are whole processes: --quick runs one.
        meter = report.OthersLoad()
        figures["generator"] = generator.run_all(settings["tool_repetitions"], workdir)
        others["generator"] = meter.fraction()
        meter = report.OthersLoad()
        clean = args.clean_builds if args.clean_builds is not None else (0 if args.quick else 1)
        figures["build"] = build.run_all(settings["compile_repetitions"], workdir,
                                         with_compile=settings["compile_repetitions"] > 0,
                                         with_new_op=not args.quick, clean=clean)
        others["build"] = meter.fraction()
    if settings["model_repetitions"]:
        meter = report.OthersLoad()
        figures["models"] = models.run_all(settings["model_repetitions"])
        others["models"] = meter.fraction()
    if not args.quick:  # hccl (simulator) next to gloo, 2 processes, up to 64 MiB
        meter = report.OthersLoad()
        figures["allreduce"] = allreduce_bandwidth.run()
        others["allreduce"] = meter.fraction()

    same = figures["host"]["same_device"]
    results = {
        "benchmark": "torch_fl host overhead, generator and build",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "mode": "quick" if args.quick else "full",
        "guard_overhead_ratio": same["guard_overhead_ratio"]["median"],
        "guard_overhead_ns": same["guard_overhead_ns"]["median"],
        "guard_set_device_calls": same["set_device_calls_guards_on"],
        "machine": report.machine(),
        "load_before": load_before,
        "load_after": machine_load(),
        "cpu_busy_by_others_during": others,
        "settings": settings,
        "elapsed_seconds": round(time.perf_counter() - started, 1),
        "figures": figures,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=2)
        handle.write("\n")

    print(report.table(results))
    print("\n" + executor_cache.table(figures["cache_hit_rates"]))
    if "models" in figures:
        print("\n" + models.table(figures["models"]))
    if "allreduce" in figures:
        print("\n" + allreduce_bandwidth.table(figures["allreduce"]))
    print(f"\nguard_overhead_ratio {results['guard_overhead_ratio']:.4f} "
          f"({results['guard_overhead_ns']:+.0f} ns/op, {results['guard_set_device_calls']} set_device calls); "
          f"machine load {load_before['load_average']} -> {results['load_after']['load_average']}, "
          f"CPUs busy with other processes during {others}; "
          f"{results['elapsed_seconds']} s; written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
