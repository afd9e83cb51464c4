"""Output target csrc/generated/kernel_support.h: the size and dtype rules in C++."""

from __future__ import annotations

import jinja2

FILE = "kernel_support.h"


def render(env: jinja2.Environment, template_dir: str) -> dict[str, str]:
    text = env.get_template("kernel_support.h.j2").render(inputs=f"{template_dir}/kernel_support.h.j2")
    return {FILE: text}
