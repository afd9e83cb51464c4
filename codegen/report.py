"""--report (every op's device policy) and --explain OP."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from codegen.model import Guard, Registry
from codegen.policies import NONE_REASONS
from codegen.resolve import KernelView, guard_sources
from codegen.schemas import ATenSchemas


@dataclass(frozen=True)
class PolicyRow:
    op: str
    kind: str  # generated | handwritten
    shape: str  # kernel shape, or "-" for handwritten
    guard: str
    guarded: str  # the argument(s) the launch device comes from
    device_check: str
    reason: str
    where: str  # YAML file:line
    kernel: str  # entry points, or the handwritten file


def policy_rows(registry: Registry, kernels: list[KernelView], schemas: ATenSchemas) -> list[PolicyRow]:
    rows = [
        PolicyRow(k.op, "generated", k.shape, k.guard, ", ".join(k.guard_sources) or "-", k.device_check,
                  k.reason or "", k.yaml_loc, ", ".join(k.entry_points))
        for k in kernels
        if k.impl_call is None and not k.fallthrough  # a handwritten body's wrapper: its handwritten entry is its row
    ]
    for entry in registry.handwritten:
        schema = schemas.get(entry.op)
        sources = guard_sources(entry.policy.guard, entry.policy.guard_arg, schema) if schema else ()
        shape = "impl" if entry.impl is not None else "-"
        kernel = f"{entry.file} (flagos::impl::{entry.impl})" if entry.impl is not None else entry.file
        rows.append(PolicyRow(entry.op, "handwritten", shape, entry.policy.guard.value, ", ".join(sources) or "-",
                              entry.policy.device_check.value, entry.policy.reason or "", str(entry.loc), kernel))
    return sorted(rows, key=lambda row: row.op)


def totals(rows: list[PolicyRow]) -> dict:
    return {
        "ops": len(rows),
        "generated": sum(row.kind == "generated" for row in rows),
        "handwritten": sum(row.kind == "handwritten" for row in rows),
        "guard": dict(sorted(Counter(row.guard for row in rows).items())),
        "device_check": dict(sorted(Counter(row.device_check for row in rows).items())),
    }


def render_report(rows: list[PolicyRow], fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"ops": [row.__dict__ for row in rows], "totals": totals(rows),
                           "none_reasons": NONE_REASONS}, indent=2) + "\n"
    summary = totals(rows)
    lines = [
        "# Device policies of the flagos kernels",
        "",
        f"{summary['ops']} ops: {summary['generated']} generated, {summary['handwritten']} handwritten.",
        "",
        "| policy | ops |",
        "| --- | --- |",
    ]
    lines += [f"| guard {guard} | {count} |" for guard, count in summary["guard"].items()]
    lines += [f"| device_check {check} | {count} |" for check, count in summary["device_check"].items()]
    lines += ["", "`guard: none` on an op whose arguments name a device takes one of these reasons:", ""]
    lines += [f"- `{key}`: {why}" for key, why in NONE_REASONS.items()]
    lines += [
        "",
        "| op | kind | shape | guard | guarded argument | device check | reason | yaml | kernel |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        cells = [row.op, row.kind, row.shape, row.guard, row.guarded, row.device_check, row.reason or "-",
                 row.where, row.kernel]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


_GUARD_WHY = {
    Guard.FIRST_TENSOR.value: "the launch device is the first defined flagos tensor among {sources}, in torchgen's "
    "precedence (self, then out arguments, then positional arguments; a tensor list counts by its first "
    "defined element; CPU tensors are skipped)",
    Guard.EXPLICIT_ARG.value: "the launch device is taken from `{sources}` alone",
    Guard.NONE.value: "no guard: the launch runs on the thread's current device",
}


def explain(op: str, registry: Registry, kernels: list[KernelView], schemas: ATenSchemas,
            code: dict[str, str], shard_files: dict[str, str]) -> str | None:
    """What the generator does for `op`, or None when the registry does not have it."""
    kernel = next((k for k in kernels if k.op == op), None)
    handwritten = next((e for e in registry.handwritten if e.op == op), None)
    schema = schemas.get(op)
    if schema is None or (kernel is None and handwritten is None):
        return None
    if handwritten is not None and kernel is not None:
        guard, sources, check, reason = kernel.guard, kernel.guard_sources, kernel.device_check, kernel.reason
        where = (f"handwritten in {handwritten.file} (body flagos::impl::{handwritten.impl}), declared at "
                 f"{handwritten.loc}; its wrapper generated in {shard_files[op]}")
    elif kernel is not None:
        guard, sources, check, reason = kernel.guard, kernel.guard_sources, kernel.device_check, kernel.reason
        where = f"generated from {kernel.yaml_loc}, shape {kernel.shape}, in {shard_files[op]}"
    else:
        assert handwritten is not None
        guard, check, reason = handwritten.policy.guard.value, handwritten.policy.device_check.value, handwritten.policy.reason
        sources = guard_sources(handwritten.policy.guard, handwritten.policy.guard_arg, schema)
        where = f"handwritten in {handwritten.file}, declared at {handwritten.loc}"
    tensors = [a.name for a in schema.arguments if a.is_tensor_like]
    if check == "same-device":
        check_why = (f"{', '.join(tensors)} must be on one device (CPU 0-dim tensors, i.e. Python numbers, allowed)"
                     if tensors else "no tensor argument, nothing to check")
    else:
        check_why = "its tensors may live on different devices"
    lines = [
        f"{op}: {where}",
        f"schema:       {schema.schema}",
        f"guard:        {guard}: {_GUARD_WHY[guard].format(sources=', '.join(sources))}",
        f"device_check: {check}: {check_why}",
    ]
    if reason:
        lines.append(f"reason:       {reason}")
    if kernel is not None:
        for name in kernel.entry_points:
            proto = registry.prototype(name)
            params = ", ".join(f"{p.ctype} {p.name}" for p in proto.params) if proto else "?"
            lines.append(f"entry point:  {name}GetWorkspaceSize({params}, ...) [{proto.loc if proto else '?'}]")
        lines += ["", "generated C++:", "", code[op]]
    return "\n".join(lines) + "\n"


# ---- finding things: overloads, suggestions, filters, model coverage ---------

def _coverage(registry: Registry, kernels: list[KernelView]) -> dict[str, str]:
    """op -> "generated, <guard>, <yaml>" / "handwritten, <guard>, <file>"."""
    covered = {k.op: f"generated, guard {k.guard}, {k.yaml_loc}" for k in kernels}
    for entry in registry.handwritten:
        covered[entry.op] = f"handwritten, guard {entry.policy.guard.value}, {entry.file}"
    return covered


def _uncovered_note(op: str, schemas: ATenSchemas, backend: set[str]) -> str:
    from codegen.model_ops import runs_everywhere

    if op in backend:
        return "ATen's kernel or a body of csrc/aten/ (yaml/aten.yaml, yaml/composite.yaml)"
    if runs_everywhere(schemas.raw(op)):
        return "not covered, none needed: torch's composite kernel runs on every device"
    return "not covered: runs on the CPU fallback (raises under FLAGOS_STRICT=1)"


def explain_overloads(base: str, registry: Registry, kernels: list[KernelView], schemas: ATenSchemas,
                      backend: set[str]) -> str | None:
    """Every overload of `base` (and of its in-place form `base_`) and which have a flagos kernel."""
    names = schemas.overloads(base) + ([] if base.endswith("_") else schemas.overloads(base + "_"))
    if not names:
        return None
    covered = _coverage(registry, kernels)
    width = max(len(name) for name in names)
    lines = [f"{base}: {len(names)} overloads in torch, {sum(name in covered for name in names)} with a flagos "
             f"kernel (`--explain <overload>` for one):"]
    for name in names:
        lines.append(f"  {name:<{width}}  {covered.get(name) or _uncovered_note(name, schemas, backend)}")
    return "\n".join(lines) + "\n"


def suggestions(name: str, registry: Registry, schemas: ATenSchemas) -> list[str]:
    """Registry and ATen names a few edits from `name`, the registry's first on a tie."""
    ours = tuple(e.op for e in registry.ops) + tuple(e.op for e in registry.handwritten)
    return schemas.suggest(name, ours)


def filter_rows(rows: list[PolicyRow], guard: str | None, file: str | None) -> list[PolicyRow]:
    """Rows with that guard and/or from that YAML file or handwritten source (a path or its end)."""
    def from_file(row: PolicyRow) -> bool:
        places = [row.where.rsplit(":", 1)[0]] + ([row.kernel.split(" (")[0]] if row.kind == "handwritten" else [])
        wanted = file.replace("\\", "/").lstrip("./")
        return any(place == wanted or place.endswith("/" + wanted) for place in places)

    return [row for row in rows if (guard is None or row.guard == guard) and (file is None or from_file(row))]


def uncovered_model_ops(registry: Registry, kernels: list[KernelView], schemas: ATenSchemas,
                        backend: set[str], model_ops: dict[str, list[str]]) -> list[dict]:
    """The ops of the common model set (codegen/model_ops.txt) that would run on the CPU fallback."""
    from codegen.model_ops import runs_everywhere

    covered = _coverage(registry, kernels)
    rows = []
    for op, models in sorted(model_ops.items()):
        if op in covered or op in backend or runs_everywhere(schemas.raw(op)):
            continue
        schema = schemas.raw(op)
        rows.append({"op": op, "models": models,
                     "schema": schema["func"] if schema else "(not in this torch's native_functions.yaml)"})
    return rows


def render_uncovered(rows: list[dict], total: int, fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"model_ops": total, "uncovered": rows}, indent=2) + "\n"
    lines = [f"# Ops of the common model set without a flagos kernel",
             "",
             f"{len(rows)} of the {total} ATen overloads that the models of codegen/model_ops.txt dispatch have no "
             "flagos kernel and no kernel torch runs on every device: they run on the CPU fallback "
             "(`torch_fl.sim.stats()[\"fallback_ops\"]` counts them; FLAGOS_STRICT=1 makes them raise).",
             "",
             "| op | models | schema |",
             "| --- | --- | --- |"]
    lines += [f"| {row['op']} | {', '.join(row['models'])} | `{row['schema']}` |" for row in rows]
    return "\n".join(lines) + "\n"
