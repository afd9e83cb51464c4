"""The kernel lint run by --check: launches around the guard, registrations, declared policies."""

from __future__ import annotations

import os
import re

import pytest

from codegen.lint import raw_launches, registrations
from codegen.main import REPO_ROOT as REPO

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
    # relu_ moves from the generated registry (relu's family) to the handwritten one.
    ws.edit("yaml/ops/unary.yaml", "  variants: [functional, inplace]\n", "")
    ws.edit("yaml/ops/unary.yaml", "  inplace_launch: aclnnInplaceRelu(self)\n", "")
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
    assert "csrc/handwritten/relu.cc:6: uses ACLNN operator aclnnInplaceRelu outside FLAGOS_GUARDED_LAUNCH" in run.err
    # The hint names the operator the macro takes, for the phase-1 call too.
    assert run.err.count("fix: launch it as FLAGOS_GUARDED_LAUNCH(<launch device>, aclnnInplaceRelu, "
                         "<its arguments>)") == 2
    assert "aclnnInplaceReluGetWorkspaceSize, <its" not in run.err


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


# ---- declared policy against the kernel's launches -------------------------------

# A handwritten kernel that resolves its own launch device (not the body of a generated structured
# wrapper, whose wrapper applies the declared policy): the launch is in a helper it calls.
MSE_BACKWARD = "- op: mse_loss_backward\n  guard: first-tensor\n"
MSE_DEVICE = "const LaunchDevice device = launch_device_of(self, target, grad_output);"


def _mse_launch_line(ws) -> int:
    return ws.line_of("csrc/handwritten/loss.cc", "FLAGOS_GUARDED_LAUNCH(device, aclnnMseLossBackward")


def test_the_repository_kernels_match_their_policies(ws):
    assert ws.run().code == 0
    run = ws.run("--check")
    assert run.code == 0, run.err


def test_declared_none_for_an_op_with_tensor_arguments_is_a_registry_error(ws):
    """Issue 13: `none` in the YAML and an unguarded launch in the kernel passed every check.
    The registry now refuses `none` for an op whose arguments name a device."""
    ws.edit("yaml/handwritten.yaml", MSE_BACKWARD,
            "- op: mse_loss_backward\n  guard: none\n  reason: runs on the current device\n")
    run = ws.run()
    assert run.code == 2
    assert "guard none, but mse_loss_backward's arguments name a device" in run.err


def test_declared_none_with_an_unguarded_kernel_fails(ws):
    """With the one reason the registry takes for `none` ("launches nothing"), the lint still
    reads the kernel: a launch there fails."""
    ws.edit("yaml/handwritten.yaml", MSE_BACKWARD,
            "- op: mse_loss_backward\n  guard: none\n  reason: launches nothing\n")
    ws.edit("csrc/handwritten/loss.cc", MSE_DEVICE, "const LaunchDevice device = no_launch_device();")
    assert ws.run().code == 0
    run = ws.run("--check")
    assert run.code == 1
    line = _mse_launch_line(ws)
    assert (f"csrc/handwritten/loss.cc:{line}: mse_loss_backward declares guard none, so it launches "
            "nothing guarded") in run.err
    assert "launches aclnnMseLossBackward on no launch device (the thread's current device)" in run.err
    assert "flagos-lint: allow-launch-device(<reason>)" in run.err


def test_declared_none_with_a_guarded_kernel_fails(ws):
    ws.edit("yaml/handwritten.yaml", MSE_BACKWARD,
            "- op: mse_loss_backward\n  guard: none\n  reason: launches nothing\n")
    assert ws.run().code == 0
    run = ws.run("--check")
    assert run.code == 1
    assert "mse_loss_backward declares guard none" in run.err
    assert "on the device of `grad_output`, `self`, `target`" in run.err
    assert "fix: declare `guard: first-tensor`" in run.err


def test_an_unguarded_kernel_under_a_guarded_policy_fails(ws):
    ws.edit("csrc/handwritten/loss.cc", MSE_DEVICE, "const LaunchDevice device = no_launch_device();")
    assert ws.run().code == 0
    run = ws.run("--check")
    assert run.code == 1
    assert f"loss.cc:{_mse_launch_line(ws)}: mse_loss_backward declares guard first-tensor" in run.err


def test_changing_a_declared_policy_alone_fails(ws):
    """Issue 13: zero_'s declared policy changed, its kernel untouched: --report would be wrong."""
    ws.edit("yaml/handwritten.yaml", "- op: zero_\n  guard: first-tensor\n",
            "- op: zero_\n  guard: none\n  reason: launches nothing\n")
    assert ws.run().code == 0
    run = ws.run("--check")
    assert run.code == 1
    line = ws.line_of("csrc/handwritten/fill.cc", "aclnnInplaceZero, self)")
    assert f"csrc/handwritten/fill.cc:{line}: zero_ declares guard none" in run.err
    assert "fix: declare `guard: explicit-arg` with `guard_arg: self`" in run.err


def test_an_equivalent_policy_passes(ws):
    """zero_ has one tensor: first-tensor and explicit-arg self guard the same device."""
    ws.edit("yaml/handwritten.yaml", "- op: zero_\n  guard: first-tensor\n",
            "- op: zero_\n  guard: explicit-arg\n  guard_arg: self\n")
    assert ws.run().code == 0
    assert ws.run("--check").code == 0


def test_explicit_arg_must_name_the_launch_device(ws):
    ws.edit("yaml/handwritten.yaml", MSE_BACKWARD,
            "- op: mse_loss_backward\n  guard: explicit-arg\n  guard_arg: target\n")
    assert ws.run().code == 0
    run = ws.run("--check")
    assert run.code == 1
    assert "mse_loss_backward declares guard explicit-arg `target`" in run.err
    assert "launches aclnnMseLossBackward on the device of `grad_output`, `self`, `target`" in run.err


def test_a_launch_device_the_lint_cannot_trace_fails(ws):
    ws.edit("csrc/handwritten/fill.cc", "FLAGOS_GUARDED_LAUNCH(self, aclnnInplaceZero, self);",
            "FLAGOS_GUARDED_LAUNCH(some_global_device, aclnnInplaceZero, self);")
    assert ws.run().code == 0
    run = ws.run("--check")
    assert run.code == 1
    assert "zero_ the lint cannot tell which argument the launch device comes from" in run.err
    assert "`some_global_device`, which the lint cannot trace to an argument" in run.err


def test_device_exemption_needs_a_reason(ws):
    ws.edit("csrc/handwritten/copy.cc", "allow-launch-device(the caller's launch device: a copy's destination, "
            "or a source being packed)", "allow-launch-device( )")
    assert ws.run().code == 0
    run = ws.run("--check")
    assert run.code == 1
    assert "the allow-launch-device exemption gives no reason" in run.err
    ws.edit("csrc/handwritten/copy.cc", "    // flagos-lint: allow-launch-device( )\n", "")
    assert ws.run().code == 0
    run = ws.run("--check")
    assert run.code == 1
    assert "_copy_from declares guard explicit-arg `dst`" in run.err
    assert "launches aclnnInplaceCopy on the device of `self`" in run.err


def test_traces_through_helpers_and_locals():
    """Parameters bind to the caller's arguments, locals to their initializers."""
    from codegen.lint import DeviceTracer, Frame, _walk, read_source

    source = read_source("x.cc", """
void helper(const LaunchDevice& device, const at::Tensor& t) {
  FLAGOS_GUARDED_LAUNCH(device, aclnnA, t);
}
void on_tensor(const at::Tensor& t) { FLAGOS_GUARDED_LAUNCH(t, aclnnB, t); }
at::Tensor kernel(const at::Tensor& self, const at::Tensor& other, int64_t dim) {
  const std::vector<at::Tensor> list(other.begin(), other.end());
  const LaunchDevice device = launch_device_of(self);
  at::Tensor out = empty_on(device, self.sizes(), at::kFloat);
  helper(device, out);
  on_tensor(dim > 0 ? out : self);
  on_tensor(list[0]);
  FLAGOS_GUARDED_LAUNCH(no_launch_device(), aclnnC, self);
  return out;
}
""")
    table = {}
    for function in source.functions:
        table.setdefault(function.name, []).append((source, function))
    kernel = next(f for f in source.functions if f.name == "kernel")
    found = []
    _walk(Frame(source, kernel, {}, {"self": "self", "other": "other", "dim": "dim"}), table, (id(kernel),), found)
    tracer = DeviceTracer()
    result = sorted((launch.operator, sorted(tracer.sources(launch.device, frame, launch.position)))
                    for launch, frame in found)
    assert result == [("aclnnA", ["self"]), ("aclnnB", ["other"]), ("aclnnB", ["self"]),
                      ("aclnnC", ["no launch device"])]


# ---- ways around the guard ---------------------------------------------------------

KERNEL = """#include "runtime/launch.h"
#include "runtime/opapi.h"
#include "generated/aclnn/aclnnLerp.h"
namespace flagos {
at::Tensor& my_relu(at::Tensor& self) {
BODY
  return self;
}
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("relu_", TORCH_FN(my_relu));
}
}  // namespace flagos
"""


def _lint_file(text: str, relative: str = "handwritten/relu.cc"):
    from codegen.lint import evasions

    return raw_launches(f"csrc/{relative}", text) + evasions(f"csrc/{relative}", relative, text)


EVASIONS = {
    # name: (kernel body, the message expected at the body's line)
    "string lookup": ('  auto f = opapi_symbol("aclnnLerpGetWorkspaceSize");',
                      "names an ACLNN symbol in a string"),
    "string lookup, resolver": ('  auto f = opapi_symbol(name);', "resolves symbols by name (`opapi_symbol`)"),
    "dlsym": ("  void* f = dlsym(RTLD_DEFAULT, name);", "resolves symbols by name (`dlsym`)"),
    "token pasting": ("#define ACLNN(n) aclnn##n\n  ACLNN(LerpGetWorkspaceSize)(self, self, self, self, nullptr, nullptr);",
                      "pastes tokens (`##`)"),
    "token pasting, digraph": ("%:define ACLNN(n) aclnn%:%:n", "pastes tokens (`##`)"),
    "a pasting macro": ("  C10_CONCATENATE(aclnn, LerpGetWorkspaceSize)(self);", "pastes tokens (`C10_CONCATENATE`)"),
    "the fragment": ("  PASTE(aclnn, Lerp)(self);", "builds an ACLNN operator name from the fragment `aclnn`"),
    "a pointer": ("  auto f = aclnnLerpGetWorkspaceSize;\n  f(self);", "uses ACLNN operator aclnnLerpGetWorkspaceSize"),
    "a return": ("  return *reinterpret_cast<at::Tensor*>(&aclnnLerp);", "uses ACLNN operator aclnnLerp"),
    "a using-declaration": ("  using ::aclnnLerpGetWorkspaceSize;", "uses ACLNN operator aclnnLerpGetWorkspaceSize"),
    "a macro argument": ("  WRAP(aclnnLerp, self);", "uses ACLNN operator aclnnLerp"),
    "a line splice": ("  aclnn\\\nLerpGetWorkspaceSize(self);", "calls ACLNN operator aclnnLerpGetWorkspaceSize"),
    "a raw string hiding code": ('  auto s = R"x(")x"; aclnnLerp(nullptr, 0, nullptr, nullptr); // "',
                                 "calls ACLNN operator aclnnLerp"),
    "a digit separator hiding code": ("  int x = 1'0; aclnnLerp(nullptr, 0, nullptr, nullptr);",
                                      "calls ACLNN operator aclnnLerp"),
    "the traits called": ("  flagos::aclnn::aclnnLerp(self);", "calls ACLNN operator aclnnLerp"),
    "the launch template": ("  flagos::launch<flagos::aclnn::aclnnLerp>(0, \"\", self, self, self, self);",
                            "uses the launch path's internals (`launch<...>`)"),
    "the entry points": ("  OpApi<flagos::aclnn::aclnnLerp>::get().phase_two()(nullptr, 0, nullptr, nullptr);",
                         "uses the launch path's internals (`OpApi`)"),
    "the guard switch": ("  set_guards_enabled(false);", "uses the launch path's internals (`set_guards_enabled`)"),
    "the launch macro redefined": ("#undef FLAGOS_GUARDED_LAUNCH", "redefines the launch macro"),
    "a macro renaming the device": ("#define launch_device_of(...) no_launch_device()", "defines a macro"),
    "an unscanned include": ('#include "../../tests/raw_launch.h"', "includes \"../../tests/raw_launch.h\""),
    "a simulator include": ('#include "sim/opapi/sim_op.h"', "includes \"sim/opapi/sim_op.h\""),
    "a computed include": ("#include RAW_LAUNCH_HEADER", "includes RAW_LAUNCH_HEADER"),
    "a computed registration": ('  static const char* name = "relu_";\n  m.impl(name, TORCH_FN(my_relu));',
                                "registers a kernel under an op name that is not a string literal"),
}


@pytest.mark.parametrize("case", sorted(EVASIONS))
def test_evasion_is_caught(case):
    body, message = EVASIONS[case]
    text = KERNEL.replace("BODY", body)
    line = text.split("\n").index(body.split("\n")[0]) + 1
    problems = _lint_file(text)
    assert [p for p in problems if message in p.message and p.loc.line in (line, line + 1)], problems


def test_evasions_fail_the_check(ws):
    """End to end: the issue's string lookup and token pasting in a handwritten kernel fail --check."""
    _handwritten(ws, GUARDED)
    body = ('  auto f = opapi_symbol("aclnnLerpGetWorkspaceSize");\n'
            "#define ACLNN(n) aclnn##n\n  ACLNN(Lerp)(nullptr, 0, nullptr, nullptr);")
    ws.write("csrc/handwritten/relu.cc", KERNEL.replace("BODY", body))
    run = ws.run("--check")
    assert run.code == 1
    assert "relu.cc:6: names an ACLNN symbol in a string" in run.err
    assert "relu.cc:6: resolves symbols by name (`opapi_symbol`)" in run.err
    assert "relu.cc:7: pastes tokens (`##`)" in run.err
    assert "relu.cc:7: builds an ACLNN operator name from the fragment `aclnn`" in run.err
    assert "relu.cc:7: defines a macro (`ACLNN`)" in run.err


def test_evasions_outside_the_kernels_are_caught(ws):
    """The whole of csrc/ but the simulator is read: a helper in csrc/runtime/ cannot launch raw either."""
    assert ws.run().code == 0
    ws.write("csrc/runtime/helper.cc", '#include "runtime/opapi.h"\nvoid* f() { return flagos::opapi_symbol('
             '"aclnnLerpGetWorkspaceSize"); }\nvoid g() { aclnnLerp(nullptr, 0, nullptr, nullptr); }\n')
    ws.write("csrc/sim/opapi/ops.cc", "aclnnStatus aclnnLerp(void*, uint64_t, aclOpExecutor*, aclrtStream) { }\n")
    run = ws.run("--check")
    assert run.code == 1
    assert "csrc/runtime/helper.cc:2: names an ACLNN symbol in a string" in run.err
    assert "csrc/runtime/helper.cc:2: resolves symbols by name (`opapi_symbol`)" in run.err
    assert "csrc/runtime/helper.cc:3: calls ACLNN operator aclnnLerp" in run.err
    assert "csrc/sim/" not in run.err


def test_the_launch_path_may_resolve_symbols(ws):
    """csrc/runtime/launch.h is the sanctioned place: opapi_symbol(Op::name + "GetWorkspaceSize")."""
    assert ws.run().code == 0
    for name in ("runtime/launch.h", "runtime/launch.cc", "runtime/launch_device.h", "runtime/launch_device.cc",
                 "runtime/acl_args.h", "runtime/acl_args.cc", "runtime/executor_cache.h", "runtime/executor_cache.cc",
                 "runtime/opapi.cc", "runtime/opapi.h", "python/module.cc"):
        with open(os.path.join(REPO, "csrc", *name.split("/")), encoding="utf-8") as handle:
            ws.write(f"csrc/{name}", handle.read())
    run = ws.run("--check")
    assert run.code == 0, run.err


TYPE_ONLY = """#include "runtime/launch.h"
#include <generated/aclnn/aclnnLerp.h>
using LerpPhaseOne = decltype(&aclnnLerpGetWorkspaceSize);
static_assert(sizeof(decltype(aclnnLerp(nullptr, 0, nullptr, nullptr))) == sizeof(aclnnStatus));
static_assert(noexcept(aclnnLerp) || true);
using Lerp = flagos::aclnn::aclnnLerp;
static_assert(::flagos::aclnn::aclnnLerp::output_mask != 0);
constexpr const char* lerp_name = flagos::aclnn::aclnnLerp::name;
void launch(const at::Tensor& self) {
  FLAGOS_GUARDED_LAUNCH(self, aclnnLerp, self, self, self, self);
}
"""


def test_type_only_uses_are_not_launches():
    assert raw_launches("x.cc", TYPE_ONLY) == []
    from codegen.lint import evasions

    assert evasions("x.cc", "handwritten/x.cc", TYPE_ONLY) == []


def test_a_launch_no_kernel_reaches_fails(ws):
    """A launch behind a function pointer escapes the policy check: it must be reached by a call."""
    ws.edit("csrc/handwritten/fill.cc", "  if (self.numel() > 0) {\n    FLAGOS_GUARDED_LAUNCH(self, aclnnInplaceZero, self);",
            "  auto launch_zero = &zero_helper;\n  if (self.numel() > 0) {\n    launch_zero(self);")
    ws.edit("csrc/handwritten/fill.cc", "at::Tensor& zero(at::Tensor& self) {",
            "void zero_helper(at::Tensor& self) { FLAGOS_GUARDED_LAUNCH(flagos::no_launch_device(), aclnnInplaceZero, "
            "self); }\n\nat::Tensor& zero(at::Tensor& self) {")
    assert ws.run().code == 0
    run = ws.run("--check")
    assert run.code == 1
    line = ws.line_of("csrc/handwritten/fill.cc", "void zero_helper")
    assert (f"csrc/handwritten/fill.cc:{line}: launches aclnnInplaceZero from `zero_helper`, which no registered "
            "kernel calls") in run.err


@pytest.mark.parametrize("body,expected", [
    # a loop that switches the device after the first launch
    ("  LaunchDevice d = launch_device_of(self);\n  for (int i = 0; i < 2; ++i) {\n"
     "    FLAGOS_GUARDED_LAUNCH(d, aclnnA, self);\n    d = no_launch_device();\n  }", ["no launch device", "self"]),
    # a static local keeps the first call's device
    ("  static const LaunchDevice d = launch_device_of(self);\n  FLAGOS_GUARDED_LAUNCH(d, aclnnA, self);",
     ["?static local"]),
    # a parameter reassigned
    ("  at::Tensor t = self;\n  t = other;\n  FLAGOS_GUARDED_LAUNCH(t, aclnnA, self);", ["other", "self"]),
])
def test_tracing_is_conservative(body, expected):
    from codegen.lint import DeviceTracer, Frame, guarded_launches, read_source

    source = read_source("x.cc", "void kernel(const at::Tensor& self, const at::Tensor& other) {\n" + body + "\n}\n")
    kernel = source.functions[0]
    frame = Frame(source, kernel, {}, {"self": "self", "other": "other"})
    (launch,) = guarded_launches(source, kernel)
    assert sorted(DeviceTracer().sources(launch.device, frame, launch.position)) == expected


# ---- the bodies of generated structured wrappers (`impl:`) --------------------------
# lerp.Scalar's group moves from the generated registry to a handwritten body: the generator
# writes and registers its three wrappers; lerp.cc defines only flagos::impl::lerp_scalar.

LERP_OPS = ("lerp.Scalar", "lerp.Scalar_out", "lerp_.Scalar")  # one family entry: lerp.Scalar
LERP_BODY = """#include <ATen/core/Tensor.h>

#include "generated/aclnn/aclnnLerps.h"
#include "generated/impls.h"
#include "runtime/launch.h"

namespace flagos::impl {

void lerp_scalar(const LaunchDevice& device, const at::Tensor& self, const at::Tensor& end, const at::Scalar& weight,
                 const at::Tensor& out) {
  FLAGOS_GUARDED_LAUNCH(device, aclnnLerps, self, end, weight, out);
}

}  // namespace flagos::impl
"""


def _lerp_body(ws, source: str = LERP_BODY) -> None:
    text = ws.read("yaml", "ops", "binary_math.yaml")
    start = text.index("- op: lerp.Scalar\n")
    end = text.find("\n\n", start)
    text = text[:start] + text[end + 2 if end >= 0 else len(text):]
    ws.write("yaml/ops/binary_math.yaml", text)
    with open(ws.path("yaml", "handwritten.yaml"), "a", encoding="utf-8") as handle:
        for op in LERP_OPS:
            handle.write(f"\n- op: {op}\n  guard: first-tensor\n  file: csrc/handwritten/lerp.cc\n"
                         "  impl: lerp_scalar\n")
    ws.write("csrc/handwritten/lerp.cc", source)
    run = ws.run()
    assert run.code == 0, run.err


def test_impl_body_passes(ws):
    _lerp_body(ws)
    run = ws.run("--check")
    assert run.code == 0, run.err
    shard = "".join(ws.read("csrc", "generated", name) for name in sorted(os.listdir(ws.out_dir))
                    if name.startswith("kernels_"))
    for op in LERP_OPS:
        assert f'm.impl("{op}", ' in shard  # registered by the generator, not by lerp.cc
    assert "flagos::impl::lerp_scalar(launch_device, self, end, weight, op.outputs[0]);" in shard
    assert "flagos::impl::lerp_scalar(launch_device, self, end, weight, out);" in shard
    assert "flagos::impl::lerp_scalar(launch_device, self, end, weight, self);" in shard


def test_impl_body_with_a_local_or_a_helper_passes(ws):
    """The body's device may reach the launch through a local or a helper's parameter."""
    source = LERP_BODY.replace(
        "void lerp_scalar(",
        "void launch_lerps(const LaunchDevice& on, const at::Tensor& self, const at::Tensor& end,\n"
        "                  const at::Scalar& weight, const at::Tensor& out) {\n"
        "  FLAGOS_GUARDED_LAUNCH(on, aclnnLerps, self, end, weight, out);\n}\n\nvoid lerp_scalar(").replace(
        "  FLAGOS_GUARDED_LAUNCH(device, aclnnLerps, self, end, weight, out);",
        "  const LaunchDevice local = device;\n  launch_lerps(local, self, end, weight, out);")
    _lerp_body(ws, source)
    run = ws.run("--check")
    assert run.code == 0, run.err


def test_impl_op_registered_by_its_file_fails(ws):
    source = LERP_BODY + """
namespace flagos {
namespace {
at::Tensor lerp_kernel(const at::Tensor& self, const at::Tensor& end, const at::Scalar& weight) { return self; }
}  // namespace
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("lerp.Scalar", TORCH_FN(lerp_kernel));
}
}  // namespace flagos
"""
    _lerp_body(ws, source)
    run = ws.run("--check")
    assert run.code == 1
    line = ws.line_of("csrc/handwritten/lerp.cc", 'm.impl("lerp.Scalar"')
    assert (f"csrc/handwritten/lerp.cc:{line}: registers lerp.Scalar, whose wrapper the generator writes and "
            "registers (impl: lerp_scalar)\n    fix: remove this m.impl: the file defines only the body "
            "flagos::impl::lerp_scalar") in run.err


def test_impl_op_whose_file_lacks_the_body_fails(ws):
    _lerp_body(ws, LERP_BODY.replace("void lerp_scalar(", "void lerp_scalar_body("))
    run = ws.run("--check")
    assert run.code == 1
    for op in LERP_OPS:
        line = _entry_line(ws, op)
        assert (f"yaml/handwritten.yaml:{line}: {op}: csrc/handwritten/lerp.cc does not define its body "
                "flagos::impl::lerp_scalar\n    fix: define it as generated/impls.h declares it, in namespace "
                "flagos::impl") in run.err


def _entry_line(ws, op: str) -> int:
    lines = ws.read("yaml", "handwritten.yaml").splitlines()
    return lines.index(f"- op: {op}") + 1


def _body_launches_elsewhere(run, line: int, *described: str) -> None:
    """`lerp.cc:<line>: the body ... launches aclnnLerps on <described...>, not on ... (`device`)` and its fix."""
    pattern = (rf"^csrc/handwritten/lerp\.cc:{line}: the body flagos::impl::lerp_scalar launches aclnnLerps on "
               rf"(?P<on>[^\n]*), not on the launch device its wrapper passes \(`device`\)\n"
               rf"    fix: launch on `device`: the generated wrapper resolved it from lerp\.Scalar's policy$")
    found = re.search(pattern, run.err, re.M)
    assert found, run.err
    assert all(part in found.group("on") for part in described), run.err


@pytest.mark.parametrize("device,described", [
    ("launch_device_of(end)", ["`end`"]),
    ("launch_device_of(self, end)", ["`end`", "`self`"]),
    ("no_launch_device()", ["no launch device (the thread's current device)"]),
    ("some_global_device", ["`some_global_device`, which the lint cannot trace to an argument"]),
])
def test_impl_body_launching_elsewhere_fails(ws, device, described):
    """The wrapper resolved the launch device from the declared policy and passes it first: the body must
    launch there."""
    _lerp_body(ws, LERP_BODY.replace("FLAGOS_GUARDED_LAUNCH(device,", f"FLAGOS_GUARDED_LAUNCH({device},"))
    run = ws.run("--check")
    assert run.code == 1
    _body_launches_elsewhere(run, ws.line_of("csrc/handwritten/lerp.cc", "FLAGOS_GUARDED_LAUNCH("), *described)


def test_impl_body_launching_elsewhere_through_a_helper_fails(ws):
    source = LERP_BODY.replace(
        "void lerp_scalar(",
        "void launch_lerps(const LaunchDevice& on, const at::Tensor& self, const at::Tensor& end,\n"
        "                  const at::Scalar& weight, const at::Tensor& out) {\n"
        "  FLAGOS_GUARDED_LAUNCH(on, aclnnLerps, self, end, weight, out);\n}\n\nvoid lerp_scalar(").replace(
        "  FLAGOS_GUARDED_LAUNCH(device, aclnnLerps, self, end, weight, out);",
        "  launch_lerps(launch_device_of(end), self, end, weight, out);")
    _lerp_body(ws, source)
    run = ws.run("--check")
    assert run.code == 1
    _body_launches_elsewhere(run, ws.line_of("csrc/handwritten/lerp.cc", "FLAGOS_GUARDED_LAUNCH(on,"), "`end`")


def test_declared_none_for_an_impl_op_whose_body_launches_fails(ws):
    """Issue 13 for bodies: `none` in the YAML while the body launches must fail, as it does for a kernel
    that resolves its own device (test_declared_none_with_a_guarded_kernel_fails)."""
    _lerp_body(ws)
    text = ws.read("yaml", "handwritten.yaml")
    for op in LERP_OPS:
        text = text.replace(f"- op: {op}\n  guard: first-tensor\n  file: csrc/handwritten/lerp.cc\n",
                            f"- op: {op}\n  guard: none\n  reason: launches nothing\n"
                            "  file: csrc/handwritten/lerp.cc\n")
    ws.write("yaml/handwritten.yaml", text)
    run = ws.run()
    if run.code == 0:  # refused either by the registry (exit 2) or by the lint (exit 1)
        run = ws.run("--check")
        assert run.code == 1
    else:
        assert run.code == 2
    assert "lerp.Scalar" in run.err and "none" in run.err, run.err
