"""Output target csrc/generated/op_checks.h: the argument checks of ops that are not structured.

A registry op with `check: <name>` is not structured in torch (no meta
function checks its arguments): its wrapper calls flagos::check::<name> with
its own arguments, after the launch device is current and before anything
is allocated or launched. csrc/aten/op_checks.cc defines each check with
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
        signature = schemas.get(entry.op).declaration("WRAPPER")
        params = signature[signature.index("WRAPPER(") + len("WRAPPER("):signature.rindex(")")]
        by_signature.setdefault((entry.check, params), []).append(entry.op)
    return [CheckDeclaration(name, tuple(ops), params) for (name, params), ops in sorted(by_signature.items())]


def render(registry: Registry, schemas: ATenSchemas, env: jinja2.Environment, inputs: str) -> dict[str, str]:
    return {FILE: env.get_template("op_checks.h.j2").render(inputs=inputs, checks=declarations(registry, schemas))}
