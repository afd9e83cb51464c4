"""`python -m codegen`: validate the registry, then generate, check, report or explain.

Two output folders: csrc/generated/ (the kernels and their support headers)
and csrc/include/flagos/aclnn/ (the ACLNN prototypes, one header per
operator). The prototypes sit in the lowest layer, csrc/include, because
the simulator defines the operators they declare and builds without the
backend (csrc/sim/CMakeLists.txt).

Exit codes: 0 success; 1 --check found a stale csrc/generated/, a lint
problem or a stale code block in the docs (or --explain an op the registry
lacks, or --docs a marker it cannot resolve); 2 the registry is invalid
(every problem listed, nothing written).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from dataclasses import dataclass

from codegen import docs, gen_aclnn_header, gen_aten, gen_checks, gen_impls, gen_kernels, gen_support, verify_cann
from codegen.aten_entries import describe
from codegen.errors import Problems, RegistryError
from codegen.file_manager import FileManager, write_all
from codegen.lint import lint_handwritten
from codegen.model import Registry
from codegen.registry import Paths, load_registry
from codegen import model_ops
from codegen.report import (explain, explain_overloads, filter_rows, policy_rows, render_report, render_uncovered,
                            suggestions, uncovered_model_ops)
from codegen.resolve import KernelView, resolve_all
from codegen.schemas import ATenSchemas, aten_schemas
from codegen.templates import TEMPLATE_DIR, environment

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Where the ACLNN prototypes go, under the root.
HEADER_DIR = ("csrc", "include", "flagos", "aclnn")


@dataclass
class Generation:
    registry: Registry
    kernels: list[KernelView]
    files: dict[str, str]  # csrc/generated/ file name -> content
    headers: dict[str, str]  # csrc/include/flagos/aclnn/ file name -> content
    code: dict[str, str]  # op -> its wrapper's C++
    shard_files: dict[str, str]  # op -> the file holding it


def generate(paths: Paths, schemas: ATenSchemas) -> Generation:
    """Validates everything, then renders every output in memory; raises RegistryError."""
    problems = Problems()
    registry = load_registry(paths, schemas, problems)
    kernels = resolve_all(registry, schemas, problems)
    problems.raise_if_any()

    env = environment()
    yaml_shown = paths.show(paths.yaml_dir)
    headers = gen_aclnn_header.render(registry, env, paths.show(paths.aclnn_yaml))
    files: dict[str, str] = {}
    files.update(gen_support.render(env, paths.show(TEMPLATE_DIR)))
    files.update(gen_impls.render(registry, schemas, env, paths.show(paths.handwritten_yaml)))
    files.update(gen_checks.render(registry, schemas, env, f"{yaml_shown}/ops/*.yaml"))
    files.update(gen_kernels.render(kernels, env, f"{yaml_shown}/ops/*.yaml and {yaml_shown}/aclnn.yaml"))
    files.update(gen_aten.render(registry, schemas, env, paths.show(paths.composite_yaml), paths.show(paths.aten_yaml)))
    code = {k.op: gen_kernels.render_kernel(k, env) for k in kernels if k.dispatch == "PrivateUse1"}
    shard_files = {k.op: gen_kernels.shard_file(gen_kernels.shard_of(k.op)) for k in kernels}
    return Generation(registry, kernels, files, headers, code, shard_files)


def _counts(generation: Generation) -> str:
    handwritten = generation.registry.handwritten
    bodies = sum(1 for entry in handwritten if entry.impl is not None)
    return (f"{len(generation.registry.ops)} generated ops, {len(handwritten)} handwritten "
            f"({bodies} of them bodies in generated wrappers)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m codegen",
        description="Generate torch_fl's ACLNN kernel wrappers (csrc/generated/) from the registry (yaml/).")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="exit 1 with a diff if csrc/generated/ is stale, or if csrc/ fails the kernel lint")
    mode.add_argument("--docs", action="store_true",
                      help="rewrite the code blocks of README.md and docs/*.md that name their source "
                           "(`<!-- from: ... -->`, codegen/docs.py) from that source")
    mode.add_argument("--report", action="store_true", help="print every op's device policy")
    mode.add_argument("--explain", metavar="OP",
                      help="print an op's schema, policy and generated C++; a base name (add) lists its overloads "
                           "and which have a kernel")
    mode.add_argument("--verify-cann", metavar="DIR", nargs="+",
                      help="compare the registry's prototypes and the project's CANN declarations with checkouts of "
                           "CANN's repositories (ops-math, ops-nn, ops-cv, ops-transformer, opbase, runtime; "
                           "[repo=]path[@commit]); exit 1 on any difference")
    parser.add_argument("--format", choices=("md", "json"), default="md", help="--report format (default md)")
    parser.add_argument("--guard", choices=("first-tensor", "explicit-arg", "none"),
                        help="--report: only the ops with this guard")
    parser.add_argument("--file", metavar="PATH",
                        help="--report: only the ops of this YAML file or handwritten source (yaml/ops/binary.yaml, "
                             "copy.cc)")
    parser.add_argument("--uncovered", action="store_true",
                        help="--report: the ATen ops of the common model set (codegen/model_ops.txt) that have no "
                             "flagos kernel and would run on the CPU fallback")
    parser.add_argument("--root", default=REPO_ROOT, help="repository root (default: this checkout)")
    parser.add_argument("--yaml-dir", help="registry folder (default ROOT/yaml)")
    parser.add_argument("--out-dir", help="output folder (default ROOT/csrc/generated)")
    parser.add_argument("--header-dir", help="output folder of the ACLNN prototypes (default ROOT/csrc/include/flagos/aclnn)")
    parser.add_argument("--handwritten-dir", help="handwritten kernels for the lint (default ROOT/csrc/handwritten)")
    return parser


def _fix_command(args: argparse.Namespace) -> str:
    parts = ["python -m codegen"]
    for flag in ("root", "yaml_dir", "out_dir", "header_dir"):
        value = getattr(args, flag)
        if value is not None and not (flag == "root" and value == REPO_ROOT):
            parts.append(f"--{flag.replace('_', '-')} {value}")
    return " ".join(parts)


def _counts_line(generation: Generation, schemas: ATenSchemas) -> str:
    """The README's line of op counts (codegen/docs.py), from the report's rows."""
    rows = policy_rows(generation.registry, generation.kernels, schemas)
    bodies = sum(1 for entry in generation.registry.handwritten if entry.impl is not None)
    return docs.counts_line(len(rows), sum(r.kind == "generated" for r in rows),
                            sum(r.kind == "handwritten" for r in rows), bodies, Counter(r.guard for r in rows))


def _docs_command(args: argparse.Namespace) -> str:
    return "python -m codegen --docs" + (f" --root {args.root}" if args.root != REPO_ROOT else "")


def _verify_cann(dirs: list[str], registry: Registry, paths: Paths) -> int:
    checkouts, problems = verify_cann.parse_checkouts(dirs)
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        return 2
    differences, compared, subset = verify_cann.verify(registry, paths.root, checkouts,
                                                       paths.show(paths.aclnn_yaml))
    for checkout in sorted(checkouts.values(), key=lambda c: c.repo):
        print(f"hicann/{checkout.repo} at {checkout.commit}")
    unchecked = sorted({p.source_repo for p in registry.prototypes} - set(checkouts))
    for line in differences:
        print(line)
    print(f"{compared} of {len(registry.prototypes)} prototypes compared"
          + (f" (no checkout of {', '.join(unchecked)})" if unchecked else "")
          + f", {subset} functions and constants of csrc/include/flagos/acl_subset_*.h"
          + f"; {len(differences)} difference(s)")
    return 1 if differences else 0


def _explain(name: str, generation: Generation, schemas: ATenSchemas, paths: Paths, out_dir: str) -> int:
    registry, kernels = generation.registry, generation.kernels
    backend = model_ops.backend_registrations(registry)
    text = explain(name, registry, kernels, schemas, generation.code,
                   {op: f"{paths.show(out_dir)}/{file}" for op, file in generation.shard_files.items()})
    base = name.partition(".")[0]
    overloads = explain_overloads(base, registry, kernels, schemas, backend)
    if text is not None:
        sys.stdout.write(text + ("\n" + overloads if overloads and len(schemas.overloads(base)) > 1 else ""))
        return 0
    if "." not in name and schemas.get(name) is None and overloads is not None:
        sys.stdout.write(overloads)  # a base name: `add` -> add.Tensor, add.Scalar, ...
        return 0
    listed = {entry.op: entry for entry in registry.composite + registry.aten}
    if name in listed:
        sys.stdout.write(describe(listed[name])
                         + (overloads if overloads and len(schemas.overloads(base)) > 1 else ""))
        return 0
    if schemas.get(name) is not None:
        print(f"{name}: torch has it, but the registry neither generates nor lists it as handwritten",
              file=sys.stderr)
        if overloads:
            sys.stderr.write(overloads)
        return 1
    close = suggestions(name, registry, schemas)
    print(f"{name}: torch has no such op and the registry neither generates nor lists it as handwritten"
          + (f"; did you mean {', '.join(close)}?" if close else ""), file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if (args.guard or args.file or args.uncovered) and not args.report:
        parser.error("--guard, --file and --uncovered filter --report")
    if args.uncovered and (args.guard or args.file):
        parser.error("--uncovered lists ops without a kernel: it takes no --guard or --file")
    paths = Paths(args.root, args.yaml_dir)
    out_dir = os.path.abspath(args.out_dir or os.path.join(paths.root, "csrc", "generated"))
    header_dir = os.path.abspath(args.header_dir or os.path.join(paths.root, *HEADER_DIR))
    handwritten_dir = os.path.abspath(args.handwritten_dir or os.path.join(paths.root, "csrc", "handwritten"))
    schemas = aten_schemas()
    try:
        generation = generate(paths, schemas)
    except RegistryError as error:
        print(error.render(), file=sys.stderr)
        return 2

    files = FileManager(out_dir, paths.show(out_dir))
    for name, content in sorted(generation.files.items()):
        files.add(name, content)
    headers = FileManager(header_dir, paths.show(header_dir))
    for name, content in sorted(generation.headers.items()):
        headers.add(name, content)
    outputs = (files, headers)

    if args.report:
        if args.uncovered:
            ops = model_ops.load()
            rows = uncovered_model_ops(generation.registry, generation.kernels, schemas,
                                       model_ops.backend_registrations(generation.registry), ops)
            sys.stdout.write(render_uncovered(rows, len(ops), args.format))
            return 0
        rows = filter_rows(policy_rows(generation.registry, generation.kernels, schemas), args.guard, args.file)
        if not rows and args.file:
            print(f"no op comes from {args.file}: give a YAML file (yaml/ops/binary.yaml) or a handwritten source "
                  f"(csrc/handwritten/copy.cc), or the end of its path", file=sys.stderr)
        sys.stdout.write(render_report(rows, args.format))
        return 0
    if args.explain:
        return _explain(args.explain, generation, schemas, paths, out_dir)
    if args.verify_cann:
        return _verify_cann(args.verify_cann, generation.registry, paths)
    if args.docs:
        problems, rewritten = docs.review(paths.root, generation.code, refresh=True,
                                          counts=_counts_line(generation, schemas))
        for problem in problems:
            print(problem, file=sys.stderr)
        print(f"docs: {len(rewritten)} file(s) rewritten" + (": " + ", ".join(rewritten) if rewritten else ""))
        return 1 if problems else 0
    if args.check:
        failed = False
        for output in outputs:
            diff = output.diff()
            if diff:
                sys.stdout.write(diff)
                print(f"\n{output.shown_dir} does not match the registry and templates; regenerate it with:\n"
                      f"    {_fix_command(args)}", file=sys.stderr)
                failed = True
            for name in output.foreign():
                print(f"{output.shown_dir}/{name}: not written by the generator, yet the build would compile or "
                      f"include it\n    fix: delete it, or generate it from the registry", file=sys.stderr)
                failed = True
        lint = lint_handwritten(generation.registry, paths.root, handwritten_dir, paths.show)
        if lint:
            print(f"kernel lint: {len(lint)} problem(s)", file=sys.stderr)
            for problem in lint:
                print(problem, file=sys.stderr)
            failed = True
        stale_docs, _ = docs.review(paths.root, generation.code, fix_command=_docs_command(args),
                                    counts=_counts_line(generation, schemas))
        if stale_docs:
            print(f"docs: {len(stale_docs)} code block(s) do not match their source", file=sys.stderr)
            for problem in stale_docs:
                print(problem, file=sys.stderr)
            failed = True
        if not failed:
            checked_docs = "; the docs' code blocks match their sources" if docs.doc_files(paths.root) else ""
            print(f"{paths.show(out_dir)} is up to date ({_counts(generation)}); kernel lint passed{checked_docs}")
        return 1 if failed else 0

    try:
        written, written_headers = write_all([files, headers])
    except OSError as error:
        print(f"error: cannot write {paths.show(out_dir)} and {paths.show(header_dir)}: {error}; the generated "
              f"files are as they were", file=sys.stderr)
        return 1
    touched = written + [f"flagos/aclnn/{name}" for name in written_headers]
    listed = ": " + ", ".join(touched) if 0 < len(touched) <= 12 else ""
    print(f"{_counts(generation)}: {len(generation.files) + len(generation.headers)} files, "
          f"{len(touched)} written{listed}")
    for output in outputs:
        for name in output.foreign():
            print(f"warning: {output.shown_dir}/{name} was not written by the generator; `--check` fails on it",
                  file=sys.stderr)
    return 0
