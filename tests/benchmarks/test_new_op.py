"""benchmarks/new_op.py follows docs/codegen.md "Adding an op": its edits are the doc's blocks and
its commands are the doc's (no build needed; tests/generated/test_add_an_op.py runs them)."""

from __future__ import annotations

import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from benchmarks import new_op  # noqa: E402

EXAMPLE = new_op.CANDIDATES[0]


def _section() -> str:
    with open(os.path.join(REPO, new_op.DOC), encoding="utf-8") as handle:
        text = handle.read()
    section = text.split("\n## Adding an op\n", 1)[1].split("\n## ", 1)[0]
    section = re.sub(r"<!--.*?-->", "", section)  # what a reader sees
    return re.sub(r"\s+", " ", section)


def test_the_doc_shows_each_command_the_test_runs():
    section = _section()
    for command in (new_op.CODEGEN, new_op.DOCS, new_op.REBUILD, new_op.TESTS.format(op=EXAMPLE.op), new_op.CHECK):
        assert f"`{command}`" in section, command


def test_the_edits_are_the_docs_blocks_and_name_their_files():
    edits = new_op.doc_edits(REPO)
    assert [target for target, _ in edits] == ["yaml/aclnn.yaml", "csrc/sim/opapi/ops_unary.cc",
                                               "yaml/ops/unary_math.yaml"]
    section = _section()
    for target, text in edits:
        assert os.path.exists(os.path.join(REPO, target)), target
        assert os.path.basename(target) in section, f"the doc's prose never names {target}"
        assert EXAMPLE.aclnn in text and new_op.for_candidate(text, target, EXAMPLE) == text
    # The doc's prototype is the candidate's: CANN's header and parameter name.
    assert f"source: {EXAMPLE.source}" in edits[0][1]
    assert f"const aclTensor* {EXAMPLE.param}," in edits[0][1]


def test_another_candidate_gets_its_own_names():
    other = new_op.CANDIDATES[1]
    assert other.param != EXAMPLE.param  # asinh's input is CANN's `input`, not `self`
    edits = dict(new_op.doc_edits(REPO))
    prototype = new_op.for_candidate(edits["yaml/aclnn.yaml"], "yaml/aclnn.yaml", other)
    assert prototype == (f"{other.aclnn}:\n  source: {other.source}\n"
                         f"  params: [const aclTensor* {other.param}, aclTensor* out]\n  outputs: [out]")
    entry = new_op.for_candidate(edits["yaml/ops/unary_math.yaml"], "yaml/ops/unary_math.yaml", other)
    assert f"- op: {other.op}\n" in entry and f"launch: {other.aclnn}(self, out)" in entry
    operator = new_op.for_candidate(edits["csrc/sim/opapi/ops_unary.cc"], "csrc/sim/opapi/ops_unary.cc", other)
    assert f'at::{other.op}_out(v["out"], v["{other.param}"])' in operator
    assert EXAMPLE.op not in operator and "self" not in operator
