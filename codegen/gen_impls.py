"""Output target csrc/generated/impls.h: the bodies of handwritten structured ops.

A handwritten op with `impl: <name>` (yaml/handwritten.yaml) is structured in
torch: the generator writes and registers its wrapper (device check, guard,
ATen's meta function, outputs) and calls flagos::impl::<name>, which the
op's file defines. This header declares each body once, with the meta
function's parameters and the outputs, so a body that does not match its
op's meta function does not compile.
"""

from __future__ import annotations

from dataclasses import dataclass

import jinja2

from codegen.model import Registry
from codegen.schemas import ATenSchemas

FILE = "impls.h"


@dataclass(frozen=True)
class ImplDeclaration:
    name: str
    ops: tuple[str, ...]  # the overloads whose wrappers call it
    meta_class: str
    params: tuple[str, ...]  # after the launch device


def declarations(registry: Registry, schemas: ATenSchemas) -> list[ImplDeclaration]:
    by_name: dict[str, list] = {}
    for entry in registry.handwritten:
        if entry.impl is not None:
            by_name.setdefault(entry.impl, []).append(entry)
    found = []
    for name, entries in sorted(by_name.items()):
        group = schemas.get(entries[0].op).structured
        outputs = tuple(f"const at::Tensor & {output}" for output in group.group_outputs)
        found.append(ImplDeclaration(name, tuple(e.op for e in entries), group.meta_class,
                                     group.meta_params + outputs))
    return found


def render(registry: Registry, schemas: ATenSchemas, env: jinja2.Environment, inputs: str) -> dict[str, str]:
    return {FILE: env.get_template("impls.h.j2").render(inputs=inputs, impls=declarations(registry, schemas))}
