"""Wall time of `python -m codegen`: full regeneration, no-op regeneration
and --check, for the real registry and a synthetic one ~10x its size.

Every run is a fresh `python -m codegen` process (what a developer or CI
waits for), writing into temp folders: the repository's yaml/ and
csrc/generated/ are never touched.
"""

from __future__ import annotations

import copy
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter

import yaml


class _NoAliasDumper(yaml.SafeDumper):
    """The registry refuses YAML aliases: the copies write every value out."""

    def ignore_aliases(self, data) -> bool:
        return True

from benchmarks.timing import summarize

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed_run(command: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    """Seconds and result of one process run from the repository root."""
    start = time.perf_counter_ns()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    return (time.perf_counter_ns() - start) / 1e9, done


def codegen(*args: str) -> tuple[float, subprocess.CompletedProcess]:
    """Seconds and result of one `python -m codegen ARGS`."""
    return timed_run([sys.executable, "-m", "codegen", *args])


def mtimes(folder: str) -> dict[str, int]:
    return {name: os.stat(os.path.join(folder, name)).st_mtime_ns for name in sorted(os.listdir(folder))}


def changed_files(before: dict[str, int], after: dict[str, int]) -> list[str]:
    """Files written, created or removed between two mtime snapshots."""
    return sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name))


# ---- the synthetic registry ------------------------------------------------

def _referenced_names(entry: dict) -> set[str]:
    text = " ".join(str(entry.get(key, "")) for key in ("launch", "wrapped_number", "out", "guard_arg"))
    return set(re.findall(r"[A-Za-z_]\w*", text))


def _profile(schema, names: set[str]) -> tuple:
    """What an entry's expressions and shape see of a schema."""
    tensors = tuple((a.name, a.type, a.is_out) for a in schema.arguments if a.is_tensor_like)
    referenced = tuple(sorted((a.name, a.type) for a in schema.arguments if a.name in names))
    # Structured ops take no output rules (ATen's meta function computes them).
    return (tensors, referenced, schema.returns, schema.returns_ref, schema.inplace, schema.has_tensor_options,
            schema.structured is not None)


def _entries(yaml_dir: str) -> dict[str, list[dict]]:
    files = {}
    for path in sorted(glob.glob(os.path.join(yaml_dir, "ops", "*.yaml"))):
        with open(path, encoding="utf-8") as handle:
            files[os.path.basename(path)] = yaml.safe_load(handle) or []
    return files


def _validation_failures(yaml_dir: str) -> set[str]:
    """Ops the generator rejects in the registry at `yaml_dir` (in-process, no writes)."""
    from codegen.errors import RegistryError
    from codegen.main import generate
    from codegen.registry import Paths
    from codegen.schemas import aten_schemas

    try:
        generate(Paths(REPO, yaml_dir), aten_schemas())
    except RegistryError as error:
        failed = {problem.op for problem in error.problems}
        if None in failed:
            raise  # a problem not tied to one op: the synthetic registry is broken
        return failed
    return set()


def build_synthetic_registry(source: str, dest: str, factor: int = 10) -> dict:
    """Copies the registry at `source` to `dest` and adds copies of its op entries under other real
    ATen overloads whose schema fits the same entry, round-robin over the
    entries, until the registry is `factor` times its size or torch runs out.

    A copy keeps its entry's shape, launch, output rules and policy; only the
    overload changes, so the generator does the same work per op (the
    generated wrapper is not meant to be compiled or run). Candidates the
    generator rejects are dropped and replaced.
    """
    from codegen.families import FAMILY_KEYS
    from codegen.schemas import aten_schemas

    shutil.copytree(source, dest)
    schemas = aten_schemas()
    files = _entries(dest)
    with open(os.path.join(dest, "handwritten.yaml"), encoding="utf-8") as handle:
        handwritten = {entry["op"] for entry in yaml.safe_load(handle) or []}
    templates = [(name, entry) for name, entries in files.items() for entry in entries]
    taken = {entry["op"] for _, entry in templates} | handwritten
    # A family entry registers its forms too (yaml/ops `variants`).
    taken |= {schemas.forms(entry["op"]).get(v, "") for _, entry in templates for v in entry.get("variants", ())}

    candidates: dict[str, list[str]] = {}
    for _, entry in templates:
        names = _referenced_names(entry)
        want = _profile(schemas.get(entry["op"]), names)
        candidates[entry["op"]] = []
        for op in schemas.names():
            if op in taken:
                continue
            try:
                schema = schemas.get(op)
            except Exception:  # an overload torchgen cannot parse on its own
                continue
            if _profile(schema, names) == want:
                candidates[entry["op"]].append(op)

    wanted = (factor - 1) * len(templates)
    rejected: set[str] = set()
    for _ in range(10):
        used = set(taken)
        clones: list[tuple[str, dict, str]] = []  # (file, template entry, new op)
        pools = {op: [c for c in ops if c not in rejected] for op, ops in candidates.items()}
        while len(clones) < wanted:
            added = False
            for file_name, entry in templates:
                pool = pools[entry["op"]]
                while pool and pool[0] in used:
                    pool.pop(0)
                if pool and len(clones) < wanted:
                    op = pool.pop(0)
                    used.add(op)
                    clones.append((file_name, entry, op))
                    added = True
            if not added:
                break
        for file_name, entries in files.items():
            # Deep copies: clones of one entry sharing its `out:` mapping would be
            # dumped as YAML aliases, which the registry refuses.
            # A clone is one op: a family's forms belong to its own functional overload.
            copies = [copy.deepcopy({k: v for k, v in dict(entry, op=op).items() if k not in FAMILY_KEYS})
                      for f, entry, op in clones if f == file_name]
            with open(os.path.join(dest, "ops", file_name), "w", encoding="utf-8") as handle:
                yaml.dump(entries + copies, handle, Dumper=_NoAliasDumper, sort_keys=False, width=200)
        failures = _validation_failures(dest)
        if not failures:
            break
        rejected |= failures
    else:
        raise RuntimeError(f"the synthetic registry does not validate: {sorted(failures)[:5]} ...")

    shapes_real = Counter(entry["shape"] for _, entry in templates)
    shapes_all = shapes_real + Counter(entry["shape"] for _, entry, _ in clones)
    return {
        "ops_real": len(templates),
        "ops": len(templates) + len(clones),
        "factor": round((len(templates) + len(clones)) / len(templates), 2),
        "factor_wanted": factor,
        "ops_by_shape": dict(sorted(shapes_all.items())),
        "ops_by_shape_real": dict(sorted(shapes_real.items())),
        "candidates_rejected_by_generator": len(rejected),
        "how": "each real entry copied under other ATen overloads whose schema fits it "
               "(same tensor arguments, same types for the names the entry uses), round-robin",
    }


# ---- the timings -------------------------------------------------------------

def run_all(reps: int, workdir: str, factor: int = 10) -> dict:
    # Every run works on a snapshot root holding yaml/ and csrc/handwritten/
    # (which --check lints, resolving their `file:` against --root): other
    # people's edits during the run must not change the input.
    root = os.path.join(workdir, "snapshot")
    shutil.copytree(os.path.join(REPO, "yaml"), os.path.join(root, "yaml"))
    shutil.copytree(os.path.join(REPO, "csrc", "handwritten"), os.path.join(root, "csrc", "handwritten"))
    synthetic_dir = os.path.join(workdir, "synthetic_yaml")
    synthetic = build_synthetic_registry(os.path.join(root, "yaml"), synthetic_dir, factor)
    registries = {"real": os.path.join(root, "yaml"), "synthetic": synthetic_dir}

    samples: dict[str, list[float]] = {}
    written: dict[str, list[int]] = {}
    exit_codes: dict[str, set[int]] = {}
    counts: dict[str, str] = {}

    def record(key: str, seconds: float, done: subprocess.CompletedProcess, files: int | None = None):
        samples.setdefault(key, []).append(seconds)
        exit_codes.setdefault(key, set()).add(done.returncode)
        if files is not None:
            written.setdefault(key, []).append(files)
        if done.returncode == 2:
            raise RuntimeError(f"python -m codegen failed on the {key} registry:\n{done.stderr}")

    startup = [sys.executable, "-c", "import codegen.main, codegen.schemas; codegen.schemas.aten_schemas()"]
    warmup = [False] if reps > 1 else []  # an untimed round first, except in --quick
    for rep in warmup + [True] * reps:
        seconds, done = timed_run(startup)
        if rep:
            record("interpreter_and_imports", seconds, done)
        for name, yaml_dir in registries.items():
            out = tempfile.mkdtemp(prefix=f"gen_{name}_", dir=workdir)
            headers = ("--header-dir", f"{out}_aclnn")  # never the repository's csrc/include
            seconds, done = codegen("--root", root, "--yaml-dir", yaml_dir, "--out-dir", out, *headers)
            files = len(os.listdir(out))
            before = mtimes(out)
            if rep:
                record(f"{name}_full", seconds, done, files)
            seconds, done = codegen("--root", root, "--yaml-dir", yaml_dir, "--out-dir", out, *headers)
            if rep:
                record(f"{name}_noop", seconds, done, len(changed_files(before, mtimes(out))))
            seconds, done = codegen("--check", "--root", root, "--yaml-dir", yaml_dir, "--out-dir", out, *headers)
            if rep:
                record(f"{name}_check", seconds, done)
            counts[name] = (done.stdout.strip() or done.stderr.strip()).splitlines()[0]
            shutil.rmtree(out)

    figures = {key: {"seconds": summarize(values), "exit_codes": sorted(exit_codes[key])}
               for key, values in samples.items()}
    for key, values in written.items():
        figures[key]["files_written"] = sorted(set(values))
    result = {
        "note": "wall time of one `python -m codegen` process on a snapshot of yaml/ and csrc/handwritten/ "
                "taken at the start; full = into an empty --out-dir, "
                "no-op = again into the same folder (files_written counts files whose mtime changed), "
                "check = --check against it (includes the handwritten-kernel lint)",
        "synthetic_registry": synthetic,
        "check_output": counts,
        "runs": figures,
    }
    for name in registries:
        result[f"{name}_noop_files_written"] = max(written[f"{name}_noop"])
    # Each process pays the interpreter and the imports (torchgen, jinja2,
    # native_functions.yaml) before it generates anything: the rest scales
    # with the registry.
    startup = samples["interpreter_and_imports"]
    for name in registries:
        result[f"{name}_full_beyond_startup"] = summarize(
            [full - base for full, base in zip(samples[f"{name}_full"], startup)])
    real, syn = samples["real_full"], samples["synthetic_full"]
    result["synthetic_over_real_full"] = summarize([s / r for s, r in zip(syn, real)])
    return result

