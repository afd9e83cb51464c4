"""yaml/handwritten.yaml: handwritten ops, their bodies (`impl:`) and how they are registered."""

from __future__ import annotations

import re

from codegen.errors import Problems
from codegen.fields import entry_op
from codegen.model import HandwrittenEntry, Location
from codegen.policies import device_policy
from codegen.safety import local_name_problem
from codegen.safety import shown as shown_text
from codegen.schemas import ATenSchemas
from codegen.yaml_loader import LineDict

HANDWRITTEN_KEYS = ("op", "guard", "guard_arg", "device_check", "reason", "file", "impl", "dtype_fallback", "composite",
                    "autograd_impl", "fallthrough")
# The dispatch keys a handwritten op may fall through (`fallthrough:`).
FALLTHROUGH_KEYS = ("Conjugate", "Negative")


_HANDWRITTEN_FILE = re.compile(r"csrc/handwritten/[A-Za-z0-9_][A-Za-z0-9_./-]*\.(cc|cpp|h)", re.ASCII)


def handwritten_entry(entry, line: int, shown: str, schemas: ATenSchemas,
                      problems: Problems) -> HandwrittenEntry | None:
    before = len(problems.items)
    op, schema = entry_op(entry, line, "handwritten", HANDWRITTEN_KEYS, shown, schemas, problems)
    if op is None:
        return None
    policy = device_policy(entry, schema, op, shown, problems)
    file = entry.get("file")
    if file is None:
        problems.add(Location(shown, entry.line_of("file")), op, "no `file`",
                     "add `file: csrc/handwritten/<file>.cc`, the file that registers it")
    elif not isinstance(file, str) or not _HANDWRITTEN_FILE.fullmatch(file) or "/../" in file or "/./" in file:
        problems.add(Location(shown, entry.line_of("file")), op,
                     f"`file: {shown_text(file)}` is not a source file under csrc/handwritten/",
                     "write `file: csrc/handwritten/<file>.cc`, the file that registers it")
    impl = entry.get("impl")
    if "impl" not in entry:
        problems.add(Location(shown, entry.line), op, "no `impl`: the generator writes every handwritten op's "
                     "wrapper and registration, and calls its body",
                     "add `impl: <name>` and define flagos::impl::<name>(const LaunchDevice& device, ...) in the "
                     "file, as csrc/generated/impls.h declares it")
    else:
        impl_loc = Location(shown, entry.line_of("impl"))
        if not isinstance(impl, str) or local_name_problem(impl) is not None:
            problems.add(impl_loc, op, f"`impl: {shown_text(impl)}` is not a C++ function name",
                         "name the body in lower_snake_case, as the structured group is named (gather, upsample_nearest2d)")
        elif entry.get("guard") == "none":
            problems.add(impl_loc, op, "a body launches on the device its wrapper passes, and `guard: none` "
                         "passes none: the launch would run on whatever device is current",
                         "declare `guard: first-tensor` or `guard: explicit-arg` with `guard_arg:`")
    dtype_fallback = _flag(entry, "dtype_fallback", True, "registered without the per-dtype CPU fallback", op,
                           shown, problems)
    composite = _flag(entry, "composite", False, "the body composes other flagos ops", op, shown, problems)
    autograd_impl = entry.get("autograd_impl")
    if "autograd_impl" in entry:
        if not isinstance(autograd_impl, str) or local_name_problem(autograd_impl) is not None:
            why, fix = (f"`autograd_impl: {shown_text(autograd_impl)}` is not a C++ function name",
                        "name the body in lower_snake_case")
        elif schema is not None and schema.structured is not None:
            why, fix = "`autograd_impl` is for an op that is not structured in torch", "remove `autograd_impl`"
        else:
            why = fix = None
        if why:
            problems.add(Location(shown, entry.line_of("autograd_impl")), op, why, fix)
    fallthrough = entry.get("fallthrough", [])
    unknown = [key for key in fallthrough if key not in FALLTHROUGH_KEYS] if isinstance(fallthrough, list) else [None]
    if unknown:
        what = "is not a list" if unknown == [None] else f"names {shown_text(unknown[0])}"
        problems.add(Location(shown, entry.line_of("fallthrough")), op,
                     f"`fallthrough` {what}: it lists dispatch keys among {', '.join(FALLTHROUGH_KEYS)}",
                     f"write `fallthrough: [{', '.join(FALLTHROUGH_KEYS)}]` or a part of it")
    if len(problems.items) != before or policy is None:
        return None
    structured = impl is not None and schema is not None and schema.structured is not None
    return HandwrittenEntry(op, policy, file, Location(shown, entry.line), impl, structured, dtype_fallback,
                            composite, autograd_impl, tuple(fallthrough))


def _flag(entry: LineDict, key: str, default: bool, meaning: str, op: str, shown: str, problems: Problems) -> bool:
    """An optional true/false key of a handwritten entry."""
    value = entry.get(key, default)
    if not isinstance(value, bool):
        problems.add(Location(shown, entry.line_of(key)), op, f"`{key}: {shown_text(value)}` is not true or false",
                     f"write `{key}: {str(not default).lower()}` ({meaning}) or leave it out")
    return value


def _params(signature: str) -> str:
    """The parameter list of a C++ declaration `R WRAPPER(params)`."""
    return signature[signature.index("WRAPPER(") :]


def check_impls(handwritten: dict[str, HandwrittenEntry], schemas: ATenSchemas, problems: Problems) -> None:
    """One body serves one structured group (its functional, in-place and out= overloads),
    or ops that are not structured (one C++ function, overloaded when their arguments
    differ), and is defined in one file."""
    first: dict[str, HandwrittenEntry] = {}
    for entry in sorted(handwritten.values(), key=lambda e: e.loc):
        if entry.impl is None:
            continue
        seen = first.setdefault(entry.impl, entry)
        if seen is entry:
            continue
        if entry.structured != seen.structured:
            problems.add(entry.loc, entry.op, f"impl {entry.impl} is also the body of {seen.op} ({seen.loc}); one "
                         "of the two is structured in torch, so their bodies take different arguments",
                         "give each its own body")
            continue
        if not entry.structured:
            if entry.file != seen.file:
                problems.add(entry.loc, entry.op, f"impl {entry.impl} is defined in {seen.file} ({seen.loc})",
                             f"write `file: {seen.file}`")
            signature, seen_signature = (schemas.get(e.op).concrete_signature for e in (entry, seen))
            if signature != seen_signature and _params(signature) == _params(seen_signature):
                problems.add(entry.loc, entry.op, f"impl {entry.impl} is also the body of {seen.op} ({seen.loc}), "
                             "with the same arguments and another result: C++ cannot overload them",
                             "give each its own body")
            continue
        group, seen_group = schemas.get(entry.op).structured, schemas.get(seen.op).structured
        if group.meta_class != seen_group.meta_class:
            problems.add(entry.loc, entry.op, f"impl {entry.impl} is also the body of {seen.op} ({seen.loc}), whose "
                         f"meta function is {seen_group.meta_class}, not {group.meta_class}",
                         "give each structured group its own body")
        elif entry.file != seen.file:
            problems.add(entry.loc, entry.op, f"impl {entry.impl} is defined in {seen.file} ({seen.loc})",
                         f"write `file: {seen.file}`")
