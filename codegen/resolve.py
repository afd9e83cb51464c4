"""What each wrapper does, resolved from its registry entry into C++ fragments.

`resolve_kernel` joins an OpEntry with its torch schema and ACLNN
prototypes: the device check, the launch device of its policy, the output
rules and every launch argument, each type-checked against its parameter.
Templates only place these fragments.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from codegen.errors import Problems
from codegen.exprs import FUNCS, ExprError, Scope, render_launch_arg, render_rule, render_when
from codegen.model import (Call, DeviceCheck, DevicePolicy, Guard, HandwrittenEntry, Launch, Name, OpEntry, OutputRule,
                           Registry)
from codegen.schemas import ATenSchemas, OpSchema
from codegen.shapes import SHAPES


@dataclass(frozen=True)
class OutputView:
    """One output of a shape-general wrapper."""

    name: str  # the C++ variable: allocated here, or the out= argument
    size: str
    dtype: str | None  # None: an out= argument (resized, dtype kept)
    when: str | None  # allocated only when this holds


@dataclass(frozen=True)
class StructuredView:
    """A structured op's wrapper: ATen's meta class, how it is built, its outputs."""

    op_class: str  # flagos::StructuredOut<at::meta::structured_add_Tensor, 1>
    op_args: str  # the constructor's arguments: the launch device, the out= arguments or self
    meta_args: str
    outputs: tuple[str, ...]  # functional: names bound to op.outputs[i]; else empty
    written_inputs: str | None = None  # out= and in place: the inputs the outputs must not partially overlap
    check_call: str | None = None  # `check:`: what ATen's kernel checks beyond meta(), with meta()'s arguments


@dataclass(frozen=True)
class KernelView:
    op: str
    schema: str
    shape: str
    template: str
    wrapper: str  # C++ function name
    declaration: str  # C++ signature with the wrapper's name
    guard: str
    guard_arg: str | None
    guard_sources: tuple[str, ...]  # the arguments the launch device is taken from
    device_check: str
    reason: str | None
    guard_comment: str
    device_expr: str  # the LaunchDevice expression
    check_list: str | None  # initializer list of flagos::check_same_device, None: no check
    cpu_operands: tuple[str, ...]  # inputs that may be CPU 0-dim tensors and are moved to the device
    moved_call: str | None  # the wrapper's own call with those inputs moved
    out_size: str | None
    out_dtype: str | None
    launch: str  # FLAGOS_GUARDED_LAUNCH arguments after the device: "aclnnAdd, self, other, alpha, out"
    wrapped_arg: str | None
    wrapped_launch: str | None
    includes: tuple[str, ...]
    entry_points: tuple[str, ...]
    yaml_loc: str
    outputs: tuple[OutputView, ...] = ()  # shape general
    result: str = "out"  # what the wrapper returns (shape general, structured)
    structured: StructuredView | None = None
    impl_call: str | None = None  # a handwritten structured op: the call of its body
    written_checks: tuple[str, ...] = ()  # not structured, out= or in place: flagos::check_written calls
    check_call: str | None = None  # not structured: its argument checks (flagos::check::<name>)
    dtype_fallback: bool = True  # registered with the per-dtype CPU fallback
    guard_class: str = "LaunchGuard"  # CompositeGuard for a body composed of other flagos ops
    dispatch: str = "PrivateUse1"  # the dispatch key it is registered under
    fallthrough: bool = False  # no wrapper: registered as a fallthrough under `dispatch`
    alternate_when: str | None = None  # the condition of the alternate launch
    alternate_launch: str | None = None
    written: tuple[str, ...] = ()  # the tensors the launches write: none of them holds an element, no launch


def wrapper_name(op: str) -> str:
    return "wrapper_" + op.replace(".", "_")


def guard_sources(entry_guard: Guard, guard_arg: str | None, schema: OpSchema) -> tuple[str, ...]:
    if entry_guard is Guard.FIRST_TENSOR:
        return schema.first_tensor_candidates()
    if entry_guard is Guard.EXPLICIT_ARG and guard_arg:
        return (guard_arg,)
    return ()


def _guard_comment(policy: DevicePolicy, sources: tuple[str, ...], schema: OpSchema) -> str:
    if policy.guard is Guard.FIRST_TENSOR:
        return f"guard first-tensor: the first flagos tensor among {', '.join(sources)}"
    if policy.guard is Guard.EXPLICIT_ARG:
        arg = schema.argument(policy.guard_arg or "")
        if arg is not None and arg.kind in ("device", "optional_device"):
            return f"guard explicit-arg: the `{arg.name}` argument (the current flagos device when absent)"
        return f"guard explicit-arg: the device of `{policy.guard_arg}`"
    return f"guard none: {policy.reason}"


def _checked(arg, schema: OpSchema) -> str:
    """An argument as flagos::DeviceCheckArg takes it (a Tensor, an optional Tensor or a TensorList)."""
    if arg.kind == "tensor_list" and schema.uses_ilistref:
        return f"flagos::gen::tensor_vector({arg.name})"
    return arg.name


def _launch_args(launch: Launch, scope: Scope, registry: Registry, includes: set[str], problems: Problems,
                 op: str, key: str, written: list[str] | None = None) -> str | None:
    """The launch's arguments as C++; the ones it writes are appended to `written`."""
    proto = registry.prototype(launch.entry)
    assert proto is not None  # checked by the registry
    rendered = [launch.entry]
    ok = True
    for position, (expr, param) in enumerate(zip(launch.args, proto.params), 1):
        try:
            rendered.append(render_launch_arg(expr, scope, param.ctype, param.is_output, includes))
            tensor = _written_tensor(expr) or rendered[-1]
            if param.is_output and written is not None and tensor not in written:
                written.append(RESIZED if _resized_by_launch(expr) else tensor)
        except ExprError as error:
            problems.add(launch.loc, op, f"{key}: argument {position} of {launch.entry} ({param.ctype} {param.name}): "
                         f"{error.message}", error.fix)
            ok = False
    return ", ".join(rendered) if ok else None


# An output the launch itself resizes (`zero_dim(out)`): empty when the
# wrapper looks, so no launch may be skipped for the emptiness of the others.
RESIZED = ""


def _resized_by_launch(expr) -> bool:
    return isinstance(expr, Call) and expr.func in FUNCS and FUNCS[expr.func].resizes_output


def _written_tensor(expr) -> str | None:
    """The output a view of it names (`flat_if_none(out, dim)`: `out`), whose size is the view's."""
    while isinstance(expr, Call) and expr.func in FUNCS and FUNCS[expr.func].keeps_output and expr.args:
        expr = expr.args[0]
    return expr.name if isinstance(expr, Name) else None


def resolve_kernel(entry: OpEntry, schema: OpSchema, registry: Registry, problems: Problems) -> KernelView | None:
    shape = SHAPES[entry.shape]
    before = len(problems.items)
    general = shape.output == "any"
    rules = entry.outputs
    if general and schema.out_args and len(rules) == 1 and len(schema.out_args) == 1 and rules[0].name == "out":
        rules = (OutputRule(rules[0].size, rules[0].dtype, rules[0].loc, rules[0].size_loc, rules[0].dtype_loc,
                            schema.out_args[0]),)
    group = schema.structured
    if group is not None:
        scope = Scope(schema, allocated_out=group.kind == "functional", outputs=group.outputs, enums=entry.enums)
        general = False
    elif general:
        allocated = not schema.out_args
        scope = Scope(schema, allocated_out=allocated, outputs=tuple(r.name for r in rules), enums=entry.enums)
    else:
        scope = Scope(schema, allocated_out=shape.output == "new", enums=entry.enums)
    includes: set[str] = set()
    outputs: list[OutputView] = []
    if general:
        for rule in rules:
            cpp = {}
            for role, expr, loc in (("size", rule.size, rule.size_loc), ("dtype", rule.dtype, rule.dtype_loc)):
                if expr is None:
                    continue
                try:
                    cpp[role] = render_rule(expr, scope, role, includes)
                except ExprError as error:
                    problems.add(loc or rule.loc, entry.op, f"out {rule.name}.{role}: {error.message}", error.fix)
            when = None
            if rule.when is not None:
                try:
                    when = render_when(rule.when, scope, includes)
                except ExprError as error:
                    problems.add(rule.when_loc or rule.loc, entry.op, f"out {rule.name}.when: {error.message}",
                                 error.fix)
            if "size" in cpp:
                outputs.append(OutputView(rule.name, cpp["size"], cpp.get("dtype"), when))
        if schema.out_args:
            includes.add("ATen/native/Resize.h")

    out_size = out_dtype = None
    if entry.out is not None and not general:
        rules = (("size", entry.out.size, entry.out.size_loc), ("dtype", entry.out.dtype, entry.out.dtype_loc))
        for role, expr, loc in rules:
            if expr is None:
                continue
            try:
                cpp = render_rule(expr, scope, role, includes)
            except ExprError as error:
                problems.add(loc or entry.out.loc, entry.op, f"out.{role}: {error.message}", error.fix)
                continue
            if role == "size":
                out_size = cpp
            else:
                out_dtype = cpp
    if shape.output == "out" and group is None:
        includes.add("ATen/native/Resize.h")
    structured = None
    result = _result(outputs)
    if group is not None:
        includes.add(group.meta_header)
        structured, result = _structured_view(group, schema)

    # One empty-tensor policy: no launch when none of the tensors the launch
    # writes holds an element (after the checks and the allocation, so the
    # results and errors are those of a launch).
    launch_outputs: list[str] = []
    launch = _launch_args(entry.launch, scope, registry, includes, problems, entry.op, "launch", launch_outputs)
    wrapped_launch = None
    if entry.wrapped_number is not None:
        wrapped_launch = _launch_args(entry.wrapped_number, scope, registry, includes, problems, entry.op,
                                      "wrapped_number", launch_outputs)
    alternate_launch = alternate_when = None
    if entry.alternate is not None:
        alternate_launch = _launch_args(entry.alternate, scope, registry, includes, problems, entry.op, "alternate",
                                        launch_outputs)
        try:
            alternate_when = render_when(entry.alternate_when, scope, includes)
        except ExprError as error:
            problems.add(entry.alternate.loc, entry.op, f"alternate.when: {error.message}", error.fix)
    if len(problems.items) != before or launch is None:
        return None

    policy = entry.policy
    sources, device_expr, check_list = _policy_fragments(policy, schema)
    tensor_args = [a for a in schema.arguments if a.is_tensor_like]

    # ACLNN reads device memory only. A CPU 0-dim operand that the device
    # check allows (a number) either launches a scalar entry point
    # (wrapped_number) or is copied to the launch device first.
    cpu_operands: tuple[str, ...] = ()
    if len(tensor_args) >= 2:
        cpu_operands = tuple(
            a.name for a in tensor_args
            if a.kind == "tensor" and not a.is_out and not a.is_mutable and a.name != entry.wrapped_arg
        )
    moved_call = None
    if cpu_operands:
        args = [
            f"flagos::gen::on_launch_device({a.name}, launch_device)" if a.name in cpu_operands else a.name
            for a in schema.arguments
        ]
        moved_call = f"{wrapper_name(entry.op)}({', '.join(args)})"

    written_checks: tuple[str, ...] = ()
    if group is None:
        written = schema.out_args or (("self",) if schema.inplace else ())
        written_checks = tuple(f"flagos::check_written({name}, {_written_inputs(schema)})" for name in written)
    check_call = None
    if entry.check is not None and structured is not None:
        # After the meta function, as ATen's kernel checks after it: every
        # form of the family calls one check with meta()'s arguments.
        structured = dataclasses.replace(
            structured, check_call=f"flagos::check::{entry.check}({structured.meta_args})")
    elif entry.check is not None:
        check_call = f"flagos::check::{entry.check}({', '.join(a.name for a in schema.arguments)})"

    entry_points = tuple(dict.fromkeys(
        [entry.launch.entry] + ([entry.wrapped_number.entry] if entry.wrapped_number else [])
        + ([entry.alternate.entry] if entry.alternate else [])))
    return KernelView(
        op=entry.op,
        schema=schema.schema,
        shape=entry.shape,
        template="structured.cpp.j2" if structured is not None else shape.template,
        wrapper=wrapper_name(entry.op),
        declaration=schema.declaration(wrapper_name(entry.op)),
        guard=policy.guard.value,
        guard_arg=policy.guard_arg,
        guard_sources=sources,
        device_check=policy.device_check.value,
        reason=policy.reason,
        guard_comment=_guard_comment(policy, sources, schema),
        device_expr=device_expr,
        check_list=check_list,
        cpu_operands=cpu_operands,
        moved_call=moved_call,
        out_size=out_size,
        out_dtype=out_dtype,
        launch=launch,
        wrapped_arg=entry.wrapped_arg,
        wrapped_launch=wrapped_launch,
        includes=tuple(sorted(includes)),
        entry_points=entry_points,
        yaml_loc=str(entry.loc),
        outputs=tuple(outputs),
        result=result,
        structured=structured,
        written_checks=written_checks,
        check_call=check_call,
        alternate_when=alternate_when,
        alternate_launch=alternate_launch,
        written=() if RESIZED in launch_outputs else tuple(launch_outputs),
    )


def _written_inputs(schema: OpSchema) -> str:
    """The tensor arguments an out= or in-place op reads, as flagos::check_written takes them."""
    inputs = [a for a in schema.arguments if a.is_tensor_like and not a.is_out and not a.is_mutable]
    return "{" + ", ".join(f'{{"{a.name}", {_checked(a, schema)}}}' for a in inputs) + "}"


def _structured_view(group, schema: OpSchema) -> tuple[StructuredView, str]:
    """The meta class a structured wrapper builds, and what the wrapper returns."""
    count = len(group.outputs)
    if group.kind == "functional":
        view = StructuredView(f"flagos::StructuredFunctional<{group.meta_class}, {count}>", "launch_device",
                              ", ".join(group.meta_args), group.outputs)
        moved = [f"std::move({name})" for name in group.outputs]
        return view, moved[0] if count == 1 else "{" + ", ".join(moved) + "}"
    if group.kind == "inplace":
        return StructuredView(f"flagos::StructuredInplace<{group.meta_class}>", "self",
                              ", ".join(group.meta_args), (), _written_inputs(schema)), "self"
    view = StructuredView(f"flagos::StructuredOut<{group.meta_class}, {count}>", ", ".join(group.outputs),
                          ", ".join(group.meta_args), (), _written_inputs(schema))
    return view, group.outputs[0] if count == 1 else "{" + ", ".join(group.outputs) + "}"


def _policy_fragments(policy: DevicePolicy, schema: OpSchema) -> tuple[tuple[str, ...], str, str | None]:
    """The guard's sources, the LaunchDevice expression and the same-device check's list."""
    sources = guard_sources(policy.guard, policy.guard_arg, schema)
    device_expr = f"flagos::launch_device_of({', '.join(sources)})" if sources else "flagos::no_launch_device()"
    tensor_args = [a for a in schema.arguments if a.is_tensor_like]
    check_list = None
    if policy.device_check is DeviceCheck.SAME_DEVICE and tensor_args:
        check_list = "{" + ", ".join(f'{{"{a.name}", {_checked(a, schema)}}}' for a in tensor_args) + "}"
    return sources, device_expr, check_list


def resolve_impl(entry: HandwrittenEntry, schema: OpSchema) -> KernelView:
    """The wrapper of a handwritten structured op: the boundary of a generated one (device
    check, guard, ATen's meta function, outputs), then a call of its body
    flagos::impl::<name>(launch device, meta()'s arguments, outputs)."""
    if not entry.structured:
        return _resolve_body(entry, schema)
    group = schema.structured
    assert entry.impl is not None and group is not None  # checked by the registry
    sources, device_expr, check_list = _policy_fragments(entry.policy, schema)
    structured, result = _structured_view(group, schema)
    outputs = group.outputs if group.kind != "functional" else tuple(f"op.outputs[{i}]" for i in range(len(group.outputs)))
    call = f"flagos::impl::{entry.impl}(launch_device, {', '.join(group.meta_args + outputs)})"
    structured = StructuredView(structured.op_class, structured.op_args, structured.meta_args, (),
                                structured.written_inputs)
    if group.kind == "functional":
        moved = [f"std::move(op.outputs[{i}])" for i in range(len(group.outputs))]
        result = moved[0] if len(moved) == 1 else "{" + ", ".join(moved) + "}"
    return KernelView(
        op=entry.op, schema=schema.schema, shape="impl", template="structured.cpp.j2",
        wrapper=wrapper_name(entry.op), declaration=schema.declaration(wrapper_name(entry.op)),
        guard=entry.policy.guard.value, guard_arg=entry.policy.guard_arg, guard_sources=sources,
        device_check=entry.policy.device_check.value, reason=entry.policy.reason,
        guard_comment=_guard_comment(entry.policy, sources, schema), device_expr=device_expr,
        check_list=check_list, cpu_operands=(), moved_call=None, out_size=None, out_dtype=None, launch="",
        wrapped_arg=None, wrapped_launch=None, includes=(group.meta_header,), entry_points=(),
        yaml_loc=str(entry.loc), result=result, structured=structured, impl_call=call)


def _resolve_body(entry: HandwrittenEntry, schema: OpSchema) -> KernelView:
    """The wrapper of a handwritten op that is not structured: the device check and the
    guard of its policy, then `return flagos::impl::<name>(launch device, its arguments)`."""
    sources, device_expr, check_list = _policy_fragments(entry.policy, schema)
    declaration = schema.concrete_signature.replace("WRAPPER", wrapper_name(entry.op), 1)
    args = ", ".join(["launch_device"] + _signature_names(schema.concrete_signature))
    return KernelView(
        op=entry.op, schema=schema.schema, shape="impl", template="body.cpp.j2",
        wrapper=wrapper_name(entry.op), declaration=declaration,
        guard=entry.policy.guard.value, guard_arg=entry.policy.guard_arg, guard_sources=sources,
        device_check=entry.policy.device_check.value, reason=entry.policy.reason,
        guard_comment=_guard_comment(entry.policy, sources, schema), device_expr=device_expr,
        check_list=check_list, cpu_operands=(), moved_call=None, out_size=None, out_dtype=None, launch="",
        wrapped_arg=None, wrapped_launch=None, includes=(), entry_points=(),
        yaml_loc=str(entry.loc), impl_call=f"flagos::impl::{entry.impl}({args})",
        dtype_fallback=entry.dtype_fallback, guard_class="CompositeGuard" if entry.composite else "LaunchGuard")


def resolve_autograd_body(entry: HandwrittenEntry, schema: OpSchema) -> KernelView:
    """The AutogradPrivateUse1 wrapper of a handwritten op with `autograd_impl:`: the op's
    launch device made current with a CompositeGuard, then its autograd body (the inner
    ops check their own devices)."""
    view = _resolve_body(entry, schema)
    wrapper = "autograd_" + wrapper_name(entry.op)
    args = ", ".join(["launch_device"] + _signature_names(schema.concrete_signature))
    return dataclasses.replace(
        view, wrapper=wrapper, declaration=schema.concrete_signature.replace("WRAPPER", wrapper, 1), check_list=None,
        guard_comment=view.guard_comment + "; under AutogradPrivateUse1",
        impl_call=f"flagos::impl::{entry.autograd_impl}({args})", guard_class="CompositeGuard",
        dispatch="AutogradPrivateUse1")


def _signature_names(signature: str) -> list[str]:
    """The parameter names of torchgen's C++ declaration `R WRAPPER(T a, U b)` (the last
    identifier of each top-level parameter)."""
    params = signature[signature.index("WRAPPER(") + len("WRAPPER("):signature.rindex(")")]
    names, depth, current = [], 0, ""
    for char in params + ",":
        if char in "<([":
            depth += 1
        elif char in ">)]":
            depth -= 1
        if char == "," and depth == 0:
            if current.strip():
                names.append(current.strip().split()[-1].lstrip("&*"))
            current = ""
        else:
            current += char
    return names


def _result(outputs: list[OutputView]) -> str:
    if len(outputs) == 1:
        return outputs[0].name
    return "{" + ", ".join(o.name for o in outputs) + "}" if outputs else "out"


def resolve_all(registry: Registry, schemas: ATenSchemas, problems: Problems | None = None) -> list[KernelView]:
    """Every generated op's KernelView; raises RegistryError if any mapping does not fit
    (with the problems collected so far, when the caller passes them)."""
    problems = problems if problems is not None else Problems()
    kernels = []
    for entry in registry.ops:
        schema = schemas.get(entry.op)
        assert schema is not None  # checked by the registry
        kernel = resolve_kernel(entry, schema, registry, problems)
        if kernel is not None:
            kernels.append(kernel)
    for handwritten in registry.handwritten:
        if handwritten.impl is not None:
            kernels.append(resolve_impl(handwritten, schemas.get(handwritten.op)))
        if handwritten.autograd_impl is not None:
            kernels.append(resolve_autograd_body(handwritten, schemas.get(handwritten.op)))
        for key in handwritten.fallthrough:
            kernels.append(dataclasses.replace(kernels[-1] if kernels[-1].op == handwritten.op else
                                               resolve_impl(handwritten, schemas.get(handwritten.op)),
                                               dispatch=key, fallthrough=True))
    problems.raise_if_any()
    return kernels
