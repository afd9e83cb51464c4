"""The machine description and the printed table."""

from __future__ import annotations

import os
import platform
import resource
import subprocess
import sys
import time

import torch

from benchmarks.generator import REPO


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _cpu_times() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs, from /proc/stat."""
    try:
        with open("/proc/stat", encoding="utf-8") as handle:
            fields = [int(v) for v in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


def cpu_busy(seconds: float) -> float | None:
    """Fraction of all CPUs busy over `seconds` while this process sleeps:
    how loaded the machine is by others."""
    first = _cpu_times()
    time.sleep(seconds)
    second = _cpu_times()
    if first is None or second is None or second[1] == first[1]:
        return None
    return round((second[0] - first[0]) / (second[1] - first[1]), 3)


class OthersLoad:
    """Fraction of all CPUs that other processes kept busy over a section:
    all CPU time spent (/proc/stat) less this process's and its children's."""

    def __init__(self):
        self._start = self._snapshot()

    @staticmethod
    def _snapshot() -> tuple[tuple[int, int] | None, float]:
        own = sum(getattr(resource.getrusage(who), field)
                  for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
                  for field in ("ru_utime", "ru_stime"))
        return _cpu_times(), own

    def fraction(self) -> float | None:
        (first, own_first), (second, own_second) = self._start, self._snapshot()
        if first is None or second is None or second[1] == first[1]:
            return None
        own_jiffies = (own_second - own_first) * os.sysconf("SC_CLK_TCK")
        others = (second[0] - first[0]) - own_jiffies
        return round(min(1.0, max(0.0, others / (second[1] - first[1]))), 3)


def _git_commit() -> str | None:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True)
    return done.stdout.strip() or None


def machine() -> dict:
    return {
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "git_commit": _git_commit(),
    }


def load_average() -> dict:
    return {"load_average": [round(v, 2) for v in os.getloadavg()]}


def load() -> dict:
    return {**load_average(), "cpu_busy_by_others": cpu_busy(1.0)}


# ---- the table ---------------------------------------------------------------

def _fmt(summary: dict, unit: str) -> tuple[str, str]:
    digits = {"ns": 0, "x": 3, "s": 3}[unit]
    f = lambda v: f"{v:,.{digits}f}"  # noqa: E731
    return f"{f(summary['median'])} {unit}", f"{f(summary['min'])} .. {f(summary['max'])}"


def rows(results: dict) -> list[tuple[str, str, str, str, str]]:
    """(figure, variant, median, min .. max, note) lines."""
    out = []
    host = results["figures"]["host"]

    def variants(figure: str, title: str, note=lambda name, v: ""):
        group = host[figure]
        if "variants" not in group:
            out.append((title, "-", "-", "-", group.get("status", "")))
            return
        for name, v in group["variants"].items():
            out.append((title, name, *_fmt(v["ns_per_op"], "ns"), note(name, v)))

    def calls(name, v):
        per_op = v.get("set_device_calls_per_op")
        return "" if per_op is None else f"set_device/op {per_op:g}"

    same = host["same_device"]
    variants("same_device", "same device x + y", calls)
    out.append(("same device x + y", "ratio guards on/off", *_fmt(same["guard_overhead_ratio"], "x"),
                f"target <= 1.02; set_device calls {same['set_device_calls_guards_on']}"))
    out.append(("same device x + y", "diff guards on - off", *_fmt(same["guard_overhead_ns"], "ns"), ""))
    out.append(("same device x + y", "ratio python hook/off", *_fmt(same["python_hook_vs_guards_off"]["ratio"], "x"),
                f"{same['python_hook_vs_guards_off']['diff_ns']['median']:+,.0f} ns"))
    if "c10_device_guard_vs_plain_cpp_call" in same:
        alt = same["c10_device_guard_vs_plain_cpp_call"]
        out.append(("same device x + y", "ratio c10 guard/plain call", *_fmt(alt["ratio"], "x"),
                    f"{alt['diff_ns']['median']:+,.0f} ns, both via pybind11"))
    variants("cpp_loops", "C++ loop", calls)
    if "guard_overhead_ratio" in host["cpp_loops"]:
        loops = host["cpp_loops"]
        if "launch_guard_alone" not in loops["variants"]:
            out.append(("C++ loop", "launch_guard_alone", "-", "-", loops["launch_guard_helper"]))
        out.append(("C++ loop", "ratio add guards on/off", *_fmt(loops["guard_overhead_ratio"], "x"),
                    f"{loops['guard_overhead_ns']['median']:+,.0f} ns"))
        out.append(("C++ loop", "ratio c10 guard+add / add", *_fmt(loops["c10_device_guard_ratio"], "x"),
                    f"{loops['c10_device_guard_ns']['median']:+,.0f} ns"))
    variants("cross_device", "cross device x + y", calls)
    if "cost_of_switch_and_restore_ns" in host["cross_device"]:
        out.append(("cross device x + y", "diff other - same device",
                    *_fmt(host["cross_device"]["cost_of_switch_and_restore_ns"], "ns"), "target 2 set_device/op"))
    variants("launch_path", "launch path")
    for op, cmp in host["launch_path"]["flagos_vs_cpu"].items():
        out.append(("launch path", f"ratio {op} flagos/cpu", *_fmt(cmp["ratio"], "x"),
                    f"{cmp['diff_ns']['median']:+,.0f} ns"))

    def cache_note(name, v):
        c = v.get("counts_over_timed_loops", {})
        ops = v.get("ops_timed", 1)
        return f"hits/op {c.get('executor_cache_hits', 0) / ops:g}, misses/op {c.get('executor_cache_misses', 0) / ops:g}"

    variants("executor_cache", "executor cache", cache_note)
    cache = host["executor_cache"]
    out.append(("executor cache", "ratio cache off/hit", *_fmt(cache["cache_off_vs_hit"]["ratio"], "x"), ""))
    out.append(("executor cache", "ratio scalar miss/hit", *_fmt(cache["scalar_miss_vs_hit"]["ratio"], "x"), ""))

    parts = host.get("breakdown", {}).get("ops", {})
    for name, op in parts.items():
        ns = op["ns_per_op"]
        ph = {k: v["median"] for k, v in op["phases_ns_per_op"].items()}
        out.append(("breakdown", f"{name} flagos / cpu", *_fmt(op["flagos_vs_cpu"], "x"),
                    f"{ns['flagos']['median']:,.0f} vs {ns['cpu']['median']:,.0f} ns"
                    + (f"; target <= {op['target']['flagos_vs_cpu_at_most']}" if "target" in op else "")))
        out.append(("breakdown", f"{name} phases (ns)", f"{ph['layer_net_of_probes']:,.0f} ns", "layer",
                    ", ".join(f"{k} {ph[k]:,.0f}" for k in ("dispatch_entry", "wrapper", "arg_conversion",
                                                            "cache_lookup", "phase_one", "launch_other",
                                                            "simulator"))
                    + f"; launches/op {op['per_op_counts']['launches']:g}"))

    gen = results["figures"]["generator"]
    syn = gen["synthetic_registry"]
    for name, run in gen["runs"].items():
        note = ""
        if "files_written" in run:
            note = f"files written {run['files_written']}"
        if run["exit_codes"] != [0]:
            note = (note + f"; exit codes {run['exit_codes']}").lstrip("; ")
        if name.startswith("synthetic"):
            note = (note + f"; {syn['ops']} ops ({syn['factor']}x)").lstrip("; ")
        out.append(("codegen", name, *_fmt(run["seconds"], "s"), note))

    build = results["figures"]["build"]
    tus = build["generated_translation_units"]
    out.append(("build", "generated TUs", str(tus["count"]), "", ", ".join(tus["bytes"])))
    comp = build["largest_unit_compile"]
    if "seconds" in comp:
        out.append(("build", f"compile {os.path.basename(comp['unit'])}", *_fmt(comp["seconds"], "s"), comp["flags"]))
    else:
        out.append(("build", "compile largest TU", "-", "-", comp["status"]))
    change = build["one_op_change"]
    if "files_written" in change:
        objects = change["objects_recompiled"]
        shown = ", ".join(os.path.basename(o) for o in objects) if isinstance(objects, list) else objects
        out.append(("build", "one-op YAML change", f"{len(change['files_written'])} file(s)", "",
                    f"{change['change']}: rewrites {', '.join(change['files_written'])}; recompiles {shown}"))
    else:
        out.append(("build", "one-op YAML change", "-", "-", change.get("status", "")))
    objects = build.get("last_build_objects", {})
    if "objects" in objects:
        largest = ", ".join(f"{name} {s} s" for name, s in list(objects["largest"].items())[:3])
        out.append(("build", "per object (last build)", f"{objects['median_seconds']} s",
                    f"{objects['min_seconds']} .. {objects['max_seconds']} s",
                    f"{objects['objects']} objects, {objects['sum_seconds']} s in all; largest {largest}"))
    added = build.get("new_op", {})
    if added.get("status") == "ok":
        planned = added["rebuild"]["rebuilt"]
        out.append(("build", f"new op {added['op']['op']} ({added['op']['aclnn']})", f"{added['rebuild']['seconds']} s",
                    "", f"incremental ninja: backend objects {len(planned['backend'])}, simulator objects "
                    f"{len(planned['simulator'])}, {planned['links']} links, {planned.get('cpu_seconds')} s of CPU; "
                    f"codegen {added['codegen']['seconds']} s"))
        change = added["one_op_change"]["rebuilt"]
        out.append(("build", "one-op change, rebuilt", f"{added['one_op_change']['seconds']} s", "",
                    f"{len(change['backend'])} backend object(s): "
                    + ", ".join(os.path.basename(o) for o in change["backend"] + change["simulator"])
                    + f", {change.get('cpu_seconds')} s of CPU"))
        family = added.get("new_family", {})
        if family.get("status") == "ok":
            planned = family["rebuild"]["rebuilt"]
            out.append(("build", f"new family {family['op']['family']} ({family['op']['op']})",
                        f"{family['rebuild']['seconds']} s", "",
                        f"incremental ninja with CMake's re-glob: backend objects {len(planned['backend'])}, "
                        f"simulator objects {len(planned['simulator'])}, {planned['links']} links"))
        else:
            out.append(("build", "new family", "-", "-", family.get("status", "not run")))
    else:
        out.append(("build", "new op", "-", "-", added.get("status", "")))
    clean = build.get("clean_build", {})
    if clean.get("status") == "ok":
        out.append(("build", "clean build", *_fmt(clean["seconds"], "s"),
                    f"cmake + ninja -j{clean['runs'][0]['jobs']} in an overlay, {len(clean['runs'])} run(s), "
                    f"{clean['runs'][0].get('cpu_seconds')} s of CPU (the first)"))
    else:
        out.append(("build", "clean build", "-", "-", clean.get("status", "")))
    return out


def table(results: dict) -> str:
    header = ("figure", "variant", "median", "min .. max", "note")
    lines = rows(results)
    widths = [max(len(str(r[i])) for r in [header, *lines]) for i in range(4)]
    text = []
    for r in [header, *lines]:
        cells = [str(r[i]).ljust(widths[i]) if i < 2 else str(r[i]).rjust(widths[i]) for i in range(4)]
        text.append("  ".join(cells + [r[4]]).rstrip())
    return "\n".join(text)
