"""Output targets csrc/include/flagos/aclnn/<entry point>.h and aclnn_ops.h next to them.

One header per ACLNN operator: its two prototypes, exactly as CANN declares
them, and the traits FLAGOS_GUARDED_LAUNCH reads (which parameters the
operator writes). A kernel includes the headers of the operators it
launches, so adding an operator recompiles only the code that uses it.
They live in csrc/include, the lowest layer: the simulator's operator
library defines these entry points and builds without the backend.
"""

from __future__ import annotations

import jinja2

from codegen.model import AclnnPrototype, Registry

UMBRELLA = "aclnn_ops.h"


def output_mask(proto: AclnnPrototype) -> int:
    return sum(1 << index for index, param in enumerate(proto.params) if param.is_output)


def render(registry: Registry, env: jinja2.Environment, aclnn_yaml: str) -> dict[str, str]:
    """File names relative to csrc/include/flagos/aclnn/ -> content."""
    files = {}
    template = env.get_template("aclnn_op.h.j2")
    for proto in registry.prototypes:
        files[f"{proto.name}.h"] = template.render(inputs=aclnn_yaml, proto=proto, proto_mask=output_mask(proto))
    files[UMBRELLA] = env.get_template("aclnn_ops.h.j2").render(inputs=aclnn_yaml,
                                                                 prototypes=sorted(registry.prototypes, key=lambda p: p.name))
    return files
