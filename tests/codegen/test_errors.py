"""Every class of registry error: exit 2, file:line + op + what + fix, nothing written."""

from __future__ import annotations

import os

import pytest

NEG = """- op: neg
  shape: unary
  launch: aclnnNeg(self, out)
  out:
    size: self
    dtype: self
  guard: first-tensor
"""


CASES = {
    # name: (file, old, new, needle locating the reported line, op, message fragment)
    "yaml syntax": ("yaml/ops/unary.yaml", "- op: abs\n  shape: unary", "- op: abs\n  shape: [unary",
                    None, None, "YAML syntax error"),
    "unknown key": ("yaml/ops/unary.yaml", NEG, NEG.replace("  guard:", "  guards: first-tensor\n  guard:"),
                    "guards:", "neg", "unknown key `guards`"),
    "unknown op": ("yaml/ops/unary.yaml", NEG, NEG.replace("op: neg", "op: negg"),
                   "op: negg", "negg", "has no operator `negg`"),
    "explicit-arg, no such argument": (
        "yaml/ops/unary.yaml", NEG, NEG.replace("guard: first-tensor", "guard: explicit-arg\n  guard_arg: input"),
        "guard_arg: input", "neg", "guard_arg `input` is not an argument of neg"),
    "explicit-arg, not a tensor or device": (
        "yaml/ops/binary.yaml", "  out:\n    size: broadcast(self, other)\n    dtype: result_type(self, other)\n"
        "  guard: first-tensor\n\n- op: add_.Tensor",
        "  out:\n    size: broadcast(self, other)\n    dtype: result_type(self, other)\n"
        "  guard: explicit-arg\n  guard_arg: alpha\n\n- op: add_.Tensor",
        "guard_arg: alpha", "add.Tensor", "neither a tensor, a tensor list nor a device"),
    "first-tensor without tensors": (
        "yaml/ops/factory.yaml", "  guard: explicit-arg\n  guard_arg: device\n\n- op: zeros",
        "  guard: first-tensor\n\n- op: zeros", "guard: first-tensor", "full", "has no tensor argument"),
    "none without reason": ("yaml/ops/unary.yaml", NEG, NEG.replace("guard: first-tensor", "guard: none"),
                            "guard: none", "neg", "guard none without a `reason`"),
    "no-check without reason": (
        "yaml/ops/unary.yaml", NEG, NEG.replace("guard: first-tensor", "guard: first-tensor\n  device_check: no-check"),
        "device_check: no-check", "neg", "device_check no-check without a `reason`"),
    "same op twice": ("yaml/ops/unary.yaml", NEG, NEG + "\n" + NEG.replace("op: neg", "op: abs"),
                      None, "abs", "abs is registered twice"),
    "unknown shape": ("yaml/ops/unary.yaml", NEG, NEG.replace("shape: unary", "shape: unaryy"),
                      "shape: unaryy", "neg", "unknown kernel shape `unaryy`"),
    "entry point without prototype": (
        "yaml/ops/unary.yaml", NEG, NEG.replace("aclnnNeg(self, out)", "aclnnNegative(self, out)"),
        "aclnnNegative", "neg", "entry point `aclnnNegative` has no prototype"),
    "scalar onto an aclTensor": (
        "yaml/ops/scalar.yaml", "launch: aclnnMuls(self, other, out)", "launch: aclnnMul(self, other, out)",
        "launch: aclnnMul(self, other, out)", "mul.Scalar", "is a Scalar but the parameter is `const aclTensor*`"),
    "wrong argument count": ("yaml/ops/unary.yaml", NEG, NEG.replace("aclnnNeg(self, out)", "aclnnNeg(self)"),
                             "aclnnNeg(self)", "neg", "aclnnNeg takes 2 argument(s), the launch passes 1"),
    "input onto an output parameter": (
        "yaml/ops/unary.yaml", NEG, NEG.replace("aclnnNeg(self, out)", "aclnnNeg(self, self)"),
        "aclnnNeg(self, self)", "neg", "is an input but the operator writes this parameter"),
    "prototype without source": (
        "yaml/aclnn.yaml", "  source: hicann/ops-math/math/neg/op_api/aclnn_neg.h\n", "",
        "aclnnNeg:", None, "aclnnNeg: `source` must name the CANN header or doc that declares it"),
    "prototype source outside CANN": (
        "yaml/aclnn.yaml", "source: hicann/ops-math/math/neg/op_api/aclnn_neg.h",
        "source: somewhere/aclnn_neg.h", "source: somewhere", None, "`source` must name the CANN header"),
    "output that is not a tensor parameter": (
        "yaml/aclnn.yaml", "  params: [const aclTensor* self, const aclScalar* other, const aclScalar* alpha, "
        "aclTensor* out]\n  outputs: [out]", "  params: [const aclTensor* self, const aclScalar* other, "
        "const aclScalar* alpha, aclTensor* out]\n  outputs: [alpha]",
        "outputs: [alpha]", None, "aclnnAdds: output `alpha` is not a tensor parameter"),
    "prototype without outputs": (
        "yaml/aclnn.yaml", "  params: [const aclTensor* self, aclTensor* out]\n  outputs: [out]\naclnnExp:",
        "  params: [const aclTensor* self, aclTensor* out]\naclnnExp:",
        "aclnnNeg:", None, "aclnnNeg: `outputs` must list the parameters the operator writes"),
    "unknown prototype key": (
        "yaml/aclnn.yaml", "  source: hicann/ops-math/math/neg/op_api/aclnn_neg.h\n",
        "  source: hicann/ops-math/math/neg/op_api/aclnn_neg.h\n  direction: out\n",
        "direction: out", None, "unknown key `direction`"),
    "unknown rule": ("yaml/ops/unary.yaml", NEG, NEG.replace("size: self", "size: broadcast(self)"),
                     "size: broadcast(self)", "neg", "takes 2 argument(s), not 1"),
}


def _snapshot(ws):
    return {name: (os.stat(os.path.join(ws.out_dir, name)).st_mtime_ns, data) for name, data in ws.outputs().items()}


@pytest.mark.parametrize("case", sorted(CASES))
def test_registry_error(ws, case):
    file, old, new, needle, op, message = CASES[case]
    assert ws.run().code == 0
    before = _snapshot(ws)
    ws.edit(file, old, new)

    run = ws.run()

    assert run.code == 2, run.err
    assert "nothing was written" in run.err
    assert message in run.err, run.err
    line = ws.line_of(file, needle) if needle else None
    location = f"{file}:{line}:" if line else f"{file}:"
    reported = [entry for entry in run.err.split("\n") if entry.startswith(location) and message in entry]
    assert reported, f"no `{location} ... {message}` in:\n{run.err}"
    if op:
        assert f" {op}: " in reported[0]
    assert "\n    fix: " in run.err
    assert _snapshot(ws) == before  # nothing written, not even touched


def test_handwritten_and_generated(ws):
    ws.edit("yaml/handwritten.yaml", "- op: zero_\n", "- op: abs\n  guard: first-tensor\n  file: csrc/handwritten/x.cc\n\n- op: zero_\n")
    run = ws.run()
    assert run.code == 2
    line = ws.line_of("yaml/handwritten.yaml", "- op: abs")
    generated = ws.line_of("yaml/ops/unary.yaml", "- op: abs")
    assert f"yaml/handwritten.yaml:{line}: abs: abs is both generated (at yaml/ops/unary.yaml:{generated})" in run.err
    assert "fix: remove one of the two entries" in run.err


def test_all_errors_at_once(ws):
    ws.edit("yaml/ops/unary.yaml", NEG, NEG.replace("guard: first-tensor", "guard: none"))
    ws.edit("yaml/ops/factory.yaml", "- op: zeros", "- op: zeroes")
    ws.edit("yaml/aclnn.yaml", "params: [const aclTensor* self, aclTensor* out]\n  outputs: [out]\naclnnNeg:",
            "params: [const aclTensr* self, aclTensor* out]\n  outputs: [out]\naclnnNeg:")
    run = ws.run()
    assert run.code == 2
    assert "problem(s)" in run.err
    assert "guard none without a `reason`" in run.err
    assert "has no operator `zeroes`" in run.err
    assert "cannot use parameter `const aclTensr* self`" in run.err
    assert not os.listdir(ws.out_dir)


def test_none_needs_a_listed_reason_when_an_argument_names_a_device(ws):
    # neg's `self` names a device: its launch must run there, whatever reason is given.
    ws.edit("yaml/ops/unary.yaml", NEG,
            NEG.replace("guard: first-tensor", "guard: none\n  device_check: no-check\n  reason: a test"))
    run = ws.run()
    assert run.code == 2
    assert "guard none, but neg's arguments name a device (self)" in run.err
    assert "launches nothing" in run.err  # the fix lists the closed reasons


def test_none_with_a_listed_reason_is_accepted(ws):
    ws.edit("yaml/ops/unary.yaml", NEG,
            NEG.replace("guard: first-tensor", "guard: none\n  reason: launches nothing"))
    assert ws.run().code == 0
    report = ws.run("--report")
    assert "`launches nothing`" in report.out
