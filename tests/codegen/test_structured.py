"""Structured ops, `check:` and `impl:`: what the generator writes for them.

A structured op's wrapper runs ATen's meta class (no registry output rules);
an op that is not structured calls its `check:` (csrc/generated/op_checks.h);
a handwritten op's generated wrapper calls its body `impl:`
(csrc/generated/impls.h). Every wrapper makes its launch device current
before it allocates anything, and every out= or in-place wrapper checks the
tensors it writes.
"""

from __future__ import annotations

import re

import pytest

from codegen.gen_kernels import SHARDS, shard_file
from codegen.registry import Paths, load_registry
from codegen.schemas import aten_schemas

GUARD = "  const flagos::LaunchGuard launch_guard(launch_device);"
# A handwritten body composed of other flagos ops (`composite: true`) opens the composite guard instead.
COMPOSITE_GUARD = "  const flagos::CompositeGuard launch_guard(launch_device);"
# What allocates a tensor or moves one to a device: each must find the launch device current.
ALLOCATIONS = ("flagos::empty_on(", "op.meta(", "resize_output(", "on_launch_device(")
_WRAPPER = re.compile(r"^(?P<declaration>\S[^\n]* (?P<name>wrapper_\w+)\((?P<params>[^\n]*)\)) \{\n(?P<body>.*?)^\}$",
                      re.M | re.S)
_REGISTRATION = re.compile(r'm\.impl\("(?P<op>[^"]+)", (?:flagos::with_dtype_fallback<"[^"]+", &(?P<wrapper>\w+)>\(\)'
                           r'|TORCH_FN\((?P<plain>\w+)\))\);')


def _wrappers(ws) -> dict[str, str]:
    """op -> the body of its generated wrapper, parsed from csrc/generated/kernels_*.cpp."""
    bodies, ops = {}, {}
    for shard in range(SHARDS):
        text = ws.read("csrc", "generated", shard_file(shard))
        for match in _WRAPPER.finditer(text):
            assert match.group("name") not in bodies, match.group("name")
            bodies[match.group("name")] = match.group("body")
        # The PrivateUse1 registrations (matmul also has an AutogradPrivateUse1 wrapper, autograd_wrapper_*).
        block = text.split("TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {\n")[1].split("\n}")[0]
        for match in _REGISTRATION.finditer(block):
            ops[match.group("op")] = match.group("wrapper") or match.group("plain")
    assert sorted(bodies) == sorted(ops.values())  # every wrapper parsed is registered, and only those
    return {op: bodies[wrapper] for op, wrapper in ops.items()}


def _generated_ops(ws) -> tuple:
    registry = load_registry(Paths(ws.root))
    return registry, [e.op for e in registry.ops] + [e.op for e in registry.handwritten if e.impl is not None]


# ---- every wrapper of the real registry ----------------------------------------------


@pytest.fixture
def generated(ws):
    run = ws.run()
    assert run.code == 0, run.err
    return ws


def test_every_op_has_one_parsed_wrapper(generated):
    registry, ops = _generated_ops(generated)
    wrappers = _wrappers(generated)
    assert sorted(wrappers) == sorted(ops)
    assert len(wrappers) == len(registry.ops) + sum(1 for e in registry.handwritten if e.impl is not None)


def test_the_guard_precedes_every_allocation(generated):
    """The launch device is made current right after it is resolved, before anything allocates (the
    allocator then finds it current) or launches."""
    for op, body in _wrappers(generated).items():
        lines = body.split("\n")
        guard_line = COMPOSITE_GUARD if COMPOSITE_GUARD in lines else GUARD
        assert lines.count(guard_line) == 1 and lines.count(GUARD) + lines.count(COMPOSITE_GUARD) == 1, (op, body)
        at = lines.index(guard_line)
        assert lines[at - 1].startswith("  const flagos::LaunchDevice launch_device = "), (op, body)
        guard = body.index(guard_line)
        for marker in ALLOCATIONS + ("FLAGOS_GUARDED_LAUNCH(", "flagos::check::", "check_written("):
            found = body.find(marker)
            assert found == -1 or found > guard, (op, marker, body)


def test_structured_wrappers_run_the_meta_class(generated):
    schemas = aten_schemas()
    for op, body in _wrappers(generated).items():
        group = schemas.get(op).structured
        if group is None:
            assert "op.meta(" not in body and "flagos::Structured" not in body, (op, body)
            continue
        kind = {"functional": "StructuredFunctional", "out": "StructuredOut",
                "inplace": "StructuredInplace"}[group.kind]
        assert f"flagos::{kind}<{group.meta_class}" in body, (op, body)
        assert f"op.meta({', '.join(group.meta_args)});" in body, (op, body)
        assert "flagos::empty_on(" not in body and "resize_output(" not in body, (op, body)  # the meta class does


def test_written_tensors_are_checked(generated):
    """Structured out= and in-place wrappers: op.check_written after the meta function; the others:
    flagos::check_written on each out= argument (or self); functional wrappers write nothing they got.
    A handwritten body of an op that is not structured makes its op's own checks (ATen's kernel's,
    tests/contract/test_errors_at_call.py): its wrapper adds none."""
    schemas = aten_schemas()
    kinds = set()
    for op, body in _wrappers(generated).items():
        schema = schemas.get(op)
        if schema.structured is None and "return flagos::impl::" in body:
            assert "check_written(" not in body, (op, body)
            continue
        written = schema.out_args or (("self",) if schema.inplace else ())
        group = schema.structured
        if group is not None and written:
            kinds.add(f"structured {group.kind}")
            assert body.count("op.check_written({") == 1, (op, body)
            assert body.index("op.meta(") < body.index("op.check_written("), (op, body)
            assert "flagos::check_written(" not in body, (op, body)
        elif written:
            kinds.add("out=" if schema.out_args else "in place")
            for name in written:
                assert body.count(f"flagos::check_written({name}, {{") == 1, (op, name, body)
            assert body.count("flagos::check_written(") == len(written), (op, body)
            assert "op.check_written(" not in body, (op, body)
        else:
            assert "check_written(" not in body, (op, body)
    # the real registry has each kind
    assert kinds == {"structured out", "structured inplace", "out=", "in place"}


def test_checks_are_called_with_every_argument(generated):
    registry, _ = _generated_ops(generated)
    schemas = aten_schemas()
    wrappers = _wrappers(generated)
    checked = [entry for entry in registry.ops if entry.check is not None]
    assert checked
    for entry in checked:
        body = wrappers[entry.op]
        group = schemas.get(entry.op).structured
        # a structured op's check takes the meta function's arguments, after it
        args = group.meta_args if group is not None else [a.name for a in schemas.get(entry.op).arguments]
        call = f"  flagos::check::{entry.check}({', '.join(args)});"
        assert body.split("\n").count(call) == 1, (entry.op, body)
        if group is not None:
            assert body.index("op.meta(") < body.index(call), (entry.op, body)
        for marker in ("flagos::empty_on(", "resize_output(", "FLAGOS_GUARDED_LAUNCH("):
            found = body.find(marker)
            assert found == -1 or found > body.index(call), (entry.op, marker)
    for entry in registry.ops:
        if entry.check is None:
            assert "flagos::check::" not in wrappers[entry.op], entry.op


# ---- op_checks.h ---------------------------------------------------------------------

_DECLARATION = re.compile(r"^// (?P<ops>[^\n]+)\n(?P<declaration>void (?P<name>\w+)\((?P<params>[^\n]*)\);)$", re.M)


def _declared(text: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """(name, parameters, the ops the comment lists) of each function a generated header declares."""
    return [(m.group("name"), m.group("params"), tuple(m.group("ops").split(": ")[0].split(", ")))
            for m in _DECLARATION.finditer(text)]


def _params(schema) -> str:
    signature = schema.declaration("WRAPPER")
    return signature[signature.index("WRAPPER(") + len("WRAPPER("): signature.rindex(")")]


def test_op_checks_declares_each_check_once_per_signature(generated):
    registry, _ = _generated_ops(generated)
    schemas = aten_schemas()
    expected: dict[tuple[str, str], list[str]] = {}
    for entry in registry.ops:
        if entry.check is not None:
            group = schemas.get(entry.op).structured
            params = ", ".join(group.meta_params) if group is not None else _params(schemas.get(entry.op))
            expected.setdefault((entry.check, params), []).append(entry.op)
    declared = _declared(generated.read("csrc", "generated", "op_checks.h"))
    assert len({(name, params) for name, params, _ in declared}) == len(declared)  # each once
    assert {(name, params): list(ops) for name, params, ops in declared} == expected
    header = generated.read("csrc", "generated", "op_checks.h")
    # three ops of one signature share one declaration; relu and relu_ differ in self's constness
    assert ("// logical_and.out, logical_or.out, logical_xor.out\n"
            "void logical_binary(const at::Tensor & self, const at::Tensor & other, at::Tensor & out);\n") in header
    assert "// relu\nvoid relu(const at::Tensor & self);\n" in header
    assert "// relu_\nvoid relu(at::Tensor & self);\n" in header
    # a structured family shares one check, declared with its meta function's parameters
    assert "// mm, mm.out\nvoid mm(const at::Tensor & self, const at::Tensor & mat2);\n" in header


def test_ops_sharing_a_check_and_a_signature_share_its_declaration(ws):
    for op in ("isinf", "isnan"):
        text = ws.read("yaml", "ops", "selection.yaml")
        start = text.index(f"- op: {op}\n")
        guard = text.index("  guard: first-tensor\n", start)
        ws.write("yaml/ops/selection.yaml", text[:guard] + "  check: special_value\n" + text[guard:])
    assert ws.run().code == 0
    header = ws.read("csrc", "generated", "op_checks.h")
    assert header.count("void special_value(") == 1
    assert "// isinf, isnan\nvoid special_value(const at::Tensor & self);\n" in header
    wrappers = _wrappers(ws)
    assert "  flagos::check::special_value(self);" in wrappers["isinf"].split("\n")
    assert "  flagos::check::special_value(self);" in wrappers["isnan"].split("\n")


# ---- impls.h -------------------------------------------------------------------------


def test_impls_declares_each_body_once_with_meta_parameters_and_outputs(generated):
    registry, _ = _generated_ops(generated)
    schemas = aten_schemas()
    bodies: dict[str, list[str]] = {}
    for entry in registry.handwritten:
        if entry.structured:
            bodies.setdefault(entry.impl, []).append(entry.op)
    assert bodies
    header = generated.read("csrc", "generated", "impls.h")
    declared = [d for d in _declared(header) if d[0] in bodies]
    assert sorted(name for name, _, _ in declared) == sorted(bodies)  # each body once
    for name, params, ops in declared:
        assert list(ops) == bodies[name]
        group = schemas.get(ops[0]).structured
        assert params == ", ".join(("const LaunchDevice& device",) + group.meta_params
                                   + tuple(f"const at::Tensor & {out}" for out in group.group_outputs))
        assert f"// {', '.join(ops)}: ATen's {group.meta_class}\n" in header
    assert ("// isin.Tensor_Tensor, isin.Tensor_Tensor_out: ATen's at::meta::structured_isin_Tensor_Tensor\n"
            "void isin_Tensor_Tensor(const LaunchDevice& device, const at::Tensor & elements, "
            "const at::Tensor & test_elements, bool assume_unique, bool invert, const at::Tensor & out);\n") in header


def test_impls_declares_other_bodies_with_the_ops_arguments(generated):
    """A body of an op that is not structured takes the launch device, then the op's own arguments
    (SymInts as integers), and returns its result; functional and out= forms overload one name."""
    header = generated.read("csrc", "generated", "impls.h")
    assert ("// nonzero: the op's arguments\n"
            "at::Tensor nonzero(const LaunchDevice& launch_device, const at::Tensor & self);\n") in header
    assert ("// nonzero.out: the op's arguments\n"
            "at::Tensor & nonzero(const LaunchDevice& launch_device, const at::Tensor & self, at::Tensor & out);\n"
            ) in header
    assert ("at::Tensor reflection_pad2d(const LaunchDevice& launch_device, const at::Tensor & self, "
            "at::IntArrayRef padding);") in header
    assert ("// matmul: the op's arguments, under AutogradPrivateUse1\n"
            "at::Tensor matmul_decomposed(const LaunchDevice& launch_device, const at::Tensor & self, "
            "const at::Tensor & other);") in header


def test_handwritten_registrations_follow_the_registry(generated):
    """composite: a CompositeGuard; dtype_fallback false: TORCH_FN; autograd_impl: a second wrapper
    under AutogradPrivateUse1; fallthrough: the keys it names."""
    shards = "".join(generated.read("csrc", "generated", shard_file(i)) for i in range(SHARDS))
    wrappers = _wrappers(generated)
    assert COMPOSITE_GUARD in wrappers["_foreach_add_.List"]
    assert GUARD in wrappers["nonzero"]
    assert 'm.impl("_copy_from", TORCH_FN(wrapper__copy_from));' in shards
    assert "flagos::check_same_device" not in wrappers["_copy_from"]  # no-check
    autograd = shards.split("TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {\n")[1].split("\n}")[0]
    assert 'm.impl("matmul", flagos::with_dtype_fallback<"matmul", &autograd_wrapper_matmul>());' in autograd
    assert "  return flagos::impl::matmul_decomposed(launch_device, self, other);" in shards
    for key in ("Conjugate", "Negative"):
        assert shards.count(f"TORCH_LIBRARY_IMPL(aten, {key}, m) {{") == 2  # _copy_from and _copy_from_and_resize
    assert 'm.impl("_copy_from", torch::CppFunction::makeFallthrough());' in shards


def test_a_body_takes_one_output_per_out_argument_of_its_group(ws):
    """max.dim and max.dim_max as the handwritten body max_dim: the body takes max.dim_max's two out=
    arguments, and the functional wrapper passes it the meta class's two outputs."""
    text = ws.read("yaml", "ops", "reduction_more.yaml")
    start = text.index("- op: max.dim\n")  # the family entry of max.dim and max.dim_max
    text = text[:start] + text[text.index("\n\n", start) + 2:]
    ws.write("yaml/ops/reduction_more.yaml", text)
    with open(ws.path("yaml", "handwritten.yaml"), "a", encoding="utf-8") as handle:
        for op in ("max.dim", "max.dim_max"):
            handle.write(f"\n- op: {op}\n  guard: first-tensor\n  file: csrc/handwritten/max_dim.cc\n  impl: max_dim\n")
    run = ws.run()
    assert run.code == 0, run.err
    registry, _ = _generated_ops(ws)
    bodies = sum(1 for entry in registry.handwritten if entry.impl is not None)
    assert f"({bodies} of them bodies in generated wrappers)" in run.out  # max.dim and max.dim_max among them
    header = ws.read("csrc", "generated", "impls.h")
    assert ("// max.dim, max.dim_max: ATen's at::meta::structured_max_dim\n"
            "void max_dim(const LaunchDevice& device, const at::Tensor & self, int64_t dim, bool keepdim, "
            "const at::Tensor & max, const at::Tensor & max_values);\n") in header
    wrappers = _wrappers(ws)
    functional = wrappers["max.dim"]
    assert "  flagos::StructuredFunctional<at::meta::structured_max_dim, 2> op(launch_device);" in functional
    assert "  flagos::impl::max_dim(launch_device, self, dim, keepdim, op.outputs[0], op.outputs[1]);" in functional
    assert "  return {std::move(op.outputs[0]), std::move(op.outputs[1])};" in functional
    out = wrappers["max.dim_max"]
    assert "  flagos::StructuredOut<at::meta::structured_max_dim, 2> op(max, max_values);" in out
    assert '  op.check_written({{"self", self}});' in out
    assert "  flagos::impl::max_dim(launch_device, self, dim, keepdim, max, max_values);" in out
    assert "FLAGOS_GUARDED_LAUNCH" not in functional + out  # the body launches


def test_impl_wrappers_call_their_body(generated):
    registry, _ = _generated_ops(generated)
    schemas = aten_schemas()
    wrappers = _wrappers(generated)
    for entry in registry.handwritten:
        body = wrappers[entry.op]
        if entry.structured:
            group = schemas.get(entry.op).structured
            outputs = (group.outputs if group.kind != "functional"
                       else tuple(f"op.outputs[{i}]" for i in range(len(group.outputs))))
            call = f"  flagos::impl::{entry.impl}(launch_device, {', '.join(group.meta_args + outputs)});"
            assert body.split("\n").count(call) == 1, (entry.op, body)
        else:  # the op's own arguments, after the launch device
            call = f"  return flagos::impl::{entry.impl}(launch_device, "
            assert sum(line.startswith(call) for line in body.split("\n")) == 1, (entry.op, body)
        assert "FLAGOS_GUARDED_LAUNCH" not in body
