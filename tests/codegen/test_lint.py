"""The handwritten-kernel lint run by --check."""

from __future__ import annotations

from codegen.lint import raw_launches, registrations

GUARDED = """#include "runtime/launch.h"
at::Tensor& my_relu(at::Tensor& self) {
  FLAGOS_GUARDED_LAUNCH(flagos::launch_device_of(self), aclnnInplaceRelu, self);
  return self;
}
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("relu_", TORCH_FN(my_relu));
}
"""

RAW = """#include "runtime/launch.h"
at::Tensor& my_relu(at::Tensor& self) {
  uint64_t size = 0;
  aclOpExecutor* executor = nullptr;
  aclnnInplaceReluGetWorkspaceSize(nullptr, &size, &executor);
  EXEC_NPU_CMD(aclnnInplaceRelu, self);
  return self;
}
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("relu_", TORCH_FN(my_relu));
}
"""

ENTRY = "\n- op: relu_\n  guard: first-tensor\n  file: csrc/handwritten/relu.cc\n"


def _handwritten(ws, source: str, listed: bool = True) -> None:
    ws.write("csrc/handwritten/relu.cc", source)
    # relu_ moves from the generated registry to the handwritten one.
    ws.edit("yaml/ops/unary.yaml", "- op: relu_\n  shape: inplace\n  launch: aclnnInplaceRelu(self)\n"
            "  guard: first-tensor\n", "")
    if listed:
        with open(ws.path("yaml", "handwritten.yaml"), "a", encoding="utf-8") as handle:
            handle.write(ENTRY)
    assert ws.run().code == 0


def test_guarded_launch_passes(ws):
    _handwritten(ws, GUARDED)
    run = ws.run("--check")
    assert run.code == 0, run.err


def test_raw_launch_fails_with_file_and_line(ws):
    _handwritten(ws, RAW)
    run = ws.run("--check")
    assert run.code == 1
    assert "csrc/handwritten/relu.cc:5: calls ACLNN operator aclnnInplaceReluGetWorkspaceSize outside " \
           "FLAGOS_GUARDED_LAUNCH" in run.err
    assert "csrc/handwritten/relu.cc:6: passes ACLNN operator aclnnInplaceRelu outside FLAGOS_GUARDED_LAUNCH" in run.err
    assert "fix: launch it as FLAGOS_GUARDED_LAUNCH(<launch device>, aclnnInplaceRelu, ...)" in run.err


def test_annotated_exemption_passes(ws):
    source = RAW.replace("  aclnnInplaceReluGetWorkspaceSize(",
                         "  // flagos-lint: allow-raw-launch(probes the library; launches nothing)\n"
                         "  aclnnInplaceReluGetWorkspaceSize(")
    source = source.replace("EXEC_NPU_CMD(aclnnInplaceRelu, self);",
                            "EXEC_NPU_CMD(aclnnInplaceRelu, self);  // flagos-lint: allow-raw-launch(a test)")
    _handwritten(ws, source)
    run = ws.run("--check")
    assert run.code == 0, run.err


def test_exemption_needs_a_reason(ws):
    source = RAW.replace("EXEC_NPU_CMD(aclnnInplaceRelu, self);",
                         "EXEC_NPU_CMD(aclnnInplaceRelu, self);  // flagos-lint: allow-raw-launch( )")
    _handwritten(ws, source)
    run = ws.run("--check")
    assert run.code == 1
    assert "csrc/handwritten/relu.cc:6: aclnnInplaceRelu: the allow-raw-launch exemption gives no reason" in run.err


def test_unlisted_registration_fails(ws):
    _handwritten(ws, GUARDED, listed=False)
    run = ws.run("--check")
    assert run.code == 1
    assert "csrc/handwritten/relu.cc:7: registers relu_, which yaml/handwritten.yaml does not list" in run.err


def test_listed_op_must_be_registered(ws):
    _handwritten(ws, GUARDED.replace('m.impl("relu_", TORCH_FN(my_relu));', ""))
    run = ws.run("--check")
    assert run.code == 1
    line = ws.line_of("yaml/handwritten.yaml", "- op: relu_")
    assert f"yaml/handwritten.yaml:{line}: relu_ is not registered in csrc/handwritten/relu.cc" in run.err


def test_comments_and_strings_are_not_launches():
    source = """// aclnnAdd(self) in a comment
/* EXEC_NPU_CMD(aclnnMul, x) */
const char* name = "aclnnAdd(";
aclnnStatus status = ACLNN_SUCCESS;
FLAGOS_GUARDED_LAUNCH(pick(a, b), aclnnAdd, self, other, alpha, out);
FLAGOS_GUARDED_LAUNCH(device,
                      aclnnMul, self, other, out);
"""
    assert raw_launches("x.cc", source) == []
    assert [p.loc.line for p in raw_launches("x.cc", source + "run(&aclnnMul);\n")] == [8]


def test_registrations():
    text = 'TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {\n  m.impl("aten::mm", TORCH_FN(f));\n  // m.impl("bmm", g)\n}\n'
    assert registrations(text) == [("mm", 2)]
