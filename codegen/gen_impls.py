"""Output target csrc/generated/impls.h: the bodies of handwritten ops.

A handwritten op names its body with `impl: <name>` (yaml/handwritten.yaml):
the generator writes and registers its wrapper (device check, guard, and for
an op structured in torch ATen's meta function and outputs) and calls
flagos::impl::<name>, which the op's file defines. This header declares each
body once, after the launch device: a structured op's with the meta
function's parameters and the outputs, any other op's with its own
arguments and result; a body that does not match its op does not compile.
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
    about: str  # what its arguments come from, for its comment
    declaration: str  # the C++ declaration, launch device first


def _with_device(signature: str, name: str) -> str:
    """`R WRAPPER(args)` as `R name(const LaunchDevice& launch_device, args)` (not `device`:
    a factory op has an argument of that name)."""
    first = "const LaunchDevice& launch_device"
    if "WRAPPER()" in signature:
        return signature.replace("WRAPPER()", f"{name}({first})", 1)
    return signature.replace("WRAPPER(", f"{name}({first}, ", 1)


def declarations(registry: Registry, schemas: ATenSchemas) -> list[ImplDeclaration]:
    by_declaration: dict[tuple[str, str], list] = {}
    found = {}
    for entry in registry.handwritten:
        if entry.impl is None:
            continue
        schema = schemas.get(entry.op)
        if entry.structured:
            group = schema.structured
            outputs = tuple(f"const at::Tensor & {output}" for output in group.group_outputs)
            params = ", ".join(("const LaunchDevice& device",) + group.meta_params + outputs)
            declaration, about = f"void {entry.impl}({params})", f"ATen's {group.meta_class}"
        else:
            declaration, about = _with_device(schema.concrete_signature, entry.impl), "the op's arguments"
        key = (entry.impl, declaration)
        by_declaration.setdefault(key, []).append(entry.op)
        found[key] = about
        if entry.autograd_impl is not None:
            key = (entry.autograd_impl, _with_device(schema.concrete_signature, entry.autograd_impl))
            by_declaration.setdefault(key, []).append(entry.op)
            found[key] = "the op's arguments, under AutogradPrivateUse1"
    return [ImplDeclaration(name, tuple(by_declaration[(name, declaration)]), found[(name, declaration)], declaration)
            for name, declaration in sorted(by_declaration)]


def render(registry: Registry, schemas: ATenSchemas, env: jinja2.Environment, inputs: str) -> dict[str, str]:
    return {FILE: env.get_template("impls.h.j2").render(inputs=inputs, impls=declarations(registry, schemas))}
