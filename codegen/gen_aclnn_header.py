"""Output target csrc/generated/aclnn_ops.h: the typed ACLNN prototypes."""

from __future__ import annotations

import jinja2

from codegen.model import Registry

FILE = "aclnn_ops.h"


def render(registry: Registry, env: jinja2.Environment, aclnn_yaml: str) -> dict[str, str]:
    text = env.get_template("aclnn_ops.h.j2").render(inputs=aclnn_yaml, prototypes=registry.prototypes)
    return {FILE: text}
