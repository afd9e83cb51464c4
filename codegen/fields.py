"""Checks shared by every registry entry: its `op` and its schema, unknown keys, enum-valued text."""

from __future__ import annotations

import re

from codegen.errors import Problems
from codegen.model import Location
from codegen.safety import type_word
from codegen.safety import shown as shown_text
from codegen.schemas import ATenSchemas, OpSchema
from codegen.yaml_loader import LineDict


def enum_member(kind, value):
    """The member of `kind` written as `value`, or None (for any value, text or not)."""
    if not isinstance(value, str):
        return None
    try:
        return kind(value)
    except ValueError:
        return None


def unknown_keys(entry: LineDict, allowed: tuple[str, ...], op: str | None, shown: str, problems: Problems) -> None:
    for key in entry:
        if key not in allowed:
            problems.add(Location(shown, entry.line_of(key)), op, f"unknown key `{shown_text(key)}`",
                         f"remove it; an entry may have: {', '.join(allowed)}")


_OP_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)?", re.ASCII)


def op_name(entry: LineDict, schemas: ATenSchemas, shown: str, problems: Problems) -> tuple[str | None, OpSchema | None]:
    op = entry.get("op")
    loc = Location(shown, entry.line_of("op"))
    if not isinstance(op, str) or not op:
        problems.add(loc, None, "entry without `op`", "add `op: <overload>` as in native_functions.yaml (add.Tensor)")
        return None, None
    if not _OP_NAME.fullmatch(op):
        problems.add(loc, None, f"`{shown_text(op)}` is not an ATen overload name",
                     "write the name before `(` in native_functions.yaml: name or name.overload (add.Tensor)")
        return None, None
    schema = schemas.get(op)
    if schema is None:
        close = schemas.suggest(op)
        hint = f"did you mean {', '.join(close)}?" if close else "use the name before `(` in native_functions.yaml"
        problems.add(loc, op, f"torch {torch_version()} has no operator `{op}`", hint)
    return op, schema


def torch_version() -> str:
    try:
        import torch

        return torch.__version__.split("+")[0]
    except Exception:  # pragma: no cover - torch is a requirement
        return "(installed)"


def entry_op(entry, line: int, kind: str, keys: tuple[str, ...], shown: str, schemas: ATenSchemas,
             problems: Problems) -> tuple[str | None, OpSchema | None]:
    """The `op` of a registry list item and its schema, its keys checked against `keys`;
    op None when the item is unusable (reported)."""
    if not isinstance(entry, LineDict):
        problems.add(Location(shown, line), None, f"a {kind} entry must be a mapping, not {type_word(entry)}",
                     "start it with `- op: <overload>`")
        return None, None
    op, schema = op_name(entry, schemas, shown, problems)
    unknown_keys(entry, keys, op, shown, problems)
    return op, schema
