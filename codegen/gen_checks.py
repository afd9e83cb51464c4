"""Output target csrc/generated/op_checks.h: the argument checks the wrappers make.

A registry op with `check: <name>` calls flagos::check::<name>: an op that
is not structured in torch (no meta function checks its arguments) with its
own arguments, after the launch device is current and before anything is
allocated or launched; a structured one with its meta function's arguments,
after the meta function, for what ATen's kernel checks beyond it (all forms
of the family share the check). csrc/aten/op_checks.cc defines each check with
ATen's own helpers where ATen has them. This header declares each one from
the op's schema, so a definition that does not take the op's arguments
does not compile.
"""

from __future__ import annotations

from dataclasses import dataclass

import jinja2

from codegen.model import Registry
from codegen.schemas import ATenSchemas

FILE = "op_checks.h"


@dataclass(frozen=True)
class CheckDeclaration:
    name: str
    ops: tuple[str, ...]  # the overloads whose wrappers call it
    params: str


def declarations(registry: Registry, schemas: ATenSchemas) -> list[CheckDeclaration]:
    by_signature: dict[tuple[str, str], list[str]] = {}
    for entry in registry.ops:
        if entry.check is None:
            continue
        schema = schemas.get(entry.op)
        if schema.structured is not None:
            params = ", ".join(schema.structured.meta_params)
        else:
            signature = schema.declaration("WRAPPER")
            params = signature[signature.index("WRAPPER(") + len("WRAPPER("):signature.rindex(")")]
        by_signature.setdefault((entry.check, params), []).append(entry.op)
    return [CheckDeclaration(name, tuple(ops), params) for (name, params), ops in sorted(by_signature.items())]


def render(registry: Registry, schemas: ATenSchemas, env: jinja2.Environment, inputs: str) -> dict[str, str]:
    return {FILE: env.get_template("op_checks.h.j2").render(inputs=inputs, checks=declarations(registry, schemas))}
