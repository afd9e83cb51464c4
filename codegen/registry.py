"""Loads and validates the registry: yaml/aclnn.yaml, yaml/ops/*.yaml, yaml/handwritten.yaml.

Every problem is collected (file:line, op, what is wrong, how to fix it);
`load_registry` raises RegistryError with all of them, or returns a Registry.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass

from codegen.aten_entries import aten_entry, check_bodies, composite_entry
from codegen.errors import Problems
from codegen.families import family_forms
from codegen.handwritten import check_impls, handwritten_entry
from codegen.model import AclnnPrototype, HandwrittenEntry, Location, OpEntry, Registry
from codegen.op_entries import op_entry
from codegen.prototypes import load_prototypes
from codegen.safety import type_word
from codegen.safety import shown as shown_text
from codegen.schemas import ATenSchemas, aten_schemas
from codegen.yaml_loader import LineDict, LineList, YamlSyntaxError, load_yaml_document


class Paths:
    """Where the registry lives; locations are shown relative to `root`."""

    def __init__(self, root: str, yaml_dir: str | None = None):
        self.root = os.path.abspath(root)
        self.yaml_dir = os.path.abspath(yaml_dir or os.path.join(self.root, "yaml"))
        # The lists of ops registered with ATen's own kernels (optional files).
        self.composite_yaml = os.path.join(self.yaml_dir, "composite.yaml")
        self.aten_yaml = os.path.join(self.yaml_dir, "aten.yaml")

    def show(self, path: str) -> str:
        path = os.path.abspath(path)
        rel = os.path.relpath(path, self.root)
        return path if rel.startswith("..") else rel.replace(os.sep, "/")

    @property
    def aclnn_yaml(self) -> str:
        return os.path.join(self.yaml_dir, "aclnn.yaml")

    @property
    def handwritten_yaml(self) -> str:
        return os.path.join(self.yaml_dir, "handwritten.yaml")

    def op_yamls(self) -> list[str]:
        return sorted(glob.glob(os.path.join(self.yaml_dir, "ops", "*.yaml")))


@dataclass(frozen=True)
class Document:
    data: object  # the parsed YAML: None for an empty file
    line: int  # the line of its first node


def _read(path: str, paths: Paths, problems: Problems) -> Document | None:
    """The parsed YAML of `path`, or None after recording why not."""
    shown = paths.show(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as error:
        problems.add(Location(shown, 1), None, f"cannot read: {error.strerror}", "create the file or fix --yaml-dir")
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        problems.add(Location(shown, line), None,
                     f"not UTF-8: byte 0x{raw[error.start]:02x} at line {line} cannot be decoded",
                     "save the file as UTF-8")
        return None
    try:
        data, line = load_yaml_document(text)
    except YamlSyntaxError as error:
        problems.add(Location(shown, error.line), None, f"YAML syntax error: {error.message}",
                     "fix the YAML syntax (indentation, quotes, `key: value`)")
        return None
    return Document(data, line)


def _entries(document: Document | None, shown: str, problems: Problems) -> list[tuple[object, int]]:
    """(entry, line) for each entry of a registry list file."""
    if document is None or document.data is None:
        return []
    data = document.data
    if not isinstance(data, LineList):
        problems.add(Location(shown, getattr(data, "line", document.line)), None,
                     f"expected a list of entries, not {type_word(data)}", "start each entry with `- op: <overload>`")
        return []
    return [(entry, data.line_at(index)) for index, entry in enumerate(data)]


def load_registry(paths: Paths, schemas: ATenSchemas | None = None, problems: Problems | None = None) -> Registry:
    """The validated registry (its valid entries); raises RegistryError listing every
    problem, unless the caller passes `problems` to collect more before raising."""
    schemas = schemas or aten_schemas()
    raise_here = problems is None
    problems = problems if problems is not None else Problems()
    invalid_prototypes: set[str] = set()
    document = _read(paths.aclnn_yaml, paths, problems)
    loaded = None if document is None else load_prototypes(document.data, document.line, paths.show(paths.aclnn_yaml),
                                                             problems, invalid_prototypes)
    prototypes = loaded or []
    # None: yaml/aclnn.yaml is unusable; its problem is reported once, not at every launch.
    by_name: dict[str, AclnnPrototype | None] | None = None
    if loaded is not None:
        by_name = {name: None for name in invalid_prototypes}
        by_name.update({p.name: p for p in prototypes})
    inputs = [paths.show(paths.aclnn_yaml)]

    ops: dict[str, OpEntry] = {}
    first_seen: dict[str, Location] = {}
    op_files = paths.op_yamls()
    if not op_files:
        problems.add(Location(paths.show(os.path.join(paths.yaml_dir, "ops")), 1), None, "no registry files",
                     "add yaml/ops/<family>.yaml files")
    for path in op_files:
        shown = paths.show(path)
        inputs.append(shown)
        for listed, line in _entries(_read(path, paths, problems), shown, problems):
            before = len(problems.items)
            forms = family_forms(listed, shown, schemas, problems) if isinstance(listed, LineDict) else [listed]
            for entry in forms:
                if isinstance(entry, LineDict) and isinstance(entry.get("op"), str):
                    name, loc = entry["op"], Location(shown, entry.line)
                    if name in first_seen:
                        problems.add(loc, name, f"{shown_text(name)} is registered twice (first at {first_seen[name]})",
                                     "keep one entry per ATen overload")
                        continue
                    first_seen[name] = loc
                parsed = op_entry(entry, line, shown, schemas, by_name, problems)
                if parsed is not None:
                    ops[parsed.op] = parsed
            # A family's forms share its text: a problem of a shared key is reported once, for
            # the first form (the functional one).
            problems.dedupe_since(before)

    handwritten: dict[str, HandwrittenEntry] = _listed(
        paths.handwritten_yaml, handwritten_entry, first_seen, paths, schemas, problems, inputs,
        clash=lambda entry, loc: f"{entry.op} is both generated (at {loc}) and handwritten")
    check_impls(handwritten, schemas, problems)
    kernels = {op: loc for op, loc in first_seen.items()}
    kernels.update({op: entry.loc for op, entry in handwritten.items()})
    composite = _listed(paths.composite_yaml, composite_entry, kernels, paths, schemas, problems, inputs)
    kernels.update({op: entry.loc for op, entry in composite.items()})
    aten = _listed(paths.aten_yaml, aten_entry, kernels, paths, schemas, problems, inputs,
                   lambda entry: entry.key == "PrivateUse1")
    check_bodies(sorted(aten.values(), key=lambda e: e.loc), problems)

    if raise_here:
        problems.raise_if_any()
    return Registry(
        ops=tuple(ops[name] for name in sorted(ops)),
        handwritten=tuple(handwritten[name] for name in sorted(handwritten)),
        prototypes=tuple(prototypes),
        inputs=tuple(inputs),
        composite=tuple(composite[name] for name in sorted(composite)),
        aten=tuple(aten[name] for name in sorted(aten)),
    )


def _listed(path: str, parse, kernels: dict[str, Location], paths: Paths, schemas: ATenSchemas,
            problems: Problems, inputs: list[str], takes_kernel=lambda entry: True,
            clash=lambda entry, loc: f"{entry.op} already has a kernel (at {loc})") -> dict:
    """The entries of an optional list file (yaml/handwritten.yaml, yaml/composite.yaml,
    yaml/aten.yaml) by op; an op has one PrivateUse1 kernel, so one whose kernel is
    registered elsewhere (`kernels`) is refused."""
    found: dict = {}
    if not os.path.exists(path):
        return found
    shown = paths.show(path)
    inputs.append(shown)
    for entry, line in _entries(_read(path, paths, problems), shown, problems):
        parsed = parse(entry, line, shown, schemas, problems)
        if parsed is None:
            continue
        if parsed.op in found:
            problems.add(parsed.loc, parsed.op, f"{parsed.op} is listed twice (first at {found[parsed.op].loc})",
                         "keep one entry per ATen overload")
        elif takes_kernel(parsed) and parsed.op in kernels:
            problems.add(parsed.loc, parsed.op, clash(parsed, kernels[parsed.op]),
                         "remove one of the two entries: an op has one kernel")
        else:
            found[parsed.op] = parsed
    return found
