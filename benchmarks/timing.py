"""Interleaved repetitions and their summaries.

Every comparison runs its variants in turn, A B C A B C ..., so that drift
(another process's build, CPU frequency, cache state) hits all of them
alike. A figure is the median over the repetitions, with min, max and the
interquartile range as its spread; ratios and differences are taken per
repetition (A_i / B_i of the same round) and then summarized the same way.
"""

from __future__ import annotations

import gc
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Optional


def summarize(values: list[float]) -> dict:
    """Median and spread of a list of samples."""
    ordered = sorted(values)
    if len(ordered) >= 2:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1 = q3 = ordered[0]
    return {
        "median": statistics.median(ordered),
        "min": ordered[0],
        "max": ordered[-1],
        "q1": q1,
        "q3": q3,
        "n": len(ordered),
    }


def paired(a: list[float], b: list[float], how: str) -> dict:
    """Summary of a_i / b_i ("ratio") or a_i - b_i ("diff") over the rounds."""
    if how == "ratio":
        return summarize([x / y for x, y in zip(a, b)])
    return summarize([x - y for x, y in zip(a, b)])


def compare(a: list[float], b: list[float]) -> dict:
    """Variant A against variant B, round by round: ratio and difference."""
    return {"ratio": paired(a, b, "ratio"), "diff_ns": paired(a, b, "diff")}


@dataclass
class Variant:
    """One way of doing the measured thing.

    `run(n)` performs n operations; it may return the elapsed nanoseconds it
    measured itself (a C++ loop does), else the harness times the call.
    `enter`/`leave` switch the configuration around each sample, outside
    the timed region; `probe` reads counters after the sample (also outside).
    """

    name: str
    run: Callable[[int], Optional[int]]
    enter: Callable[[], None] = lambda: None
    leave: Callable[[], None] = lambda: None
    samples: list[float] = field(default_factory=list)  # ns per op, one per round
    counters: dict[str, float] = field(default_factory=dict)  # summed over the timed rounds
    wall_samples: list[float] = field(default_factory=list)  # wall ns per op, when `samples` are CPU time
    rounds: list[dict] = field(default_factory=list)  # what `after` returned, per round


# The clocks a comparison can time with. Wall time is the default. On a
# shared, loaded machine the process's CPU time (all its threads) leaves out
# the time the process waited for a core, which otherwise lands at random
# in whichever variant was running.
# thread_cpu: the calling thread alone, without the simulated streams' worker
# threads (the "device"), which run queued work beside it.
CLOCKS = {"wall": time.perf_counter_ns, "process_cpu": time.process_time_ns, "thread_cpu": time.thread_time_ns}


def _sample(variant: Variant, n: int, before: Callable[[], None], after: Callable[[], dict],
            clock: str = "wall") -> tuple[float, float, dict]:
    """(ns per op by `clock`, wall ns per op, counters)."""
    read = CLOCKS[clock]
    variant.enter()
    try:
        before()
        gc.disable()
        try:
            start, wall_start = read(), time.perf_counter_ns()
            measured = variant.run(n)
            elapsed, wall = read() - start, time.perf_counter_ns() - wall_start
        finally:
            gc.enable()
        counts = after()
    finally:
        variant.leave()
    if measured is not None:  # a C++ loop timed itself (wall)
        elapsed = wall = measured
    return elapsed / n, wall / n, counts


def interleave(variants: list[Variant], n: int, reps: int,
               before: Callable[[], None] = lambda: None,
               after: Callable[[], dict] = lambda: {}, clock: str = "wall") -> list[Variant]:
    """One warm-up sample of each variant, then `reps` rounds of A B C ...

    `before` resets counters right before each timed loop and `after` reads
    them right after it; the counts are summed per variant over the rounds
    (numbers only), and each round's are kept in `rounds`. `clock` is
    "wall", "process_cpu" or "thread_cpu" (CLOCKS); wall time is kept in `wall_samples`.
    """
    gc.collect()
    for variant in variants:
        _sample(variant, n, before, after, clock)
    for _ in range(reps):
        for variant in variants:
            ns, wall, counts = _sample(variant, n, before, after, clock)
            variant.samples.append(ns)
            variant.wall_samples.append(wall)
            variant.rounds.append(counts)
            for key, value in counts.items():
                if isinstance(value, (int, float)):
                    variant.counters[key] = variant.counters.get(key, 0) + value
    return variants


def wall(run: Callable[[], None]) -> float:
    """Seconds of one call."""
    start = time.perf_counter_ns()
    run()
    return (time.perf_counter_ns() - start) / 1e9
