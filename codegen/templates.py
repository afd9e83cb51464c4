"""The Jinja2 environment over templates/."""

from __future__ import annotations

import functools
import os

import jinja2

from codegen import safety

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "templates")


@functools.lru_cache(maxsize=None)
def environment(template_dir: str = TEMPLATE_DIR) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(template_dir),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    # Registry text reaches C++ through these only (see codegen/safety.py):
    # `comment` for `//` comments, `cstring` inside "string literals",
    # `ident` for identifiers.
    env.filters.update(comment=safety.comment, cstring=safety.cstring, ident=safety.ident)
    return env
