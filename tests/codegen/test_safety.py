"""The second line of defence: the templates render registry text escaped, whatever it holds.

The registry validates every field first (test_registry_fuzz.py); these
tests bypass it and hand the templates hostile text directly.
"""

from __future__ import annotations

import dataclasses

import pytest

from codegen import safety
from codegen.gen_aclnn_header import output_mask
from codegen.gen_kernels import render_kernel
from codegen.lint import blank_comments
from codegen.main import generate
from codegen.model import AclnnParam, AclnnPrototype, Location
from codegen.registry import Paths
from codegen.schemas import aten_schemas
from codegen.templates import environment

HOSTILE = ["x\n#include </etc/EVIL>", "x\r int EVIL;", "x\u2028int EVIL;", "x \\", "x \\ ", "x ??/", "x\x85int EVIL;",
           "x\ud800", "x\u202eEVIL", "x\x00"]


@pytest.mark.parametrize("text", HOSTILE)
def test_comment_stays_on_its_line(text):
    rendered = safety.comment(text)
    assert rendered.isprintable()
    assert not rendered.rstrip().endswith(("\\", "??/"))
    rendered.encode("utf-8")  # no lone surrogate left


@pytest.mark.parametrize("text,body", [
    ("add.Tensor", "add.Tensor"),
    ('a"b\\c', 'a\\"b\\\\c'),
    ("a\nb", "a\\012b"),
    ("??=", "\\077\\077="),
    ("é", "\\303\\251"),
])
def test_cstring(text, body):
    assert safety.cstring(text) == body


@pytest.mark.parametrize("name", ["a b", "a\n", "1a", "delete", "x;y", "", "a-b", "é"])
def test_ident_refuses(name):
    with pytest.raises(ValueError):
        safety.ident(name)


def test_wrapper_renders_hostile_text_in_comments_only(ws):
    kernels = {k.op: k for k in generate(Paths(ws.root), aten_schemas()).kernels}
    env = environment()
    for text in HOSTILE:
        kernel = dataclasses.replace(kernels["neg"], guard_comment=f"guard none: {text}", schema=text)
        code = render_kernel(kernel, env)
        assert "EVIL" not in blank_comments(code, strings_too=True)
        assert all(line.isprintable() for line in code.split("\n"))
        assert not any("//" in line and line.rstrip().endswith(("\\", "??/")) for line in code.split("\n"))


def test_header_renders_hostile_source_in_a_comment():
    proto = AclnnPrototype("aclnnNeg", (AclnnParam("const aclTensor*", "self"), AclnnParam("aclTensor*", "out", True)),
                           Location("yaml/aclnn.yaml", 1), "hicann/x\n#include </etc/EVIL>")
    text = environment().get_template("aclnn_op.h.j2").render(inputs="yaml/aclnn.yaml\nint EVIL;", proto=proto,
                                                              proto_mask=output_mask(proto))
    assert "EVIL" not in blank_comments(text, strings_too=True)
    with pytest.raises(ValueError):
        environment().get_template("aclnn_op.h.j2").render(
            inputs="x", proto=dataclasses.replace(proto, name="aclnnNeg; int EVIL"), proto_mask=2)
