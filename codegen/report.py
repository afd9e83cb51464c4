"""--report (every op's device policy) and --explain OP."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from codegen.model import Guard, Registry
from codegen.registry import NONE_REASONS
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
    ]
    for entry in registry.handwritten:
        schema = schemas.get(entry.op)
        sources = guard_sources(entry.policy.guard, entry.policy.guard_arg, schema) if schema else ()
        rows.append(PolicyRow(entry.op, "handwritten", "-", entry.policy.guard.value, ", ".join(sources) or "-",
                              entry.policy.device_check.value, entry.policy.reason or "", str(entry.loc), entry.file))
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
    if kernel is not None:
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
