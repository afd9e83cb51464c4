"""--report and --explain."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from codegen.main import REPO_ROOT as REPO


def test_report_json(ws):
    run = ws.run("--report", "--format", "json")
    assert run.code == 0, run.err
    report = json.loads(run.out)
    rows = {row["op"]: row for row in report["ops"]}
    assert rows["add.Tensor"]["guard"] == "first-tensor"
    assert rows["add.Tensor"]["guarded"] == "self, other"
    assert rows["add.Tensor"]["where"] == f"yaml/ops/binary.yaml:{ws.line_of('yaml/ops/binary.yaml', 'op: add.Tensor')}"
    assert rows["full"]["guard"] == "explicit-arg" and rows["full"]["guarded"] == "device"
    assert rows["_copy_from"]["kind"] == "handwritten"
    assert rows["_copy_from"]["device_check"] == "no-check" and rows["_copy_from"]["reason"]
    # The totals add up over the listed rows (that each op is listed once: the test below).
    totals = report["totals"]
    assert totals["ops"] == len(report["ops"]) == totals["generated"] + totals["handwritten"]
    assert sum(totals["guard"].values()) == len(report["ops"])
    assert sum(totals["device_check"].values()) == len(report["ops"])


def test_report_totals_count_each_op_once(ws):
    """The totals agree with the rows, and with the counts `python -m codegen` prints: a handwritten
    op whose wrapper is generated (`impl:`) is one handwritten op."""
    from codegen.registry import Paths, load_registry

    registry = load_registry(Paths(ws.root))
    run = ws.run("--report", "--format", "json")
    assert run.code == 0, run.err
    report = json.loads(run.out)
    ops = [row["op"] for row in report["ops"]]
    assert len(ops) == len(set(ops))
    totals = report["totals"]
    assert totals["ops"] == len(ops) == totals["generated"] + totals["handwritten"]
    assert totals["generated"] == len(registry.ops)
    assert totals["handwritten"] == len(registry.handwritten)
    assert sum(totals["guard"].values()) == len(ops)
    assert sum(totals["device_check"].values()) == len(ops)


def test_report_markdown(ws):
    run = ws.run("--report")
    assert run.code == 0
    assert "| guard first-tensor |" in run.out
    assert "| add.Tensor | generated | binary | first-tensor | self, other | same-device | - | yaml/ops/binary.yaml:" in run.out
    assert "| fill_.Tensor | handwritten | impl | explicit-arg | self | no-check |" in run.out


def test_explain(ws):
    run = ws.run("--explain", "add.Tensor")
    assert run.code == 0, run.err
    assert "schema:       add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in run.out
    assert "guard:        first-tensor: the launch device is the first defined flagos tensor among self, other" in run.out
    assert "entry point:  aclnnAdds" in run.out
    assert "FLAGOS_GUARDED_LAUNCH(launch_device, aclnnAdd, self, other, alpha, out);" in run.out


def test_explain_handwritten_and_unknown(ws):
    run = ws.run("--explain", "_copy_from")
    assert run.code == 0
    assert "handwritten in csrc/handwritten/copy.cc (body flagos::impl::copy_from)" in run.out and "reason:" in run.out
    assert "  return flagos::impl::copy_from(launch_device, self, dst, non_blocking);" in run.out
    assert ws.run("--explain", "fft_fft").code == 1
    assert ws.run("--explain", "no_such_op").code == 1


def test_explain_a_base_name_lists_its_overloads(ws):
    run = ws.run("--explain", "add")
    assert run.code == 0, run.err
    lines = {line.split()[0]: line for line in run.out.splitlines()[1:]}
    assert {"add.Tensor", "add.Scalar", "add.out", "add_.Tensor"} <= set(lines)
    assert "generated, guard first-tensor, yaml/ops/binary.yaml:" in lines["add.Tensor"]
    # Negative control: dropping an overload from the registry shows it uncovered.
    ws.edit("yaml/ops/binary.yaml", "- op: add.Tensor\n  variants: [functional, inplace, out]",
            "- op: add.Tensor\n  variants: [functional, inplace]")
    run = ws.run("--explain", "add")
    assert run.code == 0, run.err
    line = next(line for line in run.out.splitlines() if line.split()[0] == "add.out")
    assert "not covered" in line and "generated" not in line


def test_explain_an_overload_lists_its_siblings(ws):
    run = ws.run("--explain", "add.Tensor")
    assert run.code == 0
    assert "add: " in run.out and "  add.Scalar " in run.out


def test_explain_suggests_by_edit_distance(ws):
    for typo, expected in (("reluu", "relu"), ("ad.Tensor", "add.Tensor"), ("sofmax", "softmax"),
                           ("add.Tesnor", "add.Tensor")):
        run = ws.run("--explain", typo)
        assert run.code == 1
        suggested = run.err.split("did you mean ", 1)[1].rstrip("?\n").split(", ")
        assert suggested[0] == expected, (typo, run.err)
    run = ws.run("--explain", "qqqqqqqqqqqqqqq")
    assert run.code == 1 and "did you mean" not in run.err


def test_edit_distance():
    from codegen.suggest import closest, edit_distance

    assert edit_distance("relu", "relu", 2) == 0
    assert edit_distance("reul", "relu", 2) == 1  # a swap is one edit
    assert edit_distance("abcdef", "xyz", 2) == 3  # beyond the limit
    assert closest("mull", ["mul", "null", "mm"], preferred=["mul"])[:2] == ["mul", "null"]


def test_report_filters(ws):
    run = ws.run("--report", "--format", "json", "--guard", "explicit-arg")
    assert run.code == 0, run.err
    rows = json.loads(run.out)["ops"]
    assert rows and all(row["guard"] == "explicit-arg" for row in rows)
    assert {"full", "_copy_from"} <= {row["op"] for row in rows}
    run = ws.run("--report", "--format", "json", "--file", "yaml/ops/binary.yaml")
    rows = json.loads(run.out)["ops"]
    assert rows and all(row["where"].startswith("yaml/ops/binary.yaml:") for row in rows)
    assert "add.Tensor" in {row["op"] for row in rows}
    run = ws.run("--report", "--format", "json", "--file", "copy.cc")
    rows = json.loads(run.out)["ops"]
    assert rows and all(row["kernel"].startswith("csrc/handwritten/copy.cc (flagos::impl::") for row in rows)
    run = ws.run("--report", "--file", "no/such.yaml")
    assert run.code == 0 and "no op comes from no/such.yaml" in run.err
    with pytest.raises(SystemExit):
        ws.run("--explain", "add", "--guard", "none")


def test_report_uncovered(ws):
    shutil.copytree(os.path.join(REPO, "csrc", "aten"), ws.path("csrc", "aten"))
    run = ws.run("--report", "--uncovered", "--format", "json")
    assert run.code == 0, run.err
    report = json.loads(run.out)
    uncovered = {row["op"] for row in report["uncovered"]}
    assert report["model_ops"] > 50
    assert "add.Tensor" not in uncovered  # generated
    assert "view" not in uncovered  # a kernel of csrc/aten/ (read from the repository)
    assert "view" in _model_ops() and "add.Tensor" in _model_ops()
    # Negative control: an op of the model set loses its kernel and shows up.
    _remove_entry(ws, "yaml/ops/binary.yaml", "add.Tensor")
    run = ws.run("--report", "--uncovered", "--format", "json")
    assert "add.Tensor" in {row["op"] for row in json.loads(run.out)["uncovered"]}


def _model_ops():
    from codegen.model_ops import load

    return load()


def _remove_entry(ws, relative: str, op: str) -> None:
    """Deletes one `- op:` entry of a registry file."""
    text = ws.read(*relative.split("/"))
    new_text, count = re.subn(rf"^- op: {re.escape(op)}\n(?:(?!- op:).*\n)*", "", text, count=1, flags=re.M)
    assert count == 1, op
    ws.write(relative, new_text)
