"""Adding an op end to end, as docs/codegen.md "Adding an op" says, without
touching the repository: a throwaway unary op gets its ACLNN prototype, its
simulator operator and its registry entry, taken from the doc's own blocks
(`<!-- add-an-op: FILE -->`, appended to FILE; `<!-- add-an-op: new FILE -->`
creates FILE); then the doc's commands:
`python -m codegen` and `--docs`, an incremental `ninja` of the existing
build, the tests that pick the op up from the registry and `--check`; and
a call of the op on a flagos device.

Where: in a private mount namespace (`unshare -m`), the repository is
overlaid (overlayfs) with an empty upper folder in a temp dir, so the edits,
the regenerated files, the rebuilt objects and libraries all land in the
temp dir, while the build directory's objects, precompiled headers and ninja
state are reused as they are (same absolute paths, so nothing else looks
changed). Without mount namespaces the repository is copied and built from
scratch in the copy (slow: a clean build), and the result says so.

Also measured in the same overlay: which objects a one-op policy change
makes ninja rebuild, and how long that takes; and, with `new_family`, the
doc's "Adding an op of a new family": another throwaway op whose registry
file and simulator file are both new.

Used by `python -m benchmarks` (build section) and by
tests/generated/test_add_an_op.py. Run alone:
    python -m benchmarks.new_op [--tests] [--new-family] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join("build", "cmake")
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from codegen.docs import blocks  # noqa: E402


def _configure_command(root: str) -> list[str]:
    """setup.py's CMake configure command, for the tree at `root`."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("torch_fl_setup", os.path.join(root, "setup.py"))
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)
    return setup.cmake_configure_command(Path(root), Path(root) / BUILD)


@dataclass(frozen=True)
class Candidate:
    """A unary ATen op and the CANN operator that computes it (CANN's own prototype)."""

    op: str
    aclnn: str
    source: str  # hicann/<repo>/<path> of CANN's header
    param: str  # CANN's name of the input parameter
    low: float  # an input range inside the op's domain
    high: float
    family: str = ""  # a new family's name: yaml/ops/<family>.yaml, csrc/sim/opapi/ops_<family>.cc

    def family_files(self) -> list[str]:
        return [f"yaml/ops/{self.family}.yaml", f"csrc/sim/opapi/ops_{self.family}.cc"] if self.family else []


# The first one the registry does not have yet is the throwaway op; the first is the doc's example.
CANDIDATES = (
    Candidate("acosh", "aclnnAcosh", "hicann/ops-math/math/acosh/op_api/aclnn_acosh.h", "self", 1.1, 3.0),
    Candidate("asinh", "aclnnAsinh", "hicann/ops-math/math/asinh/op_api/aclnn_asinh.h", "input", -2.0, 2.0),
    Candidate("atanh", "aclnnAtanh", "hicann/ops-math/math/atanh/op_api/aclnn_atanh.h", "input", -0.9, 0.9),
)

# The same for "Adding an op of a new family": each candidate comes with a family the
# registry has no file of (once digamma's family is real, lgamma starts another one).
NEW_FAMILY = (
    Candidate("digamma", "aclnnDigamma", "hicann/ops-math/math/digamma/op_host/op_api/aclnn_digamma.h", "self",
              0.5, 4.0, "special_functions"),
    Candidate("lgamma", "aclnnLgamma", "hicann/ops-math/math/lgamma/op_host/op_api/aclnn_lgamma.h", "self",
              0.5, 4.0, "log_gamma"),
    Candidate("erfinv", "aclnnErfinv", "hicann/ops-nn/activation/erfinv/op_api/aclnn_erfinv.h", "self",
              -0.9, 0.9, "inverse_error_function"),
)

# The one-op change measured besides: one op's policy, first-tensor -> explicit-arg.
CHANGED_OP = "maximum"  # an entry of one op: a family entry (add.Tensor) changes its three forms
CHANGED_FILE = os.path.join("yaml", "ops", "binary.yaml")


def pick_candidate(root: str, candidates: tuple[Candidate, ...] = CANDIDATES) -> Candidate | None:
    """The first candidate neither the registry nor yaml/aclnn.yaml has (nor its family's files)."""
    texts = []
    for folder, _, files in os.walk(os.path.join(root, "yaml")):
        for name in files:
            if name.endswith(".yaml"):
                with open(os.path.join(folder, name), encoding="utf-8") as handle:
                    texts.append(handle.read())
    text = "\n".join(texts)
    for candidate in candidates:
        if not re.search(rf"^\s*-?\s*op:\s*{candidate.op}\s*$", text, re.M) and \
                not re.search(rf"^{candidate.aclnn}:", text, re.M) and \
                not any(os.path.exists(os.path.join(root, f)) for f in candidate.family_files()):
            return candidate
    return None


# ---- the edits ("Adding an op", steps 2 to 4, from the doc) ---------------

DOC = os.path.join("docs", "codegen.md")
SECTION = "Adding an op"
NEW_FAMILY_SECTION = "Adding an op of a new family"

# The doc's commands, run in this order (test_add_an_op checks the doc shows each).
CODEGEN = "python -m codegen"
DOCS = "python -m codegen --docs"
REBUILD = f"ninja -C {BUILD}"
TESTS = "python -m pytest tests/generated tests/device -k {op}"
CHECK = "python -m codegen --check"


@dataclass(frozen=True)
class Edit:
    """A block of the doc: the file it goes to, its text, and whether it creates the file."""

    target: str
    text: str
    new: bool


def _heading(lines: list[str], line: int) -> str:
    """The `## ` heading above 1-based line `line`."""
    for text in reversed(lines[:line - 1]):
        if text.startswith("## "):
            return text[3:].strip()
    return ""


def doc_edits(root: str, section: str = SECTION) -> list[Edit]:
    """The blocks of the doc's section `section`, in order, for its example (CANDIDATES[0],
    or NEW_FAMILY[0] in NEW_FAMILY_SECTION)."""
    with open(os.path.join(root, DOC), encoding="utf-8") as handle:
        text = handle.read()
    lines = text.split("\n")
    found = []
    for b in blocks(DOC, text):
        if b.kind == "add-an-op" and _heading(lines, b.line) == section:
            new, target = b.marker.startswith("new "), b.marker.removeprefix("new ").strip()
            found.append(Edit(target, b.body, new))
    if not found:
        raise RuntimeError(f"{DOC} has no `<!-- add-an-op: FILE -->` block under `## {section}`")
    return found


def for_candidate(text: str, target: str, c: Candidate, example: Candidate = CANDIDATES[0]) -> str:
    """The doc's example turned into candidate `c`: its names (its family's too), and CANN's name
    of its input in the prototype and the simulator. `target` is a path or a file's text."""
    text = text.replace(example.aclnn, c.aclnn).replace(example.source, c.source)
    if example.family:
        text = text.replace(example.family, c.family)
    text = re.sub(rf"\b{example.op}(?=\b|_)", c.op, text)
    if not target.startswith("yaml/ops/"):  # the registry's launch names ATen's argument, `self`
        text = re.sub(rf"\b{example.param}\b", c.param, text)
    return text


def add_op(root: str, c: Candidate, section: str = SECTION) -> list[str]:
    """Applies the doc's blocks of `section` for a new op to the tree at `root`: appends each to
    its file, or creates the file (`new`); returns the files."""
    example = NEW_FAMILY[0] if section == NEW_FAMILY_SECTION else CANDIDATES[0]
    targets = []
    for edit in doc_edits(root, section):
        target = edit.target.replace(example.family, c.family) if example.family else edit.target
        text = for_candidate(edit.text, edit.target, c, example)
        with open(os.path.join(root, target), "x" if edit.new else "a", encoding="utf-8") as handle:
            handle.write(text + "\n" if edit.new else "\n" + text + "\n")
        targets.append(target)
    return targets


def change_policy(root: str) -> None:
    path = os.path.join(root, CHANGED_FILE)
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    block = re.compile(rf"(- op: {re.escape(CHANGED_OP)}\n(?:  .*\n)*?)  guard: first-tensor\n")
    new_text, count = block.subn(r"\1  guard: explicit-arg\n  guard_arg: other\n", text, count=1)
    if count != 1:
        raise RuntimeError(f"{CHANGED_OP} with `guard: first-tensor` not found in {CHANGED_FILE}")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(new_text)


# ---- steps inside the overlay (or the copy) --------------------------------

def _command(line: str) -> list[str]:
    """A command of the doc, run with this interpreter."""
    words = line.split()
    return [sys.executable, *words[1:]] if words[0] == "python" else words


def _run(command: list[str], root: str, timeout: float = 3600) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=timeout)
    return round(time.perf_counter() - start, 2), done


def _edges(ninja_output: str) -> list[str]:
    """The edges ninja ran, from its output: "Building CXX object X", "Linking ..."."""
    lines = [re.sub(r"^\[\d+/\d+\]\s*", "", line) for line in ninja_output.splitlines() if line.startswith("[")]
    return [line for line in lines if not line.startswith(("Re-checking", "Re-running"))]


def _children_cpu_seconds() -> float:
    """User and system CPU time of the finished child processes and their own
    children (ninja's compilers): on a shared machine, what a build costs
    whatever else runs, where its wall time is not."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _build(root: str) -> tuple[float, subprocess.CompletedProcess, dict]:
    """An incremental `ninja` (both cores, as `pip install -e .` runs it): seconds, result, objects rebuilt
    (with `cpu_seconds`, the build's CPU time).
    (`ninja -n` cannot tell: CMake's glob check makes every dry run stop at "Re-running CMake".)"""
    cpu = _children_cpu_seconds()
    seconds, done = _run(_command(REBUILD) + [f"-j{os.cpu_count() or 2}"], root)
    return seconds, done, dict(_objects(_edges(done.stdout)), cpu_seconds=round(_children_cpu_seconds() - cpu, 1))


def _objects(lines: list[str]) -> dict:
    compiled = [line.split("Building CXX object ", 1)[1] for line in lines if "Building CXX object" in line]
    return {
        "backend": sorted(o for o in compiled if "CMakeFiles/flagos_backend" in o),
        "simulator": sorted(o for o in compiled if "flagos_sim" in o),
        "other": sorted(o for o in compiled if "CMakeFiles/flagos_backend" not in o and "flagos_sim" not in o),
        "links": sum("Linking" in line for line in lines),
    }


def _unit_sources(root: str, obj: str) -> list[str]:
    """The source files compiled into `obj` (a path under the build folder): the files a
    unity batch (".../Unity/unity_<n>_cxx.cxx.o") includes, else the object's own source."""
    if "/Unity/" not in obj:
        return [os.path.basename(obj)[:-len(".o")]]
    with open(os.path.join(root, BUILD, obj[:-len(".o")]), encoding="utf-8") as handle:
        return [os.path.basename(line.split('"')[1]) for line in handle if line.startswith("#include")]


RUN_OP = """
import json, sys, torch, torch_fl
op, aclnn, low, high = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
x = torch.linspace(low, high, 7)
torch.flagos.set_device(0)
torch_fl.sim.reset_stats()
y = getattr(torch, op)(x.to("flagos:1"))
stats = torch_fl.sim.stats()
print(json.dumps({
    "device": str(y.device),
    "matches_cpu": bool(torch.allclose(y.cpu(), getattr(torch, op)(x), equal_nan=True)),
    "launches": stats["op_launches"].get(aclnn, 0),
    "fallback_ops": stats["fallback_ops"],
}))
"""


def add_and_run(root: str, candidates: tuple[Candidate, ...], section: str, with_tests: bool) -> dict:
    """The doc's `section` for the first of `candidates` the registry lacks: its edits, then its
    commands (codegen, --docs, ninja, the tests with `with_tests`, --check) and a call of the op."""
    result: dict = {}
    candidate = pick_candidate(root, candidates)
    if candidate is None:
        return {"status": "unavailable: the registry already has every candidate op"}
    result["op"] = asdict(candidate)
    result["edited"] = add_op(root, candidate, section)

    seconds, done = _run(_command(CODEGEN), root)
    result["codegen"] = {"seconds": seconds, "exit": done.returncode, "output": done.stdout.strip()[-500:]}
    if done.returncode:
        return {**result, "status": f"failed: python -m codegen: {done.stderr[-2000:]}"}
    _, done = _run(_command(DOCS), root)
    result["docs"] = {"exit": done.returncode, "output": done.stdout.strip()[-500:]}
    if done.returncode:
        return {**result, "status": f"failed: {DOCS}: {done.stderr[-2000:]}"}
    seconds, done, built = _build(root)
    result["rebuild"] = {"seconds": seconds, "rebuilt": built, "exit": done.returncode,
                         "simulator_sources": {o: _unit_sources(root, o) for o in built["simulator"]}}
    if done.returncode:
        return {**result, "status": f"failed: the incremental build: {done.stdout[-3000:]}"}
    _, done = _run([sys.executable, "-c", RUN_OP, candidate.op, candidate.aclnn, str(candidate.low),
                    str(candidate.high)], root)
    if done.returncode:
        return {**result, "status": f"failed: calling torch.{candidate.op}: {done.stderr[-2000:]}"}
    result["call"] = json.loads(done.stdout.strip().splitlines()[-1])
    if with_tests:
        seconds, done = _run(_command(TESTS.format(op=candidate.op)) + ["-q", "-p", "no:cacheprovider"], root)
        tail = done.stdout.strip().splitlines()[-1:] or [""]
        result["tests"] = {"seconds": seconds, "exit": done.returncode, "summary": tail[0],
                           "output": done.stdout[-3000:] if done.returncode else ""}
    seconds, done = _run(_command(CHECK), root)
    result["check"] = {"seconds": seconds, "exit": done.returncode, "stderr": done.stderr.strip()[-1000:]}
    result["status"] = "ok"
    return result


def inside(root: str, configure: bool, with_tests: bool, new_family: bool = False) -> dict:
    """Every step, in the tree at `root` (the overlaid repository or a copy)."""
    result: dict = {"root": root}
    if configure:
        seconds, done = _run(_configure_command(root), root)
        if done.returncode:
            return {**result, "status": f"failed: cmake configure: {done.stderr[-2000:]}"}
    if not os.path.exists(os.path.join(root, BUILD, "build.ninja")):
        return {**result, "status": "unavailable: no configured build in build/cmake"}
    # The baseline: the build must be current before the change is timed.
    seconds, done, built = _build(root)
    if built["backend"] or built["simulator"] or built["links"]:
        result["baseline_build"] = {"seconds": seconds, "objects": built}
    if done.returncode:
        return {**result, "status": f"failed: baseline build: {done.stdout[-3000:]}"}

    added = add_and_run(root, CANDIDATES, SECTION, with_tests)
    result.update(added)
    if added["status"] != "ok":
        return result

    # A one-op policy change, on top: what does ninja rebuild?
    change_policy(root)
    _, done = _run([sys.executable, "-m", "codegen"], root)
    codegen_output = done.stdout.strip()
    seconds, done, built = _build(root)
    result["one_op_change"] = {
        "change": f"{CHANGED_FILE}: {CHANGED_OP} guard first-tensor -> explicit-arg (guard_arg: other)",
        "codegen_output": codegen_output, "seconds": seconds, "rebuilt": built, "exit": done.returncode}
    if new_family:  # on top of both: the objects they rebuilt are current again
        result["new_family"] = add_and_run(root, NEW_FAMILY, NEW_FAMILY_SECTION, with_tests)
    return result


def ninja_log_times(build_dir: str) -> dict[str, float]:
    """Seconds of the last run of each edge in build_dir/.ninja_log (output -> seconds)."""
    times: dict[str, float] = {}
    try:
        with open(os.path.join(build_dir, ".ninja_log"), encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("#"):
                    continue
                fields = line.rstrip("\n").split("\t")
                if len(fields) >= 4:
                    times[fields[3]] = (int(fields[1]) - int(fields[0])) / 1000
    except FileNotFoundError:
        pass
    return times


def object_times(build_dir: str) -> dict:
    """Per-object compile times (precompiled headers included) of the last build of each, from .ninja_log."""
    times = {out: s for out, s in ninja_log_times(build_dir).items()
             if out.endswith((".o", ".gch")) and os.path.exists(os.path.join(build_dir, out))}
    if not times:
        return {"status": "unavailable: no .ninja_log"}
    ordered = sorted(times.values())
    largest = sorted(times.items(), key=lambda item: -item[1])[:8]
    return {
        "objects": len(times),
        "sum_seconds": round(sum(ordered), 1),
        "median_seconds": round(ordered[len(ordered) // 2], 1),
        "min_seconds": round(ordered[0], 1),
        "max_seconds": round(ordered[-1], 1),
        "largest": {out.split("CMakeFiles/")[-1]: round(s, 1) for out, s in largest},
        "backend_sum_seconds": round(sum(s for o, s in times.items() if "CMakeFiles/flagos_backend" in o), 1),
        "simulator_sum_seconds": round(sum(s for o, s in times.items() if "flagos_sim" in o), 1),
    }


def clean_build(root: str) -> dict:
    """A build from scratch of the tree at `root` (its build directory removed first), as
    `pip install -e .` runs it: cmake configure, then ninja with both cores."""
    for path in (os.path.join(root, "build"), os.path.join(root, "torch_fl", "lib")):
        shutil.rmtree(path, ignore_errors=True)
    env = dict(os.environ, CCACHE_DISABLE="1")  # a cache hit is not a clean build
    cpu = _children_cpu_seconds()
    start = time.perf_counter()
    done = subprocess.run(_configure_command(root), cwd=root, capture_output=True, text=True, env=env)
    configure = time.perf_counter() - start
    if done.returncode:
        return {"status": f"failed: cmake: {done.stderr[-2000:]}"}
    done = subprocess.run(["ninja", "-C", BUILD, f"-j{os.cpu_count() or 2}"], cwd=root, capture_output=True,
                          text=True, env=env)
    total = time.perf_counter() - start
    if done.returncode:
        return {"status": f"failed: ninja: {done.stdout[-3000:]}"}
    return {"status": "ok", "seconds": round(total, 1), "configure_seconds": round(configure, 1),
            "cpu_seconds": round(_children_cpu_seconds() - cpu, 1), "jobs": os.cpu_count(),
            "per_object": object_times(os.path.join(root, BUILD))}


# ---- where: an overlay of the repository, else a copy ----------------------

def _unshare() -> list[str] | None:
    if shutil.which("unshare") is None:
        return None
    return ["unshare", "--mount"] + ([] if os.geteuid() == 0 else ["--map-root-user"])


def overlay_problem(workdir: str) -> str | None:
    """None when a private overlay mount works here, else why not."""
    unshare = _unshare()
    if unshare is None:
        return "no `unshare` command"
    probe = tempfile.mkdtemp(prefix="overlay_probe_", dir=workdir)
    for sub in ("lower", "upper", "work"):
        os.makedirs(os.path.join(probe, sub))
    lower = os.path.join(probe, "lower")
    script = (f"mount -t overlay overlay -o lowerdir={lower},upperdir={probe}/upper,workdir={probe}/work {lower}"
              f" && touch {lower}/written")
    done = subprocess.run(unshare + ["sh", "-c", script], capture_output=True, text=True)
    ok = done.returncode == 0 and not os.path.exists(os.path.join(lower, "written")) and \
        os.path.exists(os.path.join(probe, "upper", "written"))
    shutil.rmtree(probe, ignore_errors=True)
    return None if ok else f"no private overlay mount ({done.stderr.strip()[:200] or 'unexpected result'})"


def _copy_tree(workdir: str) -> str:
    """A copy of the sources (no build outputs, no git) for a build from scratch."""
    root = os.path.join(workdir, "repo")
    ignore = shutil.ignore_patterns(".git", "build", "__pycache__", "*.so", "results.json")
    shutil.copytree(REPO, root, ignore=ignore, symlinks=True)
    return root


def run(workdir: str, with_tests: bool = False, clean: bool = False, new_family: bool = False) -> dict:
    """Adds the throwaway op in an overlay (or a copy) of the repository; returns the figures.
    With `new_family`, then an op of a new family on top. With `clean`, builds the overlaid
    repository from scratch instead."""
    result_path = os.path.join(workdir, "new_op.json")
    problem = overlay_problem(workdir)
    if clean and problem is not None:
        return {"status": f"unavailable: {problem}"}
    if problem is None:
        upper, work = os.path.join(workdir, "upper"), os.path.join(workdir, "work")
        os.makedirs(upper)
        os.makedirs(work)
        inner = [sys.executable, "-m", "benchmarks.new_op", "--inside", REPO, "--out", result_path]
        inner += ["--tests"] if with_tests else []
        inner += ["--new-family"] if new_family else []
        inner += ["--clean"] if clean else []
        script = (f'mount -t overlay overlay -o "lowerdir={REPO},upperdir={upper},workdir={work}" "{REPO}" '
                  f'&& cd "{REPO}" && exec "$@"')
        done = subprocess.run(_unshare() + ["sh", "-c", script, "sh", *inner], capture_output=True, text=True)
        where = "an overlay of the repository (private mount namespace): the build directory is reused"
    else:
        root = _copy_tree(workdir)
        inner = [sys.executable, "-m", "benchmarks.new_op", "--inside", root, "--configure", "--out", result_path]
        inner += ["--tests"] if with_tests else []
        inner += ["--new-family"] if new_family else []
        done = subprocess.run(inner, cwd=root, capture_output=True, text=True)
        where = f"a copy of the repository built from scratch ({problem})"
    if not os.path.exists(result_path):
        return {"status": f"failed: exit {done.returncode}: {done.stderr[-3000:]}", "where": where}
    with open(result_path, encoding="utf-8") as handle:
        result = json.load(handle)
    result["where"] = where
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.new_op", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", action="store_true", help="also run the tests that pick the op up")
    parser.add_argument("--new-family", action="store_true",
                        help='then also "Adding an op of a new family": an op whose registry and simulator files are new')
    parser.add_argument("--clean", action="store_true",
                        help="instead: time a build from scratch of the overlaid repository (per-object times too)")
    parser.add_argument("--json", help="write the result here too")
    parser.add_argument("--inside", metavar="ROOT", help=argparse.SUPPRESS)
    parser.add_argument("--configure", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inside:
        if args.clean:
            result = clean_build(args.inside)
        else:
            result = inside(args.inside, args.configure, args.tests, args.new_family)
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=2)
        return 0
    with tempfile.TemporaryDirectory(prefix="flagos_new_op_", ignore_cleanup_errors=True) as workdir:
        result = run(workdir, args.tests, args.clean, args.new_family)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
    return 0 if result.get("status") == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
