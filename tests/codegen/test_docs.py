"""The docs' code blocks and the README's op counts against their sources (codegen/docs.py):
`--check` fails on a stale block, `--docs` rewrites it, and entries are found by name."""

from __future__ import annotations

import json

from codegen import docs
from codegen.main import REPO_ROOT as REPO
from codegen.main import generate
from codegen.registry import Paths
from codegen.schemas import aten_schemas

SQRT = "- op: sqrt\n  variants: [functional, inplace, out]\n  shape: unary\n  launch: aclnnSqrt(self, out)\n" \
       "  guard: first-tensor"
RELU = "aclnnRelu:\n  source: hicann/ops-nn/activation/relu/op_api/aclnn_relu.h\n" \
       "  params: [const aclTensor* self, const aclTensor* out]\n  outputs: [out]"


def _doc(marker: str, body: str, indent: str = "", lang: str = "yaml") -> str:
    lines = [f"<!-- {marker} -->", f"```{lang}", *body.split("\n"), "```"]
    return "# A doc\n\nText.\n\n" + "\n".join(indent + line if line else line for line in lines) + "\n"


def _generated(ws) -> None:
    assert ws.run().code == 0


def test_the_repository_docs_match_their_sources():
    generation = generate(Paths(REPO), aten_schemas())
    problems, _ = docs.review(REPO, generation.code)
    assert problems == [], "\n".join(problems)
    marked = [b for doc in docs.doc_files(REPO)
              for b in docs.blocks(doc, open(f"{REPO}/{doc}", encoding="utf-8").read()) if b.kind == "from"]
    # codegen.md shows a prototype, registry entries and a generated wrapper.
    assert {docs._parse_marker(b.marker)[1] for b in marked} == {"key", "op", "wrapper"}


def test_a_current_block_passes(ws):
    _generated(ws)
    ws.write("docs/a.md", _doc("from: yaml/ops/unary.yaml op=sqrt", SQRT))
    ws.write("README.md", _doc("from: yaml/aclnn.yaml key=aclnnRelu", RELU))
    run = ws.run("--check")
    assert run.code == 0, run.err
    assert "the docs' code blocks match their sources" in run.out


def test_a_stale_block_fails_with_its_line_and_the_command_that_fixes_it(ws):
    _generated(ws)
    ws.write("docs/a.md", _doc("from: yaml/ops/unary.yaml op=sqrt", SQRT.replace("first-tensor", "none")))
    run = ws.run("--check")
    assert run.code == 1
    assert "docs/a.md:6: the block differs from `from: yaml/ops/unary.yaml op=sqrt`" in run.err
    assert "-  guard: none\n+  guard: first-tensor" in run.err
    assert f"fix: python -m codegen --docs --root {ws.root}" in run.err

    run = ws.run("--docs")
    assert run.code == 0, run.err
    assert "docs/a.md" in run.out
    assert ws.read("docs", "a.md") == _doc("from: yaml/ops/unary.yaml op=sqrt", SQRT)
    assert ws.run("--check").code == 0


def test_the_registry_changing_makes_the_doc_stale(ws):
    """The negative control of the test above: the doc is current, the source moves."""
    _generated(ws)
    ws.write("docs/a.md", _doc("from: yaml/ops/unary.yaml op=sqrt", SQRT))
    ws.edit("yaml/ops/unary.yaml", "launch: aclnnSqrt(self, out)\n  guard: first-tensor",
            "launch: aclnnSqrt(self, out)\n  guard: explicit-arg\n  guard_arg: self")
    assert ws.run().code == 0
    run = ws.run("--check")
    assert run.code == 1 and "docs/a.md:6" in run.err and "+  guard_arg: self" in run.err


def test_entries_are_found_by_name_not_by_line(ws):
    _generated(ws)
    ws.write("docs/a.md", _doc("from: yaml/ops/*.yaml op=sqrt", SQRT))
    # sqrt moves to the end of another file: the block is still current.
    ws.edit("yaml/ops/unary.yaml", SQRT + "\n", "")
    with open(ws.path("yaml", "ops", "unary_math.yaml"), "a", encoding="utf-8") as handle:
        handle.write("\n" + SQRT + "\n")
    assert ws.run().code == 0
    run = ws.run("--check")
    assert run.code == 0, run.err


def test_a_generated_wrapper_follows_the_generator(ws):
    _generated(ws)
    wrapper = generate(Paths(ws.root), aten_schemas()).code["sqrt"]
    ws.write("docs/a.md", _doc("from: csrc/generated wrapper=sqrt", wrapper, lang="cpp"))
    assert ws.run("--check").code == 0
    ws.edit("yaml/ops/unary.yaml", "launch: aclnnSqrt(self, out)\n  guard: first-tensor",
            "launch: aclnnSqrt(self, out)\n  guard: explicit-arg\n  guard_arg: self")
    assert ws.run().code == 0
    run = ws.run("--check")
    assert run.code == 1 and "from: csrc/generated wrapper=sqrt" in run.err


def test_a_block_in_a_list_item_keeps_its_indentation(ws):
    _generated(ws)
    ws.write("docs/a.md", _doc("from: yaml/ops/unary.yaml op=sqrt", "- op: sqrt", indent="   "))
    assert ws.run("--check").code == 1
    assert ws.run("--docs").code == 0
    assert ws.read("docs", "a.md") == _doc("from: yaml/ops/unary.yaml op=sqrt", SQRT, indent="   ")
    assert ws.run("--check").code == 0


def test_a_code_block_needs_a_marker(ws):
    _generated(ws)
    ws.write("docs/a.md", "Text.\n\n```cpp\nint x;\n```\n")
    run = ws.run("--check")
    assert run.code == 1 and "docs/a.md:3: a cpp block with no marker" in run.err
    ws.write("docs/a.md", _doc("example: not the project's code", "int x;", lang="cpp"))
    assert ws.run("--check").code == 0
    ws.write("docs/a.md", "```python\nx = 1\n```\n\n```sh\nls\n```\n")  # not project code: no marker
    assert ws.run("--check").code == 0


def test_a_marker_that_names_nothing_fails(ws):
    _generated(ws)
    for marker, message in [
        ("from: yaml/ops/*.yaml op=no_such_op", "op no_such_op is in no file of yaml/ops/*.yaml"),
        ("from: yaml/nowhere.yaml op=sqrt", "no file matches yaml/nowhere.yaml"),
        ("from: csrc/generated wrapper=no_such_op", "the generator writes no wrapper for no_such_op"),
        ("from: yaml/ops/unary.yaml", "expected `from: SOURCE SELECTOR=NAME"),
        ("from: yaml/ops/unary.yaml line=20", "the selector is one of key, op, wrapper"),
    ]:
        ws.write("docs/a.md", _doc(marker, SQRT))
        run = ws.run("--check")
        assert run.code == 1 and f"docs/a.md:6: `{marker}`: {message}" in run.err, (marker, run.err)
        assert ws.run("--docs").code == 1


def test_the_readme_op_counts_follow_the_registry(ws):
    _generated(ws)
    run = ws.run("--report", "--format", "json")
    totals = json.loads(run.out)["totals"]
    bodies = ws.read("yaml", "handwritten.yaml").count("\n  impl: ")
    line = docs.counts_line(totals["ops"], totals["generated"], totals["handwritten"], bodies, totals["guard"])
    ws.write("README.md", f"# torch_fl\n\n## Covered\n\n{line}\n  `--report` lists them.\n")
    assert ws.run("--check").code == 0
    # One more generated op: the README's line is stale until --docs rewrites it.
    with open(ws.path("yaml", "ops", "unary_math.yaml"), "a", encoding="utf-8") as handle:
        handle.write("\n- op: acosh\n  shape: unary\n  launch: aclnnSqrt(self, out)\n  guard: first-tensor\n")
    assert ws.run().code == 0
    run = ws.run("--check")
    assert run.code == 1 and "README.md:5: the op counts differ from the registry's" in run.err
    assert f"- **{totals['ops'] + 1} ops** with a kernel: {totals['generated'] + 1} generated" in run.err
    assert ws.run("--docs").code == 0
    assert f"- **{totals['ops'] + 1} ops** with a kernel:" in ws.read("README.md")
    assert "  `--report` lists them.\n" in ws.read("README.md")
    assert ws.run("--check").code == 0
