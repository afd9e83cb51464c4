"""yaml/composite.yaml and yaml/aten.yaml: the ops registered with ATen's own kernels.

composite.yaml lists composite ops (torch decomposes them into other ops)
whose device the generated registration makes current once, at the op's
boundary, before ATen's own decomposition runs (flagos::aten::composite_guard,
csrc/aten/composite_guard.cc). aten.yaml lists the ops that launch no ACLNN
operator: allocation, views, resize, read-back, metadata, the SDPA choice and
autocast's bans. Each is registered with ATen's own function (`kernel:`) or a
backend body in csrc/aten/ (`impl:`); with a device policy the generated
wrapper passes the body the device it works on. Neither list counts as
handwritten ops (yaml/handwritten.yaml): none of them is an operator body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from codegen.errors import Problems
from codegen.fields import entry_op
from codegen.model import DevicePolicy, Guard, Location
from codegen.policies import device_policy
from codegen.safety import local_name_problem
from codegen.safety import shown as shown_text
from codegen.schemas import ATenSchemas, OpSchema
from codegen.yaml_loader import LineDict

COMPOSITE_KEYS = ("op", "guard", "keys")
ATEN_KEYS = ("op", "guard", "guard_arg", "reason", "key", "kernel", "file", "impl")
# Where a composite guard is registered: PrivateUse1 (inference, and ops with
# their own derivative) and AutogradPrivateUse1 (the autograd path of a
# CompositeImplicitAutograd op, where the decomposition records its inner ops).
COMPOSITE_DISPATCH = ("PrivateUse1", "AutogradPrivateUse1")
ATEN_DISPATCH = ("PrivateUse1", "AutocastPrivateUse1")
_COMPOSITE_KERNELS = ("CompositeImplicitAutograd", "CompositeExplicitAutograd")
_NATIVE = re.compile(r"at::native::([a-z_][a-z0-9_]*)", re.ASCII)
_ATEN_FILE = re.compile(r"csrc/aten/[A-Za-z0-9_][A-Za-z0-9_]*\.cc", re.ASCII)


@dataclass(frozen=True)
class CompositeEntry:
    op: str
    policy: DevicePolicy
    keys: tuple[str, ...]  # dispatch keys, in COMPOSITE_DISPATCH order
    loc: Location


@dataclass(frozen=True)
class AtenEntry:
    op: str
    policy: DevicePolicy
    key: str  # the dispatch key it is registered under
    loc: Location
    kernel: str | None = None  # ATen's own function: at::native::view
    impl: str | None = None  # or a body flagos::aten::<impl> ...
    file: str | None = None  # ... defined in this file


def composite_kernels(schemas: ATenSchemas, op: str) -> tuple[str, ...]:
    """The composite kernels native_functions.yaml gives `op` (no dispatch section: implicit)."""
    raw = schemas.raw(op) or {}
    if "dispatch" not in raw:
        return ("CompositeImplicitAutograd",)
    keys = {key.strip() for keys in raw["dispatch"] or {} for key in str(keys).split(",")}
    return tuple(key for key in _COMPOSITE_KERNELS if key in keys)


def _native_functions(schemas: ATenSchemas, op: str) -> list[str]:
    raw = schemas.raw(op) or {}
    return sorted({str(name) for name in (raw.get("dispatch") or {}).values()})


def composite_entry(entry, line: int, shown: str, schemas: ATenSchemas, problems: Problems) -> CompositeEntry | None:
    before = len(problems.items)
    op, schema = entry_op(entry, line, "composite", COMPOSITE_KEYS, shown, schemas, problems)
    if op is None:
        return None
    policy = device_policy(entry, schema, op, shown, problems)
    if policy is not None and policy.guard is not Guard.FIRST_TENSOR:
        problems.add(Location(shown, entry.line_of("guard")), op,
                     f"a composite guard finds its device among the boxed arguments: guard {policy.guard.value} "
                     "is not one it can take", "write `guard: first-tensor` (or remove the entry: without it, "
                     "each inner op guards its own launch)")
    keys = entry.get("keys", ["PrivateUse1"])
    if not isinstance(keys, list) or not keys or any(k not in COMPOSITE_DISPATCH for k in keys) \
            or len(set(keys)) != len(keys):
        problems.add(Location(shown, entry.line_of("keys")), op,
                     f"`keys: {shown_text(keys)}` is not a list of dispatch keys among {', '.join(COMPOSITE_DISPATCH)}",
                     "write `keys: [PrivateUse1]` or `keys: [PrivateUse1, AutogradPrivateUse1]`")
        keys = []
    if schema is not None:
        kernels = composite_kernels(schemas, op)
        if not kernels:
            problems.add(Location(shown, entry.line), op, f"{op} has no composite kernel in torch: its guard "
                         "would have nothing to run", "remove the entry, or give the op a kernel "
                         "(yaml/ops/ or yaml/handwritten.yaml)")
        elif "AutogradPrivateUse1" in keys and "CompositeImplicitAutograd" not in kernels:
            problems.add(Location(shown, entry.line_of("keys")), op,
                         f"{op} has its own derivative ({kernels[0]}): under AutogradPrivateUse1 the guard would "
                         "replace its autograd kernel", "write `keys: [PrivateUse1]`")
    if len(problems.items) != before or policy is None:
        return None
    return CompositeEntry(op, policy, tuple(k for k in COMPOSITE_DISPATCH if k in keys), Location(shown, entry.line))


def aten_entry(entry, line: int, shown: str, schemas: ATenSchemas, problems: Problems) -> AtenEntry | None:
    before = len(problems.items)
    op, schema = entry_op(entry, line, "aten", ATEN_KEYS, shown, schemas, problems)
    if op is None:
        return None

    def loc(key: str) -> Location:
        return Location(shown, entry.line_of(key))

    policy = device_policy(entry, schema, op, shown, problems)
    key = entry.get("key", "PrivateUse1")
    if key not in ATEN_DISPATCH:
        problems.add(loc("key"), op, f"`key: {shown_text(key)}` is not a dispatch key among {', '.join(ATEN_DISPATCH)}",
                     "write `key: PrivateUse1` (the default) or `key: AutocastPrivateUse1`")
    kernel, impl, file = entry.get("kernel"), entry.get("impl"), entry.get("file")
    if ("kernel" in entry) == ("impl" in entry):
        problems.add(loc("op"), op, "an aten.yaml entry names ATen's function (`kernel:`) or a body (`impl:`), "
                     "one of the two", "write `kernel: at::native::<function>` or `impl: <body>` with `file:`")
    elif "kernel" in entry:
        native = _native_functions(schemas, op) if schema is not None else []
        match = _NATIVE.fullmatch(kernel) if isinstance(kernel, str) else None
        if match is None or (schema is not None and match.group(1) not in native):
            problems.add(loc("kernel"), op, f"`kernel: {shown_text(kernel)}` is not one of ATen's kernels of {op}",
                         "name one of: " + (", ".join(f"at::native::{n}" for n in native) or "none (use `impl:`)"))
        if "file" in entry:
            problems.add(loc("file"), op, "`file` names where a body is defined; ATen defines `kernel:`",
                         "remove `file`")
        if policy is not None and policy.guard is not Guard.NONE:
            problems.add(loc("guard"), op, "ATen's own kernel takes no launch device: the generator registers it "
                         "as it is", "write `guard: none` with `reason: launches nothing`, or write a body (`impl:`)")
    else:
        if not isinstance(impl, str) or local_name_problem(impl) is not None:
            problems.add(loc("impl"), op, f"`impl: {shown_text(impl)}` is not a C++ function name",
                         "name the body in lower_snake_case")
        if not isinstance(file, str) or not _ATEN_FILE.fullmatch(file):
            problems.add(loc("file" if "file" in entry else "impl"), op,
                         f"`file: {shown_text(file)}` is not a source file in csrc/aten/",
                         "write `file: csrc/aten/<file>.cc`, the file that defines the body")
        if policy is not None and schema is not None and policy.guard is not Guard.NONE and _tensors(schema) > 1:
            problems.add(loc("guard"), op, f"{op} takes several tensors: the devices they are on must be checked, "
                         "which only a handwritten op's wrapper does", "move the op to yaml/handwritten.yaml")
    if len(problems.items) != before or policy is None:
        return None
    return AtenEntry(op, policy, key, Location(shown, entry.line), kernel, impl, file)


def _tensors(schema: OpSchema) -> int:
    return sum(1 for a in schema.arguments if a.kind in ("tensor", "optional_tensor", "tensor_list"))


def check_bodies(entries: list[AtenEntry], problems: Problems) -> None:
    """A body serves one op (its declaration is the op's signature)."""
    first: dict[str, AtenEntry] = {}
    for entry in entries:
        if entry.impl is None:
            continue
        seen = first.setdefault(entry.impl, entry)
        if seen is not entry:
            problems.add(entry.loc, entry.op, f"impl {entry.impl} is also the body of {seen.op} ({seen.loc})",
                         "give each op its own body")


def describe(entry: CompositeEntry | AtenEntry) -> str:
    """What --explain prints for an op of these lists."""
    policy = entry.policy
    lines = [f"{entry.op}: {entry.loc}", f"  guard: {policy.guard.value}"
             + (f" ({policy.guard_arg})" if policy.guard_arg else "") + (f"; reason: {policy.reason}" if policy.reason else "")]
    if isinstance(entry, CompositeEntry):
        lines.append(f"  composite guard (flagos::aten::composite_guard, then ATen's decomposition) under "
                     f"{', '.join(entry.keys)}: csrc/generated/composite_guard.cpp")
    elif entry.kernel is not None:
        lines.append(f"  ATen's own kernel {entry.kernel} under {entry.key}: csrc/generated/aten_kernels.cpp")
    else:
        lines.append(f"  body flagos::aten::{entry.impl} ({entry.file}) under {entry.key}: "
                     "csrc/generated/aten_kernels.cpp")
    return "\n".join(lines) + "\n"
