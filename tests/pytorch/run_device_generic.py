#!/usr/bin/env python
"""Run PyTorch's own device-generic tests on the CPU and on flagos, and compare.

    python tests/pytorch/run_device_generic.py [DIR] [--files a.py,b.py] [-k EXPR]
           [--preset NAME] [--by-function]
           [--jobs N] [--device cpu|flagos|both] [--out DIR] [--json PATH]

DIR holds PyTorch's test files (test_view_ops.py, test_shape_ops.py,
test_indexing.py, test_unary_ufuncs.py), the test/ folder of a PyTorch
checkout at the tag of the installed torch; by default the folder named by
the environment variable FLAGOS_PYTORCH_TESTS. The project does not ship
them (docs/pytorch-tests.md says how to get them and how to run).

Each file runs under pytest in a subprocess per device:
- cpu: PYTORCH_TESTING_DEVICE_ONLY_FOR=cpu, torch_fl not imported;
- flagos: torch_fl imported before the test module (the plugin
  flagos_pytorch_outcomes does it), PYTORCH_TESTING_DEVICE_ONLY_FOR=privateuse1,
  so torch.testing._internal.common_device_type instantiates the tests for
  PrivateUse1TestBase (class suffix PRIVATEUSE1, device "flagos").

The plugin logs each test's start and outcome as it happens. A process that
dies (a signal, an abort) or stops making progress for --stall seconds is a
crash of the test it was running: the runner records it and starts pytest
again without the tests already done, so one crash never loses the rest of
the file.

The report: per file and in total, the tests that pass on the CPU, how many
of those pass on flagos, the ratio, the crashes, and the flagos failures of
CPU-passing tests grouped by cause (exception type and a normalized message).
--by-function prints the same per test function (the template a test was
instantiated from: test_out for TestCommonCPU::test_out_add_cpu_float32);
the JSON summary always has it, under files.<name>.functions.

A preset names a file and a -k selection (PRESETS below), e.g.
`--preset test-ops-contract`: the four argument and out= contract tests of
test_ops.py's TestCommon (test_errors, test_out, test_out_warning,
test_out_integral_dtype), about 2,300 tests per device.

The flagos subprocesses import torch_fl from $PYTHONPATH when it is set
(ahead of this checkout), so a build elsewhere can be measured:
PYTHONPATH=/path/to/other/checkout python tests/pytorch/run_device_generic.py ...
The summary's "torch_fl" lists the folders the flagos processes imported.
Not collected by the project's pytest run (no test_ prefix).
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEFAULT_FILES = ("test_view_ops.py", "test_shape_ops.py", "test_indexing.py", "test_unary_ufuncs.py")
DEVICE_ONLY_FOR = {"cpu": "cpu", "flagos": "privateuse1"}
ENV_FOLDER = "FLAGOS_PYTORCH_TESTS"

# name -> (files, -k selection, what it runs)
PRESETS = {
    "test-ops-contract": (
        ("test_ops.py",),
        # `-k` matches substrings of the test names: "test_errors" also picks
        # test_errors_sparse and "test_out" test_out_requires_grad_error, so
        # those two are excluded by name (no op name in op_db starts with
        # "sparse" among the test_errors ops, nor with "requires").
        "TestCommon and (test_errors or test_out) and not test_errors_sparse "
        "and not test_out_requires_grad_error",
        "test_ops.py TestCommon: test_errors, test_out, test_out_warning, test_out_integral_dtype",
    ),
}


def default_folder() -> Path | None:
    """The folder of PyTorch's test files named by $FLAGOS_PYTORCH_TESTS, if set."""
    value = os.environ.get(ENV_FOLDER, "").strip()
    return Path(value).expanduser().resolve() if value else None


def run_file(folder: Path, name: str, device: str, out_dir: Path, stall: float, log,
             select: str | None = None, *, env_extra: dict | None = None,
             log_name: str | None = None) -> dict:
    """Runs one file for one device; returns {nodeid: record} and the crash list.

    `env_extra` is added to the subprocess's environment (the HF runner's
    device variables, FLAGOS_STRICT); `log_name` names the per-test logs in
    `out_dir` instead of `{name}.{device}` (a path or a second flagos mode)."""
    log_name = log_name or f"{name}.{device}"
    outcomes_path = out_dir / f"{log_name}.jsonl"
    done_path = out_dir / f"{log_name}.done"
    for p in (outcomes_path, done_path):
        if p.exists():
            p.unlink()
    env = dict(os.environ)
    env.update({
        "FLAGOS_PT_DEVICE": device,
        "FLAGOS_PT_OUTCOMES": str(outcomes_path),
        "FLAGOS_PT_DONE": str(done_path),
        "PYTORCH_TESTING_DEVICE_ONLY_FOR": DEVICE_ONLY_FOR[device],
        # The caller's PYTHONPATH comes before this checkout, so that another
        # checkout's build can be measured with this runner.
        "PYTHONPATH": os.pathsep.join(
            [str(HERE)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p] + [str(ROOT)]),
        "PYTHONUNBUFFERED": "1",
    })
    env.update(env_extra or {})
    env.setdefault("OMP_NUM_THREADS", "1")
    # --confcutdir: no conftest.py of the project (tests/conftest.py sets the
    # launch sanitizer and per-test resets) applies to PyTorch's files.
    cmd = [sys.executable, "-m", "pytest", name, "-q", "-p", "flagos_pytorch_outcomes",
           "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", str(folder),
           "--confcutdir", str(folder), "--tb=no", "--no-header", "-rN"]
    if select:
        cmd += ["-k", select]
    results: dict[str, dict] = {}
    crashes: list[dict] = []
    funcs: dict[str, str] = {}  # nodeid -> test function, from the start lines
    imported: set[str] = set()  # torch_fl folders the flagos processes imported
    attempts = 0
    started = time.monotonic()
    while True:
        attempts += 1
        proc = subprocess.Popen(cmd, cwd=folder, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        stderr_tail = collections.deque(maxlen=40)

        def pump():
            for line in proc.stderr:
                stderr_tail.append(line)

        import threading
        t = threading.Thread(target=pump, daemon=True)
        t.start()
        last_size, last_change = -1, time.monotonic()
        stalled = False
        while proc.poll() is None:
            time.sleep(1.0)
            size = outcomes_path.stat().st_size if outcomes_path.exists() else 0
            if size != last_size:
                last_size, last_change = size, time.monotonic()
            elif time.monotonic() - last_change > stall:
                stalled = True
                proc.kill()
                proc.wait()
                break
        t.join(timeout=5)
        rc = proc.returncode
        running = None
        if outcomes_path.exists():
            with open(outcomes_path) as f:
                for line in f:
                    try:
                        rec = json.loads(line)
                    except json.JSONDecodeError:
                        continue  # a line cut by the crash
                    if rec["event"] == "session":
                        imported.add(rec.get("torch_fl", "?"))
                        continue
                    if rec.get("func"):
                        funcs[rec["nodeid"]] = rec["func"]
                    if rec["event"] == "start":
                        running = rec["nodeid"]
                    elif rec["nodeid"] not in results:
                        results[rec["nodeid"]] = rec
                        if rec["nodeid"] == running:
                            running = None
                    elif rec["nodeid"] == running:
                        running = None
        # pytest exits 0 (all passed), 1 (failures), 5 (nothing collected);
        # 2..4 are usage/internal errors, negative codes a signal.
        if rc in (0, 1, 5) and not stalled:
            break
        if running is None:
            # Died outside a test (collection, import): nothing to resume.
            crashes.append({"nodeid": f"{name}::<outside a test>", "returncode": rc,
                            "stderr": "".join(stderr_tail)[-3000:]})
            break
        kind = "stalled" if stalled else f"returncode {rc}"
        results[running] = {"event": "end", "nodeid": running, "outcome": "crashed",
                            "func": funcs.get(running),
                            "message": f"process died ({kind}): " + "".join(stderr_tail)[-1500:]}
        crashes.append({"nodeid": running, "func": funcs.get(running), "returncode": rc,
                        "stalled": stalled, "stderr": "".join(stderr_tail)[-3000:]})
        log(f"  {log_name}: crash in {running} ({kind}); resuming")
        with open(done_path, "w") as f:
            f.write("\n".join(results) + "\n")
    return {"results": results, "crashes": crashes, "attempts": attempts,
            "seconds": round(time.monotonic() - started, 1), "torch_fl": sorted(imported)}


_DEVICE_IN_NAME = re.compile(r"_(cpu|flagos)(?=_|$)")
_CLASS_SUFFIX = re.compile(r"(CPU|PRIVATEUSE1|FLAGOS)::")


def generic_id(nodeid: str) -> str:
    """test_x.py::TestFooCPU::test_bar_cpu_float32 -> test_x.py::TestFoo::test_bar_DEV_float32.

    The device is the last `_cpu` / `_flagos` token before any pytest
    parameters: PyTorch puts it after the test and op names and before the
    dtype (TestCommonCPU::test_out_nn_functional_conv2d_cpu_float32)."""
    cls_and_name = _CLASS_SUFFIX.sub("::", nodeid, count=1)
    head, _, test = cls_and_name.rpartition("::")
    name, bracket, params = test.partition("[")
    last = None
    for last in _DEVICE_IN_NAME.finditer(name):
        pass
    if last is not None:
        name = name[: last.start()] + "_DEV" + name[last.end():]
    return head + "::" + name + bracket + params


_CPU_ONLY = re.compile(r"Only runs on cpu")

_NORMALIZERS = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"(?<![A-Za-z_])-?\d+(\.\d+)?(e[-+]?\d+)?"), "N"),
    (re.compile(r"\s+"), " "),
]


def cause_of(message: str, root: str | None = None, unwrapped: str | None = None) -> str:
    """The first line of a failure, with numbers and addresses normalized; the
    test's own exception when PyTorch's OpInfo sample tracking re-raised it as
    `Exception: ...` (`unwrapped`, from the plugin), and the innermost one when
    assertEqual wrapped it ("Comparing ...")."""
    text = (unwrapped or message or "").strip()
    if root and (text.startswith("RuntimeError: Comparing") or not text):
        text = root
    lines = [l for l in text.splitlines() if l.strip()]
    first = lines[0] if lines else "(no message)"
    # Python assertion messages of assertEqual carry the values on later lines.
    for pattern, repl in _NORMALIZERS:
        first = pattern.sub(repl, first)
    return first[:220]


def _by_function(cpu_results: dict, fl_results: dict, fl_crashes: list, failing: dict) -> dict:
    """Per test function (the template a test was made from: test_out, ...):
    CPU passes, flagos passes of those, crashes, and the causes of the flagos
    failures of CPU-passing tests (`failing`: generic id -> cause)."""
    rows: dict[str, dict] = {}
    fl_by_id = {generic_id(n): r for n, r in fl_results.items()}

    def row(func):
        return rows.setdefault(func or "?", {"cpu_passed": 0, "flagos_passed_of_cpu_passed": 0,
                                             "flagos_crashes": 0, "causes": collections.Counter(),
                                             "examples": {}})

    for n, r in cpu_results.items():
        if r["outcome"] != "passed":
            continue
        gid = generic_id(n)
        rec = fl_by_id.get(gid)
        x = row(r.get("func") or (rec or {}).get("func"))
        x["cpu_passed"] += 1
        if rec is not None and rec["outcome"] == "passed":
            x["flagos_passed_of_cpu_passed"] += 1
        elif gid in failing:
            x["causes"][failing[gid]] += 1
            x["examples"].setdefault(failing[gid], rec["nodeid"] if rec else gid)
    for c in fl_crashes:
        row(c.get("func") or fl_results.get(c["nodeid"], {}).get("func"))["flagos_crashes"] += 1
    for x in rows.values():
        x["ratio"] = round(x["flagos_passed_of_cpu_passed"] / max(1, x["cpu_passed"]), 4)
        examples = x.pop("examples")
        x["causes"] = [{"count": k, "cause": c, "example": examples[c]}
                       for c, k in x["causes"].most_common()]
    return dict(sorted(rows.items()))


def summarize(per_file: dict, files: list[str]) -> dict:
    summary = {"files": {}, "total": {}, "causes": {}, "crashes": []}
    causes: collections.Counter = collections.Counter()
    examples: dict[str, str] = {}
    failing: dict[str, str] = {}  # generic id -> cause, of CPU-passing tests not passing on flagos
    tot = collections.Counter()
    for name in files:
        cpu = per_file.get((name, "cpu"))
        fl = per_file.get((name, "flagos"))
        row = {}
        if cpu is not None:
            cpu_pass = {generic_id(n) for n, r in cpu["results"].items() if r["outcome"] == "passed"}
            row["cpu_passed"] = len(cpu_pass)
            row["cpu_seconds"] = cpu["seconds"]
        if fl is not None:
            fl_by_id = {generic_id(n): r for n, r in fl["results"].items()}
            row["flagos_seconds"] = fl["seconds"]
            row["flagos_crashes"] = len(fl["crashes"])
            row["flagos_outcomes"] = dict(collections.Counter(r["outcome"] for r in fl["results"].values()))
            summary["crashes"] += fl["crashes"]
        if cpu is not None and fl is not None:
            both = 0
            cpu_only = 0  # @onlyCPU tests: skipped on every other device, CUDA included
            failing_here: dict[str, str] = {}
            for gid in sorted(cpu_pass):
                rec = fl_by_id.get(gid)
                if rec is not None and rec["outcome"] == "passed":
                    both += 1
                    continue
                if rec is None:
                    key = "not run on flagos (not collected)"
                elif rec["outcome"] == "skipped":
                    key = "skipped on flagos: " + cause_of(rec.get("message", ""))
                    if _CPU_ONLY.search(rec.get("message", "")):
                        cpu_only += 1
                elif rec["outcome"] == "crashed":
                    key = "CRASH"
                else:
                    key = cause_of(rec.get("message", ""), rec.get("root"), rec.get("unwrapped"))
                causes[key] += 1
                examples.setdefault(key, rec["nodeid"] if rec else gid)
                failing[gid] = key
                failing_here[gid] = key
            row["flagos_passed_of_cpu_passed"] = both
            row["ratio"] = round(both / max(1, len(cpu_pass)), 4)
            row["cpu_only"] = cpu_only
            row["ratio_device_generic"] = round(both / max(1, len(cpu_pass) - cpu_only), 4)
            row["functions"] = _by_function(cpu["results"], fl["results"], fl["crashes"], failing_here)
            tot["cpu_passed"] += len(cpu_pass)
            tot["both"] += both
            tot["cpu_only"] += cpu_only
            tot["crashes"] += len(fl["crashes"])
        summary["files"][name] = row
    if tot["cpu_passed"]:
        summary["total"] = {"cpu_passed": tot["cpu_passed"], "flagos_passed_of_cpu_passed": tot["both"],
                            "ratio": round(tot["both"] / tot["cpu_passed"], 4), "crashes": tot["crashes"],
                            "cpu_only": tot["cpu_only"],
                            "ratio_device_generic": round(tot["both"] / max(1, tot["cpu_passed"] - tot["cpu_only"]), 4)}
    summary["causes"] = [{"count": c, "cause": k, "example": examples[k]} for k, c in causes.most_common()]
    summary["failing"] = failing
    return summary


def run(folder: Path, files: list[str], devices: list[str], out: Path | None = None, *,
        select: str | None = None, stall: float = 600.0, jobs: int = 1) -> dict:
    """Runs `files` of `folder` on `devices`; returns the summary (see summarize).
    Per-device logs already in `out` stand in for a device not run now."""
    out_dir = (out or Path(tempfile.mkdtemp(prefix="flagos-pytorch-tests-"))).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    work = [(f, d) for f in files for d in devices]
    per_file = {}
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(run_file, folder, f, d, out_dir, stall, log, select): (f, d) for f, d in work}
        for fut in concurrent.futures.as_completed(futures):
            f, d = futures[fut]
            per_file[(f, d)] = res = fut.result()
            counts = collections.Counter(r["outcome"] for r in res["results"].values())
            log(f"{f} [{d}]: {dict(counts)} in {res['seconds']} s")
    # Reuse earlier per-device logs when only one device ran now.
    for f in files:
        for d in ("cpu", "flagos"):
            if (f, d) not in per_file and (out_dir / f"{f}.{d}.jsonl").exists():
                results = {}
                for line in open(out_dir / f"{f}.{d}.jsonl"):
                    try:
                        rec = json.loads(line)
                    except json.JSONDecodeError:
                        continue
                    if rec["event"] == "end":
                        results.setdefault(rec["nodeid"], rec)
                per_file[(f, d)] = {"results": results, "crashes": [], "attempts": 0, "seconds": 0,
                                    "torch_fl": []}

    summary = summarize(per_file, files)
    summary["seconds"] = round(time.monotonic() - t0, 1)
    summary["logs"] = str(out_dir)
    summary["select"] = select
    summary["torch_fl"] = sorted({p for res in per_file.values() for p in res.get("torch_fl", [])})
    return summary


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, nargs="?", default=None,
                    help=f"folder with PyTorch's test files (PyTorch's test/; default: ${ENV_FOLDER})")
    ap.add_argument("--files", default=None, help=f"default: {','.join(DEFAULT_FILES)}")
    ap.add_argument("-k", dest="select", default=None, help="pytest -k expression for every file")
    ap.add_argument("--preset", choices=sorted(PRESETS), default=None,
                    help="a file and -k selection by name: "
                         + "; ".join(f"{k}: {v[2]}" for k, v in sorted(PRESETS.items())))
    ap.add_argument("--by-function", action="store_true",
                    help="also print the comparison per test function (on with --preset)")
    ap.add_argument("--device", choices=("cpu", "flagos", "both"), default="both")
    ap.add_argument("--jobs", type=int, default=1, help="pytest subprocesses at once (each single-threaded)")
    ap.add_argument("--out", type=Path, default=None, help="per-test logs (default: a temp dir)")
    ap.add_argument("--json", type=Path, default=None, help="write the summary as JSON here")
    ap.add_argument("--stall", type=float, default=600.0, help="seconds without progress that count as a hang")
    ap.add_argument("--top", type=int, default=40, help="failure causes to print")
    args = ap.parse_args(argv)

    folder = args.folder.resolve() if args.folder else default_folder()
    if folder is None:
        print(f"no folder of PyTorch's test files: pass it, or set {ENV_FOLDER} "
              "(docs/pytorch-tests.md says how to get them)", file=sys.stderr)
        return 2
    if args.preset:
        if args.files is not None or args.select is not None:
            print("--preset names the files and the -k selection; pass neither with it", file=sys.stderr)
            return 2
        preset_files, args.select, _ = PRESETS[args.preset]
        args.files = ",".join(preset_files)
        args.by_function = True
    files = [f for f in (args.files or ",".join(DEFAULT_FILES)).split(",") if f]
    missing = [f for f in files if not (folder / f).exists()]
    if missing:
        print(f"missing in {folder}: {', '.join(missing)}", file=sys.stderr)
        return 2
    devices = ["cpu", "flagos"] if args.device == "both" else [args.device]
    summary = run(folder, files, devices, args.out, select=args.select, stall=args.stall, jobs=args.jobs)
    print(f"\n{'file':<24} {'cpu pass':>9} {'flagos pass':>12} {'ratio':>8} {'crashes':>8} "
          f"{'onlyCPU':>8} {'ratio w/o onlyCPU':>18}")
    for name, row in summary["files"].items():
        if "ratio" in row:
            print(f"{name:<24} {row['cpu_passed']:>9} {row['flagos_passed_of_cpu_passed']:>12} "
                  f"{100 * row['ratio']:>7.2f}% {row['flagos_crashes']:>8} {row['cpu_only']:>8} "
                  f"{100 * row['ratio_device_generic']:>17.2f}%")
    if summary["total"]:
        t = summary["total"]
        print(f"{'total':<24} {t['cpu_passed']:>9} {t['flagos_passed_of_cpu_passed']:>12} "
              f"{100 * t['ratio']:>7.2f}% {t['crashes']:>8} {t['cpu_only']:>8} "
              f"{100 * t['ratio_device_generic']:>17.2f}%")
        if args.by_function:
            for name, row in summary["files"].items():
                funcs = row.get("functions", {})
                print(f"\n{name}, per test function:\n{'function':<40} {'cpu pass':>9} {'flagos pass':>12} "
                      f"{'ratio':>8} {'crashes':>8}")
                for func, frow in funcs.items():
                    print(f"{func:<40} {frow['cpu_passed']:>9} {frow['flagos_passed_of_cpu_passed']:>12} "
                          f"{100 * frow['ratio']:>7.2f}% {frow['flagos_crashes']:>8}")
                for func, frow in funcs.items():
                    if frow["causes"]:
                        print(f"\n{name} {func}: flagos failures of CPU-passing tests, by cause (top {args.top}):")
                        for c in frow["causes"][: args.top]:
                            print(f"{c['count']:>6}  {c['cause']}\n        e.g. {c['example']}")
        print(f"\nflagos failures of CPU-passing tests, by cause (top {args.top}):")
        for c in summary["causes"][: args.top]:
            print(f"{c['count']:>6}  {c['cause']}\n        e.g. {c['example']}")
    for c in summary["crashes"]:
        print(f"CRASH {c['nodeid']} (returncode {c.get('returncode')})")
    if summary["torch_fl"]:
        print(f"flagos processes imported torch_fl from: {', '.join(summary['torch_fl'])}")
    print(f"\n{summary['seconds']} s; per-test logs in {summary['logs']}")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
