"""benchmarks/new_op.py follows docs/codegen.md "Adding an op": its edits are the doc's blocks and
its commands are the doc's (no build needed; tests/generated/test_add_an_op.py runs them)."""

from __future__ import annotations

import os
import re
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from benchmarks import new_op  # noqa: E402

EXAMPLE = new_op.CANDIDATES[0]


def _section(heading: str = new_op.SECTION) -> str:
    with open(os.path.join(REPO, new_op.DOC), encoding="utf-8") as handle:
        text = handle.read()
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    section = re.sub(r"<!--.*?-->", "", section)  # what a reader sees
    return re.sub(r"\s+", " ", section)


def test_the_doc_shows_each_command_the_test_runs():
    section = _section()
    for command in (new_op.CODEGEN, new_op.DOCS, new_op.REBUILD, new_op.TESTS.format(op=EXAMPLE.op), new_op.CHECK):
        assert f"`{command}`" in section, command


def test_the_edits_are_the_docs_blocks_and_name_their_files():
    edits = new_op.doc_edits(REPO)
    assert [e.target for e in edits] == ["yaml/aclnn.yaml", "csrc/sim/opapi/ops_unary.cc",
                                         "yaml/ops/unary_math.yaml"]
    assert not any(e.new for e in edits)
    section = _section()
    for e in edits:
        assert os.path.exists(os.path.join(REPO, e.target)), e.target
        assert os.path.basename(e.target) in section, f"the doc's prose never names {e.target}"
        assert EXAMPLE.aclnn in e.text and new_op.for_candidate(e.text, e.target, EXAMPLE) == e.text
    # The doc's prototype is the candidate's: CANN's header and parameter name.
    assert f"source: {EXAMPLE.source}" in edits[0].text
    assert f"const aclTensor* {EXAMPLE.param}," in edits[0].text


def test_another_candidate_gets_its_own_names():
    other = new_op.CANDIDATES[1]
    assert other.param != EXAMPLE.param  # asinh's input is CANN's `input`, not `self`
    edits = {e.target: e.text for e in new_op.doc_edits(REPO)}
    prototype = new_op.for_candidate(edits["yaml/aclnn.yaml"], "yaml/aclnn.yaml", other)
    assert prototype == (f"{other.aclnn}:\n  source: {other.source}\n"
                         f"  params: [const aclTensor* {other.param}, aclTensor* out]\n  outputs: [out]")
    entry = new_op.for_candidate(edits["yaml/ops/unary_math.yaml"], "yaml/ops/unary_math.yaml", other)
    assert f"- op: {other.op}\n" in entry and f"launch: {other.aclnn}(self, out)" in entry
    operator = new_op.for_candidate(edits["csrc/sim/opapi/ops_unary.cc"], "csrc/sim/opapi/ops_unary.cc", other)
    assert f'at::{other.op}_out(v["out"], v["{other.param}"])' in operator
    assert EXAMPLE.op not in operator and "self" not in operator


# ---- "Adding an op of a new family" ------------------------------------------

NEW = new_op.NEW_FAMILY[0]


def test_the_new_family_section_shows_each_command():
    section = _section(new_op.NEW_FAMILY_SECTION)
    for command in (new_op.CODEGEN, new_op.DOCS, new_op.REBUILD, new_op.TESTS.format(op=NEW.op), new_op.CHECK):
        assert f"`{command}`" in section, command


def test_the_new_family_blocks_create_its_two_files():
    edits = new_op.doc_edits(REPO, new_op.NEW_FAMILY_SECTION)
    assert [(e.target, e.new) for e in edits] == [("yaml/aclnn.yaml", False),
                                                  (f"csrc/sim/opapi/ops_{NEW.family}.cc", True),
                                                  (f"yaml/ops/{NEW.family}.yaml", True)]
    section = _section(new_op.NEW_FAMILY_SECTION)
    for e in edits:
        # A new family's files do not exist yet; the prototype's file does.
        assert os.path.exists(os.path.join(REPO, e.target)) != e.new, e.target
        assert os.path.basename(e.target) in section, f"the doc's prose never names {e.target}"
    assert f"source: {NEW.source}" in edits[0].text
    assert edits[1].text.startswith("// ") and edits[2].text.startswith("# "), "a new file starts with its comment"
    assert "sim_op.h" in edits[1].text and f"FSIM_PHASE2({NEW.aclnn})" in edits[1].text
    assert f"- op: {NEW.op}\n" in edits[2].text


def test_the_new_family_example_is_new():
    """The doc's example is an op the registry lacks, of a family it has no file of (else the
    doc would tell a newcomer to create a file that exists)."""
    assert new_op.pick_candidate(REPO, new_op.NEW_FAMILY) == NEW


def test_a_fallback_candidate_gets_its_own_family(tmp_path):
    other = new_op.NEW_FAMILY[1]
    for folder in ("yaml/ops", "csrc/sim/opapi", "docs"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / new_op.DOC).write_text(open(os.path.join(REPO, new_op.DOC), encoding="utf-8").read())
    (tmp_path / "yaml" / "aclnn.yaml").write_text("")
    # The example's family exists: the next candidate starts its own.
    (tmp_path / "yaml" / "ops" / f"{NEW.family}.yaml").write_text(f"- op: {NEW.op}\n")
    assert new_op.pick_candidate(str(tmp_path), new_op.NEW_FAMILY) == other
    edited = new_op.add_op(str(tmp_path), other, new_op.NEW_FAMILY_SECTION)
    assert edited == ["yaml/aclnn.yaml", f"csrc/sim/opapi/ops_{other.family}.cc", f"yaml/ops/{other.family}.yaml"]
    operator = (tmp_path / edited[1]).read_text()
    assert f'at::{other.op}_out(v["out"], v["{other.param}"])' in operator and NEW.op not in operator
    assert f"launch: {other.aclnn}(self, out)" in (tmp_path / edited[2]).read_text()
    assert f"{other.aclnn}:\n  source: {other.source}\n" in (tmp_path / edited[0]).read_text()
    # A block that creates a file refuses to overwrite one.
    with pytest.raises(FileExistsError):
        new_op.add_op(str(tmp_path), other, new_op.NEW_FAMILY_SECTION)
