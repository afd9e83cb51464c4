"""The kernel lint run by --check: launches around the guard, registrations, the bodies' launch devices."""

from __future__ import annotations

import os
import re

import pytest

from codegen.lint import raw_launches, registrations
from codegen.main import REPO_ROOT as REPO

GUARDED = """#include "runtime/launch.h"
namespace flagos::impl {
at::Tensor& my_relu(const LaunchDevice& device, at::Tensor& self) {
  FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceRelu, self);
  return self;
}
}  // namespace flagos::impl
"""

RAW = """#include "runtime/launch.h"
namespace flagos::impl {
at::Tensor& my_relu(const LaunchDevice& device, at::Tensor& self) {
  aclOpExecutor* executor = nullptr;
  aclnnInplaceReluGetWorkspaceSize(nullptr, &size, &executor);
  EXEC_NPU_CMD(aclnnInplaceRelu, self);
  return self;
}
}  // namespace flagos::impl
"""

REGISTERED = GUARDED + """TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("relu_", TORCH_FN(flagos::impl::my_relu));
}
"""

ENTRY = "\n- op: relu_\n  guard: first-tensor\n  file: csrc/handwritten/relu.cc\n  impl: my_relu\n"


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
    _handwritten(ws, REGISTERED, listed=False)
    run = ws.run("--check")
    assert run.code == 1
    assert ("csrc/handwritten/relu.cc:9: registers relu_: handwritten files define bodies, the generator "
            "registers them") in run.err
    assert "`impl: <its body>` to yaml/handwritten.yaml, and remove this m.impl" in run.err


def test_listed_registration_fails(ws):
    """The generator writes every registration: a handwritten file registers nothing, listed or not."""
    _handwritten(ws, REGISTERED)
    run = ws.run("--check")
    assert run.code == 1
    assert ("csrc/handwritten/relu.cc:9: registers relu_, whose wrapper the generator writes and registers "
            "(impl: my_relu)") in run.err
    shard = "".join(ws.read("csrc", "generated", name) for name in sorted(os.listdir(ws.out_dir))
                    if name.startswith("kernels_"))
    assert 'm.impl("relu_", flagos::with_dtype_fallback<"relu_", &wrapper_relu_>());' in shard
    assert "return flagos::impl::my_relu(launch_device, self);" in shard


def test_listed_op_without_a_body_is_a_registry_error(ws):
    ws.write("csrc/handwritten/relu.cc", GUARDED)
    ws.edit("yaml/ops/unary.yaml", "  variants: [functional, inplace]\n", "")
    ws.edit("yaml/ops/unary.yaml", "  inplace_launch: aclnnInplaceRelu(self)\n", "")
    with open(ws.path("yaml", "handwritten.yaml"), "a", encoding="utf-8") as handle:
        handle.write(ENTRY.replace("  impl: my_relu\n", ""))
    run = ws.run()
    assert run.code == 2
    line = ws.line_of("yaml/handwritten.yaml", "- op: relu_")
    assert f"yaml/handwritten.yaml:{line}: relu_: no `impl`" in run.err


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


# ---- a body launches on the device it is given -------------------------------------------
# The generator resolves each handwritten op's launch device from its registry policy and passes it
# first; the lint's one rule: every launch is on a LaunchDevice parameter, and no handwritten file
# makes a launch device of its own.


def test_the_repository_bodies_pass(ws):
    assert ws.run().code == 0
    run = ws.run("--check")
    assert run.code == 0, run.err


def _zero_line(ws) -> int:
    return ws.line_of("csrc/handwritten/fill.cc", "aclnnInplaceZero, self)")


@pytest.mark.parametrize("device,made", [
    ("launch_device_of(self)", "launch_device_of"),
    ("no_launch_device()", "no_launch_device"),
    ("LaunchDevice{}", "LaunchDevice"),
])
def test_a_launch_on_a_device_the_body_makes_fails(ws, device, made):
    ws.edit("csrc/handwritten/fill.cc", "FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceZero, self);",
            f"FLAGOS_GUARDED_LAUNCH({device}, aclnnInplaceZero, self);")
    run = ws.run("--check")
    assert run.code == 1
    line = _zero_line(ws)
    assert (f"csrc/handwritten/fill.cc:{line}: `zero_` launches aclnnInplaceZero on `{device}`, not on a "
            "LaunchDevice parameter of its own (it has `device`)") in run.err
    assert "fix: take `const LaunchDevice& device` first and launch on it" in run.err
    assert f"csrc/handwritten/fill.cc:{line}: makes a launch device of its own ({made})" in run.err


def test_a_launch_on_a_tensor_or_a_global_fails(ws):
    ws.edit("csrc/handwritten/fill.cc", "FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceZero, self);",
            "FLAGOS_GUARDED_LAUNCH(self, aclnnInplaceZero, self);")
    ws.edit("csrc/handwritten/fill.cc", "FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceFillScalar, self, value);",
            "FLAGOS_GUARDED_LAUNCH(some_global_device, aclnnInplaceFillScalar, self, value);")
    run = ws.run("--check")
    assert run.code == 1
    assert f"fill.cc:{_zero_line(ws)}: `zero_` launches aclnnInplaceZero on `self`, not on a LaunchDevice" in run.err
    line = ws.line_of("csrc/handwritten/fill.cc", "aclnnInplaceFillScalar, self, value)")
    assert f"fill.cc:{line}: `fill_` launches aclnnInplaceFillScalar on `some_global_device`" in run.err


def test_a_local_launch_device_fails_and_a_helper_parameter_passes(ws):
    """A helper launches on its own LaunchDevice parameter: the compiler makes its callers pass one,
    and none can be made in csrc/handwritten/ (but the body's). A local copy is not a parameter."""
    ws.edit("csrc/handwritten/fill.cc", "at::Tensor& zero_(const LaunchDevice& device, at::Tensor& self) {",
            "void launch_zero(const LaunchDevice& on, at::Tensor& self) {\n"
            "  FLAGOS_GUARDED_LAUNCH(on, aclnnInplaceZero, self);\n}\n\n"
            "at::Tensor& zero_(const LaunchDevice& device, at::Tensor& self) {\n  const LaunchDevice local = device;")
    ws.edit("csrc/handwritten/fill.cc", "FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceZero, self);",
            "FLAGOS_GUARDED_LAUNCH(local, aclnnInplaceZero, self);\n    launch_zero(device, self);")
    run = ws.run("--check")
    assert run.code == 1
    assert "`zero_` launches aclnnInplaceZero on `local`, not on a LaunchDevice parameter" in run.err
    assert "`launch_zero`" not in run.err
    assert run.err.count("launches aclnnInplaceZero") == 1


def test_device_exemption_passes_with_a_reason_only(ws):
    ws.edit("csrc/handwritten/fill.cc", "    FLAGOS_GUARDED_LAUNCH(device, aclnnInplaceZero, self);",
            "    // flagos-lint: allow-launch-device(a test)\n"
            "    FLAGOS_GUARDED_LAUNCH(launch_device_of(self), aclnnInplaceZero, self);")
    assert ws.run().code == 0
    run = ws.run("--check")
    assert run.code == 0, run.err
    ws.edit("csrc/handwritten/fill.cc", "allow-launch-device(a test)", "allow-launch-device( )")
    run = ws.run("--check")
    assert run.code == 1
    assert f"fill.cc:{_zero_line(ws)}: the allow-launch-device exemption gives no reason" in run.err


def test_the_copy_exemptions_need_their_reasons(ws):
    """copy.cc packs a copy's source on the source's device: exempted, with a reason."""
    text = ws.read("csrc", "handwritten", "copy.cc")
    assert text.count("allow-launch-device(") >= 3
    ws.write("csrc/handwritten/copy.cc", re.sub(r"allow-launch-device\([^)]*\)", "allow-launch-device()", text))
    run = ws.run("--check")
    assert run.code == 1
    assert "csrc/handwritten/copy.cc" in run.err and "gives no reason" in run.err


def test_a_launch_outside_a_function_fails():
    from codegen.lint import check_launch_devices, read_source

    source = read_source("x.cc", "auto f = [](const LaunchDevice& d) {};\n"
                                 "int x = (FLAGOS_GUARDED_LAUNCH(d, aclnnA, t), 0);\n")
    problems = check_launch_devices(source)
    assert [(p.loc.line, p.message) for p in problems] == [
        (2, "launches aclnnA outside a function the lint can read")]


# ---- ways around the guard ---------------------------------------------------------

KERNEL = """#include "runtime/launch.h"
#include "runtime/opapi.h"
#include "flagos/aclnn/aclnnLerp.h"
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
#include <flagos/aclnn/aclnnLerp.h>
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


# ---- the bodies of generated structured wrappers (`impl:`) --------------------------
# lerp.Scalar's group moves from the generated registry to a handwritten body: the generator
# writes and registers its three wrappers; lerp.cc defines only flagos::impl::lerp_scalar.

LERP_OPS = ("lerp.Scalar", "lerp.Scalar_out", "lerp_.Scalar")  # one family entry: lerp.Scalar
LERP_BODY = """#include <ATen/core/Tensor.h>

#include "flagos/aclnn/aclnnLerps.h"
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


@pytest.mark.parametrize("device", ["launch_device_of(end)", "no_launch_device()", "some_global_device"])
def test_impl_body_launching_elsewhere_fails(ws, device):
    """The wrapper resolved the launch device from the declared policy and passes it first: the body must
    launch there."""
    _lerp_body(ws, LERP_BODY.replace("FLAGOS_GUARDED_LAUNCH(device,", f"FLAGOS_GUARDED_LAUNCH({device},"))
    run = ws.run("--check")
    assert run.code == 1
    line = ws.line_of("csrc/handwritten/lerp.cc", "FLAGOS_GUARDED_LAUNCH(")
    assert (f"csrc/handwritten/lerp.cc:{line}: `lerp_scalar` launches aclnnLerps on `{device}`, not on a "
            "LaunchDevice parameter of its own (it has `device`)") in run.err


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
    line = ws.line_of("csrc/handwritten/lerp.cc", "launch_lerps(launch_device_of(end)")
    assert f"csrc/handwritten/lerp.cc:{line}: makes a launch device of its own (launch_device_of)" in run.err


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


# ---- the lint: no registration by hand outside csrc/generated/ ----------------

def test_lint_refuses_a_registration_outside_the_generator(ws):
    assert ws.run().code == 0
    ws.write("csrc/aten/extra.cc", '#include <torch/library.h>\n\nnamespace {\n'
             'TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {\n  m.impl("view", TORCH_FN(f));\n}\n}  // namespace\n')
    run = ws.run("--check")
    assert run.code == 1, run.out + run.err
    assert "csrc/aten/extra.cc:5: registers view outside csrc/generated/" in run.out + run.err
    assert "csrc/aten/extra.cc:4: TORCH_LIBRARY_IMPL(aten, ...) outside csrc/generated/" in run.out + run.err
    assert "yaml/aten.yaml" in run.out + run.err  # the fix names the registry


def test_lint_accepts_a_boxed_fallback(ws):
    # A fallback is no op's kernel (csrc/aten/fallback.cc, autocast.cc): not a registration to generate.
    assert ws.run().code == 0
    ws.write("csrc/aten/extra.cc", '#include <torch/library.h>\n\nnamespace {\n'
             'TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }\n'
             '// m.impl("view", TORCH_FN(f));  a comment registers nothing\n}  // namespace\n')
    run = ws.run("--check")
    assert run.code == 0, run.out + run.err
