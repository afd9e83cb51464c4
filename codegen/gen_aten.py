"""Output targets csrc/generated/composite_guard.cpp, aten_kernels.h and aten_kernels.cpp:
the registrations of yaml/composite.yaml and yaml/aten.yaml.

composite_guard.cpp registers, under each dispatch key an entry names, the
boxed composite guard (flagos::aten::composite_guard): it makes the device of
the entry's policy current, then runs ATen's own decomposition of the op.
aten_kernels.h declares the bodies of yaml/aten.yaml (a body that does not
match its op does not compile); aten_kernels.cpp registers ATen's functions
and the bodies, a body with a device policy through a wrapper that passes it
that device, and ATen's autocast lists under AutocastPrivateUse1.
"""

from __future__ import annotations

from dataclasses import dataclass

import jinja2

from codegen.aten_entries import AtenEntry
from codegen.gen_impls import _with_device
from codegen.model import Guard, Registry
from codegen.resolve import _signature_names, wrapper_name
from codegen.schemas import ATenSchemas

COMPOSITE_FILE = "composite_guard.cpp"
HEADER_FILE = "aten_kernels.h"
KERNELS_FILE = "aten_kernels.cpp"


@dataclass(frozen=True)
class AtenKernel:
    op: str
    schema: str
    key: str
    guard_comment: str
    kernel: str  # what m.impl registers: ATen's function, the body or the wrapper
    declaration: str | None = None  # the body's, in flagos::aten
    wrapper: str | None = None  # the wrapper's definition, for a body with a device policy
    include: str | None = None  # ATen's header declaring `kernel:`


def _kernel(entry: AtenEntry, schemas: ATenSchemas) -> AtenKernel:
    schema = schemas.get(entry.op)
    base = entry.op.split(".")[0]
    if entry.kernel is not None:
        return AtenKernel(entry.op, schema.schema, entry.key, f"guard none: {entry.policy.reason}; ATen's own kernel",
                          entry.kernel, include=f"ATen/ops/{base}_native.h")
    body = f"flagos::aten::{entry.impl}"
    if entry.policy.guard is Guard.NONE:
        return AtenKernel(entry.op, schema.schema, entry.key, f"guard none: {entry.policy.reason}", body,
                          declaration=schema.concrete_signature.replace("WRAPPER", entry.impl, 1))
    name = wrapper_name(entry.op)
    args = ", ".join(["launch_device"] + _signature_names(schema.concrete_signature))
    wrapper = (schema.concrete_signature.replace("WRAPPER", name, 1) + " {\n"
               f"  const flagos::LaunchDevice launch_device = flagos::launch_device_of({entry.policy.guard_arg});\n"
               f"  return {body}({args});\n}}")
    return AtenKernel(entry.op, schema.schema, entry.key,
                      f"guard explicit-arg: the device of `{entry.policy.guard_arg}`, passed to the body "
                      "(which launches nothing: it is not made current)", name,
                      declaration=_with_device(schema.concrete_signature, entry.impl), wrapper=wrapper)


def render(registry: Registry, schemas: ATenSchemas, env: jinja2.Environment, composite_yaml: str,
           aten_yaml: str) -> dict[str, str]:
    by_key = {key: [entry.op for entry in registry.composite if key in entry.keys]
              for key in ("PrivateUse1", "AutogradPrivateUse1")}
    kernels = [_kernel(entry, schemas) for entry in registry.aten]
    includes = sorted({k.include for k in kernels if k.include})
    return {
        COMPOSITE_FILE: env.get_template("composite_guard.cpp.j2").render(inputs=composite_yaml, by_key=by_key),
        HEADER_FILE: env.get_template("aten_kernels.h.j2").render(inputs=aten_yaml, kernels=kernels),
        KERNELS_FILE: env.get_template("aten_kernels.cpp.j2").render(inputs=aten_yaml, kernels=kernels,
                                                                    includes=includes),
    }
