"""--report and --explain."""

from __future__ import annotations

import json


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
    totals = report["totals"]
    assert totals["ops"] == len(rows) == totals["generated"] + totals["handwritten"]
    assert sum(totals["guard"].values()) == len(rows)
    assert sum(totals["device_check"].values()) == len(rows)


def test_report_markdown(ws):
    run = ws.run("--report")
    assert run.code == 0
    assert "| guard first-tensor |" in run.out
    assert "| add.Tensor | generated | binary | first-tensor | self, other | same-device | - | yaml/ops/binary.yaml:" in run.out
    assert "| fill_.Tensor | handwritten | - | explicit-arg | self | no-check |" in run.out


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
    assert "handwritten in csrc/handwritten/copy.cc" in run.out and "reason:" in run.out
    assert ws.run("--explain", "fft_fft").code == 1
    assert ws.run("--explain", "no_such_op").code == 1
