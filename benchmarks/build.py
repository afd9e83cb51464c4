"""Build figures: the generated translation units, the compile time of the
largest one, what a one-op YAML change recompiles, the incremental rebuild
after adding an op with a new prototype and simulator operator, and builds
from scratch (benchmarks/new_op.py runs those two in an overlay of the
repository, so the real build directory is reused but never modified).

Nothing in build/cmake, yaml/ or csrc/generated/ is modified: the compile
writes its object to a temp file, and the YAML change happens in temp copies.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import subprocess

from benchmarks.generator import REPO, changed_files, codegen, mtimes
from benchmarks.timing import summarize, wall

GENERATED = os.path.join(REPO, "csrc", "generated")
CMAKE_BUILD = os.path.join(REPO, "build", "cmake")

# The change: one op's device policy, first-tensor -> explicit-arg on `other`.
CHANGED_OP = "maximum"  # an entry of one op: a family entry (add.Tensor) changes its three forms
CHANGED_FILE = os.path.join("ops", "binary.yaml")


def translation_units() -> dict:
    units = sorted(glob.glob(os.path.join(GENERATED, "*.cpp")))
    sizes = {os.path.basename(path): os.path.getsize(path) for path in units}
    return {"count": len(units), "bytes": sizes}


def _ninja(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ninja", "-C", CMAKE_BUILD, *args], capture_output=True, text=True)


def _compile_command(source: str) -> list[str] | None:
    """The build's own compile command of `source`, from `ninja -t commands`."""
    try:
        done = _ninja("-t", "commands")
    except FileNotFoundError:
        return None
    for line in done.stdout.splitlines():
        if line.rstrip().endswith(f" -c {source}"):
            return shlex.split(line)
    return None


def compile_time(reps: int, workdir: str) -> dict:
    """Seconds to compile the largest generated unit with the build's command."""
    units = translation_units()["bytes"]
    if not units:
        return {"status": "unavailable: csrc/generated has no .cpp"}
    largest = max(units, key=units.get)
    command = _compile_command(os.path.join(GENERATED, largest))
    if command is None:
        return {"status": "unavailable: no build/cmake ninja build with a command for " + largest}
    # Same flags, but a snapshot of the source (others may regenerate it
    # meanwhile) and the object and its dependency file in a temp folder.
    source = os.path.join(workdir, largest)
    shutil.copyfile(os.path.join(GENERATED, largest), source)
    for flag, path in (("-c", source), ("-o", os.path.join(workdir, "unit.o")),
                       ("-MF", os.path.join(workdir, "unit.o.d"))):
        command[command.index(flag) + 1] = path
    run = lambda: subprocess.run(command, cwd=CMAKE_BUILD, check=True, capture_output=True)  # noqa: E731
    run()  # warm-up: headers into the page cache
    seconds = [wall(run) for _ in range(reps)]
    return {
        "unit": f"csrc/generated/{largest}",
        "unit_bytes": units[largest],
        "seconds": summarize(seconds),
        "compiler": _compiler_version(command[0]),
        "flags": " ".join(arg for arg in command[1:] if arg.startswith(("-O", "-std", "-g"))),
    }


def _compiler_version(compiler: str) -> str:
    try:
        done = subprocess.run([compiler, "--version"], capture_output=True, text=True)
        return done.stdout.splitlines()[0]
    except (OSError, IndexError):
        return "unknown"


def _recorded_deps() -> dict[str, set[str]] | None:
    """object -> its dependencies, as ninja recorded them in build/cmake."""
    try:
        done = _ninja("-t", "deps")
    except FileNotFoundError:
        return None
    if done.returncode != 0 or not done.stdout:
        return None
    deps: dict[str, set[str]] = {}
    current = None
    for line in done.stdout.splitlines():
        if line and not line.startswith(" "):
            current = line.split(":", 1)[0]
            deps[current] = set()
        elif line.strip() and current:
            deps[current].add(line.strip())
    return deps


def _change_policy(binary_yaml: str) -> None:
    with open(binary_yaml, encoding="utf-8") as handle:
        text = handle.read()
    block = re.compile(rf"(- op: {re.escape(CHANGED_OP)}\n(?:  .*\n)*?)  guard: first-tensor\n")
    new_text, count = block.subn(r"\1  guard: explicit-arg\n  guard_arg: other\n", text, count=1)
    if count != 1:
        raise RuntimeError(f"{CHANGED_OP} with `guard: first-tensor` not found in {binary_yaml}")
    with open(binary_yaml, "w", encoding="utf-8") as handle:
        handle.write(new_text)


def one_op_change(workdir: str) -> dict:
    """Regenerates a temp copy of csrc/generated after changing one op's policy
    in a temp copy of yaml/; lists the files written and the objects to rebuild."""
    yaml_dir = os.path.join(workdir, "yaml")
    out_dir = os.path.join(workdir, "generated")
    header_dir = os.path.join(workdir, "aclnn")  # the ACLNN prototypes: the repository's stay untouched
    shutil.copytree(os.path.join(REPO, "yaml"), yaml_dir)
    shutil.copytree(GENERATED, out_dir)
    shutil.copytree(os.path.join(REPO, "csrc", "include", "flagos", "aclnn"), header_dir)
    # Baseline: the temp registry's path appears in every file's header, so
    # this first run rewrites them all; the change is measured after it.
    _, done = codegen("--yaml-dir", yaml_dir, "--out-dir", out_dir, "--header-dir", header_dir)
    if done.returncode != 0:
        return {"status": f"unavailable: the generator failed: {done.stderr.strip()[-300:]}"}
    try:
        _change_policy(os.path.join(yaml_dir, CHANGED_FILE))
    except RuntimeError as error:  # the registry moved on: say so instead of failing the run
        return {"status": f"unavailable: {error}"}
    before = mtimes(out_dir)
    _, done = codegen("--yaml-dir", yaml_dir, "--out-dir", out_dir, "--header-dir", header_dir)
    written = changed_files(before, mtimes(out_dir))
    deps = _recorded_deps()
    changed = {os.path.join(GENERATED, name) for name in written}
    objects = sorted(obj for obj, inputs in (deps or {}).items() if inputs & changed)
    return {
        "change": f"yaml/{CHANGED_FILE}: {CHANGED_OP} guard first-tensor -> explicit-arg (guard_arg: other)",
        "generator_output": done.stdout.strip(),
        "files_written": written,
        "objects_recompiled": objects if deps is not None else "unknown: no ninja deps in build/cmake",
        "objects_in_build": len(deps) if deps is not None else None,
    }


def new_op(workdir: str) -> dict:
    """A new op with a new prototype and simulator operator, rebuilt incrementally in an
    overlay of the repository (benchmarks/new_op.py); the objects a one-op change rebuilds;
    then an op of a new family (a new registry file and a new simulator file)."""
    from benchmarks import new_op as harness

    return harness.run(workdir, new_family=True)


def clean_builds(count: int, workdir: str) -> dict:
    """`count` builds from scratch, each in its own overlay; wall seconds and per-object times."""
    from benchmarks import new_op as harness

    runs = []
    for i in range(count):
        folder = os.path.join(workdir, f"clean{i}")
        os.makedirs(folder)
        runs.append(harness.run(folder, clean=True))
        if runs[-1].get("status") != "ok":
            return {"status": runs[-1].get("status"), "runs": runs}
    return {"status": "ok", "seconds": summarize([r["seconds"] for r in runs]), "runs": runs}


def run_all(reps: int, workdir: str, with_compile: bool, with_new_op: bool = False, clean: int = 0) -> dict:
    from benchmarks import new_op as harness

    result = {"generated_translation_units": translation_units()}
    # Per-object compile times of the repository's own build, as ninja logged them.
    result["last_build_objects"] = harness.object_times(CMAKE_BUILD)
    if with_compile:
        os.makedirs(os.path.join(workdir, "compile"), exist_ok=True)
        result["largest_unit_compile"] = compile_time(reps, os.path.join(workdir, "compile"))
    else:
        result["largest_unit_compile"] = {"status": "skipped in --quick"}
    os.makedirs(os.path.join(workdir, "change"), exist_ok=True)
    result["one_op_change"] = one_op_change(os.path.join(workdir, "change"))
    if with_new_op:
        os.makedirs(os.path.join(workdir, "new_op"), exist_ok=True)
        result["new_op"] = new_op(os.path.join(workdir, "new_op"))
    else:
        result["new_op"] = {"status": "skipped in --quick"}
    if clean:
        result["clean_build"] = clean_builds(clean, workdir)
    else:
        result["clean_build"] = {"status": "skipped (--clean-builds 0)"}
    return result
