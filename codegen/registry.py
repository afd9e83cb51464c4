"""Loads and validates the registry: yaml/aclnn.yaml, yaml/ops/*.yaml, yaml/handwritten.yaml.

Every problem is collected (file:line, op, what is wrong, how to fix it);
`load_registry` raises RegistryError with all of them, or returns a Registry.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass

from codegen.errors import Problems
from codegen.exprs import PARAM_TYPES, TENSOR_TYPES, ExprError, literal_problem, parse_expr, parse_launch, show
from codegen.model import (
    AclnnParam,
    Or,
    AclnnPrototype,
    Call,
    DeviceCheck,
    DevicePolicy,
    Enum,
    Guard,
    HandwrittenEntry,
    Launch,
    Location,
    Name,
    OpEntry,
    OutputRule,
    Registry,
)
from codegen.safety import (
    ENTRY_NAME,
    MAX_TEXT,
    entry_name_problem,
    local_name_problem,
    parameter_name_problem,
    text_problem,
    type_word,
)
from codegen.safety import shown as shown_text
from codegen.schemas import ATenSchemas, OpSchema, aten_schemas
from codegen.shapes import SHAPES
from codegen.yaml_loader import LineDict, LineList, YamlSyntaxError, load_yaml_document

OP_KEYS = ("op", "variants", "shape", "launch", "wrapped_number", "inplace_launch", "inplace_wrapped_number", "out",
           "alternate", "enums", "check", "guard", "guard_arg", "device_check", "reason")
ALTERNATE_KEYS = ("when", "launch")
_ENUM_STRING = re.compile(r"[A-Za-z0-9_]{1,32}", re.ASCII)  # a string ATen accepts, a string code
# The forms of an op family, as torchgen groups them (NativeFunctionsGroup).
VARIANTS = ("functional", "inplace", "out")
FAMILY_KEYS = ("variants", "inplace_launch", "inplace_wrapped_number")
OUT_KEYS = ("size", "dtype")
OUTPUT_KEYS = ("name", "size", "dtype", "when")  # one output of a list (shape general)
HANDWRITTEN_KEYS = ("op", "guard", "guard_arg", "device_check", "reason", "file", "impl", "dtype_fallback", "composite",
                    "autograd_impl", "fallthrough")
# The dispatch keys a handwritten op may fall through (`fallthrough:`).
FALLTHROUGH_KEYS = ("Conjugate", "Negative")
GUARD_ARG_KINDS = ("tensor", "optional_tensor", "tensor_list", "device", "optional_device")
# The only reasons for `guard: none` on an op whose arguments name a device
# (python -m codegen --report lists them).
NONE_REASONS = {
    "launches nothing": "the kernel launches no ACLNN operator; it only reads or rewrites tensor metadata",
}


class Paths:
    """Where the registry lives; locations are shown relative to `root`."""

    def __init__(self, root: str, yaml_dir: str | None = None):
        self.root = os.path.abspath(root)
        self.yaml_dir = os.path.abspath(yaml_dir or os.path.join(self.root, "yaml"))

    def show(self, path: str) -> str:
        path = os.path.abspath(path)
        rel = os.path.relpath(path, self.root)
        return path if rel.startswith("..") else rel.replace(os.sep, "/")

    @property
    def aclnn_yaml(self) -> str:
        return os.path.join(self.yaml_dir, "aclnn.yaml")

    @property
    def handwritten_yaml(self) -> str:
        return os.path.join(self.yaml_dir, "handwritten.yaml")

    def op_yamls(self) -> list[str]:
        return sorted(glob.glob(os.path.join(self.yaml_dir, "ops", "*.yaml")))


@dataclass(frozen=True)
class Document:
    data: object  # the parsed YAML: None for an empty file
    line: int  # the line of its first node


def _read(path: str, paths: Paths, problems: Problems) -> Document | None:
    """The parsed YAML of `path`, or None after recording why not."""
    shown = paths.show(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as error:
        problems.add(Location(shown, 1), None, f"cannot read: {error.strerror}", "create the file or fix --yaml-dir")
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        problems.add(Location(shown, line), None,
                     f"not UTF-8: byte 0x{raw[error.start]:02x} at line {line} cannot be decoded",
                     "save the file as UTF-8")
        return None
    try:
        data, line = load_yaml_document(text)
    except YamlSyntaxError as error:
        problems.add(Location(shown, error.line), None, f"YAML syntax error: {error.message}",
                     "fix the YAML syntax (indentation, quotes, `key: value`)")
        return None
    return Document(data, line)


# ---- yaml/aclnn.yaml ---------------------------------------------------------------

_PARAM = re.compile(r"(?P<ctype>.*?[ *])(?P<name>\w+)", re.ASCII | re.DOTALL)
# hicann/<repo>/<path>: the CANN header or doc that declares the prototype.
_SOURCE = re.compile(r"hicann/(ops-math|ops-nn|ops-cv|ops-transformer|opbase)/[A-Za-z0-9_./&+-]+\.(h|md)", re.ASCII)
PROTOTYPE_KEYS = ("source", "params", "outputs")


def _normalize_ctype(text: str) -> str:
    text = re.sub(r"\s+", " ", text.strip())
    return re.sub(r"\s*\*", "*", text)


def _prototype_params(name: str, params, loc: Location, shown: str, problems: Problems) -> list[AclnnParam] | None:
    if not isinstance(params, list):
        problems.add(loc, None, f"{name}: `params` must be a list of parameters",
                     "write `params: [const aclTensor* self, ...]` as CANN's header declares them")
        return None
    parsed, seen = [], set()
    ok = True
    for index, text in enumerate(params):
        line = params.line_at(index) if isinstance(params, LineList) else loc.line
        match = _PARAM.fullmatch(text.strip()) if isinstance(text, str) and text.isprintable() else None
        ctype = _normalize_ctype(match.group("ctype")) if match else ""
        if not match or ctype not in PARAM_TYPES:
            problems.add(Location(shown, line), None, f"{name}: cannot use parameter `{shown_text(text)}`",
                         f"write `<type> <name>` with a type among: {', '.join(PARAM_TYPES)}")
            ok = False
            continue
        param = match.group("name")
        why = parameter_name_problem(param)
        if why is not None:
            problems.add(Location(shown, line), None, f"{name}: parameter name `{param}` {why}",
                         "rename the parameter (the generated header declares it by this name)")
            ok = False
            continue
        if param in seen:
            problems.add(Location(shown, line), None, f"{name}: parameter `{param}` twice",
                         "give each parameter its own name")
            ok = False
        seen.add(param)
        parsed.append(AclnnParam(ctype, param))
    return parsed if ok else None


def _load_prototypes(paths: Paths, problems: Problems, invalid: set[str]) -> list[AclnnPrototype] | None:
    """The valid prototypes; the names of invalid ones go to `invalid` (their launches are not reported
    again). None when yaml/aclnn.yaml itself is unusable (then no launch is reported for lack of a prototype)."""
    document = _read(paths.aclnn_yaml, paths, problems)
    shown = paths.show(paths.aclnn_yaml)
    if document is None:
        return None
    data = document.data
    if data is None or (isinstance(data, LineDict) and not data):
        problems.add(Location(shown, document.line), None, "declares no ACLNN operator",
                     "restore the prototypes: one `aclnnX:` entry with `source:`, `params:` and `outputs:` per operator")
        return None
    if not isinstance(data, LineDict):
        problems.add(Location(shown, getattr(data, "line", document.line)), None,
                     "expected a mapping of entry point -> prototype",
                     "write `aclnnX:` with `source:`, `params:` and `outputs:` under it")
        return None
    prototypes = []
    for name, entry in data.items():
        loc = Location(shown, data.line_of(name))
        if isinstance(name, str) and ENTRY_NAME.fullmatch(name) and name.endswith("GetWorkspaceSize"):
            problems.add(loc, None, f"`{name}`: list the operator, not its phase-1 function",
                         f"write `{name[: -len('GetWorkspaceSize')]}:`; both phases are declared from it")
            continue
        why = entry_name_problem(name)
        if why is not None:
            problems.add(loc, None, f"`{shown_text(name)}` {why}",
                         "name it aclnnX, as CANN does (aclnnAdd, aclnnInplaceFillScalar)")
            continue
        if not isinstance(entry, LineDict):
            problems.add(loc, None, f"{name}: expected `source:`, `params:` and `outputs:` under it",
                         "write the prototype as CANN declares it, with the header it comes from")
            invalid.add(name)
            continue
        before = len(problems.items)
        _unknown_keys(entry, PROTOTYPE_KEYS, name, shown, problems)
        source = entry.get("source")
        if not isinstance(source, str) or not _SOURCE.fullmatch(source) or text_problem(source) is not None:
            problems.add(Location(shown, entry.line_of("source")) if "source" in entry else loc, None,
                         f"{name}: `source` must name the CANN header or doc that declares it",
                         "write `source: hicann/<repo>/<path>`, e.g. hicann/ops-math/math/add/op_api/aclnn_add.h")
        params = _prototype_params(name, entry.get("params"),
                                   Location(shown, entry.line_of("params")) if "params" in entry else loc, shown, problems)
        outputs = entry.get("outputs")
        out_loc = Location(shown, entry.line_of("outputs")) if "outputs" in entry else loc
        tensors = [p.name for p in params or () if p.ctype in TENSOR_TYPES]
        if not isinstance(outputs, list) or not outputs or not all(isinstance(o, str) for o in outputs):
            problems.add(out_loc, None, f"{name}: `outputs` must list the parameters the operator writes",
                         f"write `outputs: [<name>, ...]` naming some of: {', '.join(tensors) or 'no tensor'}")
        elif params is not None:
            for index, output in enumerate(outputs):
                if output not in tensors:
                    line = outputs.line_at(index) if isinstance(outputs, LineList) else out_loc.line
                    problems.add(Location(shown, line), None,
                                 f"{name}: output `{shown_text(output)}` is not a tensor parameter",
                                 f"name one of: {', '.join(tensors) or 'no tensor'}")
            if len(set(outputs)) != len(outputs):
                problems.add(out_loc, None, f"{name}: an output is listed twice", "list each output once")
        if len(problems.items) != before or params is None:
            invalid.add(name)
            continue
        params = [AclnnParam(p.ctype, p.name, p.name in outputs) for p in params]
        prototypes.append(AclnnPrototype(name, tuple(params), loc, source))
    return prototypes


# ---- device policies -----------------------------------------------------------------


def _policy(entry: LineDict, schema: OpSchema | None, op: str, shown: str, problems: Problems) -> DevicePolicy | None:
    def loc(key: str) -> Location:
        return Location(shown, entry.line_of(key))

    guard_text = entry.get("guard")
    guards = ", ".join(g.value for g in Guard)
    if guard_text is None:
        problems.add(loc("guard" if "guard" in entry else "op"), op, "no `guard`: every op states its device policy",
                     f"add `guard: first-tensor` (or one of: {guards})")
        return None
    guard = _enum(Guard, guard_text)
    if guard is None:
        problems.add(loc("guard"), op, f"unknown guard `{shown_text(guard_text)}`", f"use one of: {guards}")
        return None
    check_text = entry.get("device_check", DeviceCheck.SAME_DEVICE.value)
    device_check = _enum(DeviceCheck, check_text)
    if device_check is None:
        problems.add(loc("device_check"), op, f"unknown device_check `{shown_text(check_text)}`",
                     f"use one of: {', '.join(c.value for c in DeviceCheck)}")
        return None
    reason = entry.get("reason")
    ok = True
    if "reason" in entry:
        why = text_problem(reason)
        if why is not None:
            # A reason is rendered into a `//` comment of the generated C++:
            # it must not be able to end that comment.
            problems.add(loc("reason"), op, f"`reason` {why}",
                         "write the reason as one line of printable text (at most "
                         f"{MAX_TEXT} characters, no line break, no trailing backslash)")
            reason = None
            ok = False
        else:
            reason = reason.strip()
    guard_arg = entry.get("guard_arg")
    if guard_arg is not None and not isinstance(guard_arg, str):
        problems.add(loc("guard_arg"), op, f"guard_arg must name an argument, not {type_word(guard_arg)}",
                     "write `guard_arg: <argument>` (a tensor, a tensor list or the factory's `device`)")
        return None
    if guard is Guard.EXPLICIT_ARG:
        if guard_arg is None:
            problems.add(loc("guard_arg" if "guard_arg" in entry else "guard"), op,
                         "guard explicit-arg names no argument",
                         "add `guard_arg: <argument>` (a tensor, a tensor list or the factory's `device`)")
            ok = False
        elif schema is not None:
            arg = schema.argument(guard_arg)
            names = ", ".join(a.name for a in schema.arguments if a.kind in GUARD_ARG_KINDS) or "none"
            if arg is None:
                problems.add(loc("guard_arg"), op, f"guard_arg `{shown_text(guard_arg)}` is not an argument of {op}",
                             f"name one of its tensor or device arguments: {names}")
                ok = False
            elif arg.kind not in GUARD_ARG_KINDS:
                problems.add(loc("guard_arg"), op,
                             f"guard_arg `{guard_arg}` is a {arg.type}, neither a tensor, a tensor list nor a device",
                             f"name one of: {names}")
                ok = False
    elif guard_arg is not None:
        problems.add(loc("guard_arg"), op, f"guard_arg is only read by explicit-arg, not by {guard.value}",
                     "remove `guard_arg` or use `guard: explicit-arg`")
        ok = False
    if guard is Guard.FIRST_TENSOR and schema is not None and not schema.first_tensor_candidates():
        device = " its `device` argument" if schema.argument("device") is not None else " an argument"
        problems.add(loc("guard"), op, f"guard first-tensor, but {op} has no tensor argument",
                     f"use `guard: explicit-arg` with `guard_arg:` naming{device}")
        ok = False
    if guard is Guard.NONE and reason is None and "reason" not in entry:
        problems.add(loc("guard"), op, "guard none without a `reason`",
                     "add `reason:` saying why the launch may run on whatever device is current")
        ok = False
    elif (guard is Guard.NONE and schema is not None and reason not in NONE_REASONS
          and any(a.kind in GUARD_ARG_KINDS for a in schema.arguments)):
        # An argument names a device: the launch must run there. The device
        # matrix runs every such op on a non-current device, so a `none` here
        # would also fail the op's own test.
        names = ", ".join(a.name for a in schema.arguments if a.kind in GUARD_ARG_KINDS)
        problems.add(loc("reason" if "reason" in entry else "guard"), op,
                     f"guard none, but {op}'s arguments name a device ({names}): its launches "
                     "must run there", "use `guard: first-tensor` (or explicit-arg); `none` takes a reason from: "
                     + "; ".join(f"`{key}` ({why})" for key, why in NONE_REASONS.items()))
        ok = False
    if device_check is DeviceCheck.NO_CHECK and reason is None and "reason" not in entry:
        problems.add(loc("device_check"), op, "device_check no-check without a `reason`",
                     "add `reason:` saying why its tensors may live on different devices")
        ok = False
    if not ok:
        return None
    return DevicePolicy(guard, guard_arg, device_check, reason)


def _enum(kind, value):
    """The member of `kind` written as `value`, or None (for any value, text or not)."""
    if not isinstance(value, str):
        return None
    try:
        return kind(value)
    except ValueError:
        return None


def _unknown_keys(entry: LineDict, allowed: tuple[str, ...], op: str | None, shown: str, problems: Problems) -> None:
    for key in entry:
        if key not in allowed:
            problems.add(Location(shown, entry.line_of(key)), op, f"unknown key `{shown_text(key)}`",
                         f"remove it; an entry may have: {', '.join(allowed)}")


_OP_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)?", re.ASCII)


def _op_name(entry: LineDict, schemas: ATenSchemas, shown: str, problems: Problems) -> tuple[str | None, OpSchema | None]:
    op = entry.get("op")
    loc = Location(shown, entry.line_of("op"))
    if not isinstance(op, str) or not op:
        problems.add(loc, None, "entry without `op`", "add `op: <overload>` as in native_functions.yaml (add.Tensor)")
        return None, None
    if not _OP_NAME.fullmatch(op):
        problems.add(loc, None, f"`{shown_text(op)}` is not an ATen overload name",
                     "write the name before `(` in native_functions.yaml: name or name.overload (add.Tensor)")
        return None, None
    schema = schemas.get(op)
    if schema is None:
        close = schemas.suggest(op)
        hint = f"did you mean {', '.join(close)}?" if close else "use the name before `(` in native_functions.yaml"
        problems.add(loc, op, f"torch {_torch_version()} has no operator `{op}`", hint)
    return op, schema


def _torch_version() -> str:
    try:
        import torch

        return torch.__version__.split("+")[0]
    except Exception:  # pragma: no cover - torch is a requirement
        return "(installed)"


# ---- yaml/ops/*.yaml -----------------------------------------------------------------


def _launch(entry: LineDict, key: str, op: str, shown: str, prototypes: dict[str, AclnnPrototype | None] | None,
            problems: Problems) -> Launch | None:
    """`prototypes` None: yaml/aclnn.yaml is unusable (and reported), so no launch can be checked."""
    text = entry.get(key)
    loc = Location(shown, entry.line_of(key))
    try:
        call = parse_launch(text)
    except ExprError as error:
        problems.add(loc, op, f"{key}: {error.message}", error.fix)
        return None
    if prototypes is None:
        return None
    proto = prototypes.get(call.func)
    if proto is None and call.func in prototypes:
        return None  # its prototype is invalid, and reported
    if proto is None:
        problems.add(loc, op, f"{key}: entry point `{call.func}` has no prototype",
                     f"add `{call.func}:` with its parameters to yaml/aclnn.yaml (from CANN's docs)")
        return None
    if len(call.args) != len(proto.params):
        params = ", ".join(f"{p.ctype} {p.name}" for p in proto.params)
        problems.add(loc, op, f"{key}: {call.func} takes {len(proto.params)} argument(s), the launch passes {len(call.args)}",
                     f"pass, in order: {params}")
        return None
    return Launch(call.func, call.args, show(call), loc)


def _output_rules(entry: LineDict, op: str, shown: str, problems: Problems) -> tuple[OutputRule, ...] | None:
    """The `out:` list of shape general: one mapping per output, each with a `name`."""
    value = entry.get("out")
    rules = []
    for index, item in enumerate(value):
        loc = Location(shown, value.line_at(index) if isinstance(value, LineList) else entry.line_of("out"))
        if not isinstance(item, LineDict):
            problems.add(loc, op, "each output of the `out` list must be a mapping",
                         "write `- name: <output>` with `size:` and `dtype:` under it")
            return None
        name = item.get("name")
        if "name" not in item:
            problems.add(loc, op, "an output of the `out` list needs a `name`",
                         "add `name: <identifier>` (an out= argument's name for out= forms)")
            return None
        why = local_name_problem(name)
        if why is not None:
            # The name becomes a C++ variable of the wrapper.
            problems.add(Location(shown, item.line_of("name")), op, f"output name `{shown_text(name)}` {why}",
                         "name the output in lower_snake_case, as ATen names its returns (values, indices, grad_input)")
            return None
        rule = _output_rule(entry, op, shown, problems, value=item, keys=OUTPUT_KEYS, loc=loc)
        if rule is None:
            return None
        when = None
        if "when" in item:
            try:
                when = parse_expr(item["when"])
            except ExprError as error:
                problems.add(Location(shown, item.line_of("when")), op, f"out.when: {error.message}", error.fix)
                return None
        rules.append(OutputRule(rule.size, rule.dtype, loc, rule.size_loc, rule.dtype_loc, name, when,
                                Location(shown, item.line_of("when")) if "when" in item else None))
    return tuple(rules)


def _output_rule(entry: LineDict, op: str, shown: str, problems: Problems, value=None,
                 keys: tuple[str, ...] = OUT_KEYS, loc: Location | None = None) -> OutputRule | None:
    if value is None:
        value = entry.get("out")
        loc = Location(shown, entry.line_of("out"))
    if value is None:
        return None
    if not isinstance(value, LineDict):
        problems.add(loc, op, "`out` must be a mapping", "write `out:` with `size:` and `dtype:` lines under it")
        return None
    _unknown_keys(value, keys, op, shown, problems)
    rules = {}
    for key in OUT_KEYS:
        if key in value:
            try:
                rules[key] = parse_expr(value[key])
            except ExprError as error:
                problems.add(Location(shown, value.line_of(key)), op, f"out.{key}: {error.message}", error.fix)
                return None
    def where(key: str) -> Location | None:
        return Location(shown, value.line_of(key)) if key in value else None

    return OutputRule(rules.get("size"), rules.get("dtype"), loc, where("size"), where("dtype"))


def _op_entry(entry, line: int, shown: str, schemas: ATenSchemas,
              prototypes: dict[str, AclnnPrototype | None] | None, problems: Problems) -> OpEntry | None:
    if not isinstance(entry, LineDict):
        problems.add(Location(shown, line), None, f"a registry entry must be a mapping, not {type_word(entry)}",
                     "start it with `- op: <overload>`")
        return None
    before = len(problems.items)
    op, schema = _op_name(entry, schemas, shown, problems)
    _unknown_keys(entry, OP_KEYS, op, shown, problems)
    if op is None:
        return None
    shape_text = entry.get("shape")
    shape = SHAPES.get(shape_text) if isinstance(shape_text, str) else None
    if shape is None:
        problems.add(Location(shown, entry.line_of("shape")), op,
                     f"unknown kernel shape `{shown_text(shape_text)}`" if shape_text else "no `shape`",
                     f"use one of: {', '.join(SHAPES)}")
    elif schema is not None:
        why = shape.check(schema)
        if why:
            problems.add(Location(shown, entry.line_of("shape")), op, why,
                         "pick the shape that matches the op (see docs/codegen.md)")
    policy = _policy(entry, schema, op, shown, problems)
    enums = _enums(entry, op, schema, shown, problems)
    alternate, alternate_when = _alternate(entry, op, shown, prototypes, problems)
    check = entry.get("check")
    if "check" in entry:
        check_loc = Location(shown, entry.line_of("check"))
        if not isinstance(check, str) or local_name_problem(check) is not None:
            problems.add(check_loc, op, f"`check: {shown_text(check)}` is not a C++ function name",
                         "name the check in lower_snake_case, after the op (dot, where)")
        elif schema is not None and schema.structured is not None:
            problems.add(check_loc, op, f"{op} is structured in torch {_torch_version()}: its meta function "
                         f"({schema.structured.meta_class}) checks its arguments", "remove `check:`")
    launch = None
    if "launch" not in entry:
        problems.add(Location(shown, entry.line), op, "no `launch`", "add `launch: aclnnX(arg, ...)`")
    else:
        launch = _launch(entry, "launch", op, shown, prototypes, problems)
    wrapped = None
    if "wrapped_number" in entry:
        wrapped = _launch(entry, "wrapped_number", op, shown, prototypes, problems)
        loc = Location(shown, entry.line_of("wrapped_number"))
        if shape is not None and not shape.wrapped_number:
            problems.add(loc, op, f"shape {shape.name} has no wrapped-number launch",
                         "remove `wrapped_number` or use shape binary, inplace or out")
        if wrapped is not None:
            items = [a for a in wrapped.args if isinstance(a, Call) and a.func == "item"]
            if len(items) != 1 or len(items[0].args) != 1 or not isinstance(items[0].args[0], Name):
                problems.add(loc, op, "wrapped_number must pass exactly one `item(<tensor>)`",
                             "write e.g. aclnnAdds(self, item(other), alpha, out)")
            elif schema is not None and schema.argument(items[0].args[0].name) is None:
                problems.add(loc, op, f"item({items[0].args[0].name}): {op} has no such argument",
                             "name the Tensor argument that may be a Python number")
    outputs: tuple[OutputRule, ...] = ()
    if schema is not None and schema.structured is not None:
        # ATen's meta function computes the outputs (and checks the
        # arguments): registry rules would be a second, unchecked copy.
        if "out" in entry:
            problems.add(Location(shown, entry.line_of("out")), op,
                         f"{op} is structured in torch {_torch_version()}: its meta function "
                         f"({schema.structured.meta_class}) computes the outputs' sizes and dtypes",
                         "remove `out:`; the launch names the outputs "
                         f"{', '.join(schema.structured.outputs)}")
        out = None
    elif isinstance(entry.get("out"), list):
        out = None
        if shape is not None and shape.name != "general":
            problems.add(Location(shown, entry.line_of("out")), op,
                         f"shape {shape.name} has one output: `out` must be a mapping",
                         "write `out:` with `size:` and `dtype:`, or use shape general for several outputs")
        else:
            listed = _output_rules(entry, op, shown, problems)
            if listed is None:
                return None  # reported
            outputs = listed
            out = outputs[0] if outputs else None
    else:
        out = _output_rule(entry, op, shown, problems)
        outputs = (out,) if out is not None else ()
    if schema is not None and schema.structured is not None:
        pass
    elif shape is not None and shape.name == "general":
        if schema is not None:
            _check_general_outputs(entry, op, schema, outputs, shown, problems)
    elif shape is not None:
        loc = Location(shown, entry.line_of("out"))
        if shape.output == "new" and (out is None or out.size is None or out.dtype is None):
            problems.add(loc, op, f"shape {shape.name} allocates its output: `out` needs `size` and `dtype`",
                         "add `out:` with `size: <rule>` and `dtype: <rule>` (see docs/codegen.md)")
        if shape.output == "self" and out is not None:
            problems.add(loc, op, "an in-place op writes `self`: it allocates no output",
                         "remove `out`")
        if shape.output == "out" and (out is None or out.size is None or out.dtype is not None):
            problems.add(loc, op, "an out= op resizes `out` and keeps its dtype: `out` needs `size` and no `dtype`",
                         "write `out:` with only `size: <rule>`")
    if len(problems.items) != before or schema is None or shape is None or policy is None or launch is None:
        return None
    return OpEntry(op, shape.name, launch, wrapped, out, policy, Location(shown, entry.line),
                   outputs if shape.name == "general" else (), check, enums, alternate, alternate_when)


def _alternate(entry: LineDict, op: str, shown: str, prototypes: dict[str, AclnnPrototype | None] | None,
               problems: Problems):
    """`alternate: {when: <bool>, launch: aclnnY(...)}`: the launch made instead when `when` holds."""
    value = entry.get("alternate")
    if value is None:
        return None, None
    loc = Location(shown, entry.line_of("alternate"))
    if not isinstance(value, LineDict) or "when" not in value or "launch" not in value:
        problems.add(loc, op, "`alternate` needs `when` and `launch`",
                     "write `alternate:` with `when: <bool, e.g. not_floating(self)>` and `launch: aclnnY(...)`")
        return None, None
    _unknown_keys(value, ALTERNATE_KEYS, op, shown, problems)
    try:
        when = parse_expr(value["when"])
    except ExprError as error:
        problems.add(Location(shown, value.line_of("when")), op, f"alternate.when: {error.message}", error.fix)
        return None, None
    launch = _launch(value, "launch", op, shown, prototypes, problems)
    return launch, when


def _enums(entry: LineDict, op: str, schema: OpSchema | None, shown: str, problems: Problems) -> tuple[Enum, ...]:
    """`enums:`: for each `str` argument ACLNN takes as a code, the strings ATen accepts and their codes."""
    value = entry.get("enums")
    loc = Location(shown, entry.line_of("enums"))
    if value is None:
        return ()
    example = "write `enums: {approximate: {none: 0, tanh: 1}}`: each string the argument takes and its code"
    if not isinstance(value, LineDict) or not value:
        problems.add(loc, op, "`enums` must map string arguments to their codes", example)
        return ()
    enums = []
    for arg, codes in value.items():
        where = Location(shown, value.line_of(arg))
        kind = schema.argument(arg).kind if schema is not None and schema.argument(arg) is not None else None
        if kind != "str":
            problems.add(where, op, f"enums: `{shown_text(arg)}` is not a `str` argument of {op}",
                         "list only the op's `str` arguments")
            continue
        if (not isinstance(codes, LineDict) or len(codes) < 2
                or any(not isinstance(k, str) or not _ENUM_STRING.fullmatch(k) for k in codes)):
            problems.add(where, op, f"enums: `{arg}` must map each string it takes to its code, two or more",
                         example)
            continue
        kinds = {type(code) for code in codes.values()}
        if kinds not in ({int}, {str}) or any(isinstance(c, str) and not _ENUM_STRING.fullmatch(c)
                                              for c in codes.values()) \
                or any(isinstance(c, int) and literal_problem(c, "int64_t") for c in codes.values()):
            problems.add(where, op, f"enums: the codes of `{arg}` must be all integers or all strings "
                         "(letters, digits, _)", example)
            continue
        enums.append(Enum(arg, tuple(codes.items())))
    return tuple(enums)


def _derived(entry: LineDict, values: dict) -> LineDict:
    """A copy of `entry` with `values` in place of its own, every key keeping the entry's lines."""
    derived = LineDict({k: v for k, v in entry.items() if k not in FAMILY_KEYS})
    derived.line = entry.line
    derived.key_lines = dict(entry.key_lines)
    for key, value in values.items():
        if value is None:
            derived.pop(key, None)
        else:
            derived[key] = value
    return derived


def _renamed(text: object, names: dict[str, str]) -> object:
    """A launch's text with its output names replaced (`out` -> `self`); unparsable text is
    returned as is, for the entry's own validation to report."""
    try:
        call = parse_launch(text)
    except ExprError:
        return text

    def rename(expr):
        if isinstance(expr, Name):
            return Name(names.get(expr.name, expr.name))
        if isinstance(expr, Call):
            return Call(expr.func, tuple(rename(a) for a in expr.args))
        if isinstance(expr, Or):
            return Or(rename(expr.first), rename(expr.fallback))
        return expr

    return show(rename(call))


def _renamed_alternate(value: object, names: dict[str, str]) -> object:
    """An `alternate:` whose launch writes the form's outputs."""
    if not isinstance(value, LineDict) or "launch" not in value:
        return value
    copy = LineDict(value)
    copy.line, copy.key_lines = value.line, dict(value.key_lines)
    copy["launch"] = _renamed(value["launch"], names)
    return copy


def _functional_outputs(entry: LineDict, schema: OpSchema) -> tuple[str, ...]:
    """The names the functional form's launch gives its outputs."""
    if schema.structured is not None:
        return schema.structured.outputs
    out = entry.get("out")
    if isinstance(out, list):
        return tuple(item.get("name") if isinstance(item, LineDict) else None for item in out)
    return ("out",)


def _out_rules(value: object, out_args: tuple[str, ...]) -> object:
    """The functional form's `out:` rules, for its out= form: each output becomes the out=
    argument in its position, resized with its `size`, its dtype kept."""
    def resized(rule: LineDict, name: str | None) -> LineDict:
        copy = LineDict({k: v for k, v in rule.items() if k not in ("dtype", "name")})
        copy.line, copy.key_lines = rule.line, dict(rule.key_lines)
        if name is not None:
            copy["name"] = name
        return copy

    if isinstance(value, LineDict):
        return resized(value, None)
    if isinstance(value, LineList):
        rules = LineList(resized(item, name) if isinstance(item, LineDict) else item
                         for item, name in zip(value, out_args + (None,) * len(value)))
        rules.line, rules.item_lines = value.line, list(value.item_lines)
        return rules
    return value


def _family(entry: LineDict, shown: str, schemas: ATenSchemas, problems: Problems) -> list[LineDict]:
    """An entry with `variants`: one entry per form of the family, derived from the functional
    form's (the launch written once with `out`; the in-place form launches with `self` as
    its output, unless `inplace_launch` names its own operator). An entry without `variants`
    is its one op."""
    if "variants" not in entry:
        for key in FAMILY_KEYS:
            if key in entry:
                problems.add(Location(shown, entry.line_of(key)), entry.get("op") if isinstance(entry.get("op"), str)
                             else None, f"`{key}` belongs to a family entry",
                             "add `variants: [functional, inplace, out]` (the forms to generate), or remove it")
                return []
        return [entry]
    op = entry.get("op")
    if not isinstance(op, str) or schemas.get(op) is None:
        return [entry]  # reported by the entry's own validation
    loc = Location(shown, entry.line_of("variants"))
    variants = entry.get("variants")
    if (not isinstance(variants, list) or not variants or any(v not in VARIANTS for v in variants)
            or len(set(variants)) != len(variants)):
        problems.add(loc, op, f"`variants` must list forms among {', '.join(VARIANTS)}, each once",
                     "write e.g. `variants: [functional, inplace, out]`")
        return []
    forms = schemas.forms(op)
    schema = schemas.get(op)
    if forms.get("functional") != op:
        problems.add(Location(shown, entry.line_of("op")), op, f"{op} is not the functional form of its family",
                     f"name the functional overload (`op: {forms['functional']}`) and list the forms under `variants`"
                     if "functional" in forms else "list the overload in its own entry, without `variants`")
        return []
    ok = True
    for variant in variants:
        if variant not in forms:
            problems.add(loc, op, f"torch {_torch_version()} has no {variant} form of {op} "
                         f"(it has: {', '.join(forms)})", f"remove `{variant}` from `variants`")
            ok = False
    for key in ("inplace_launch", "inplace_wrapped_number"):
        if key in entry and "inplace" not in variants:
            problems.add(Location(shown, entry.line_of(key)), op, f"`{key}` without an in-place form",
                         f"add `inplace` to `variants`, or remove `{key}`")
            ok = False
    if not ok:
        return []
    outputs = _functional_outputs(entry, schema)
    derived = []
    for variant in variants:
        name = forms[variant]
        if variant == "functional":
            derived.append(_derived(entry, {"op": name}))
        elif variant == "inplace":
            self_out = {o: "self" for o in outputs if o}
            launch = entry.get("inplace_launch", _renamed(entry.get("launch"), self_out))
            wrapped = entry.get("inplace_wrapped_number")
            if wrapped is None and "wrapped_number" in entry:
                wrapped = _renamed(entry["wrapped_number"], self_out)
            key_lines = {}
            values = {"op": name, "shape": "inplace", "launch": launch, "wrapped_number": wrapped, "out": None,
                      "alternate": _renamed_alternate(entry.get("alternate"), self_out)}
            copy = _derived(entry, values)
            for key, own in (("launch", "inplace_launch"), ("wrapped_number", "inplace_wrapped_number")):
                if own in entry:
                    key_lines[key] = entry.line_of(own)
            copy.key_lines.update(key_lines)
            derived.append(copy)
        else:
            out_args = schemas.get(name).out_args
            renames = {o: a for o, a in zip(outputs, out_args) if o}
            values = {"op": name, "shape": "general" if entry.get("shape") == "general" else "out",
                      "launch": _renamed(entry.get("launch"), renames),
                      "wrapped_number": _renamed(entry["wrapped_number"], renames) if "wrapped_number" in entry else None,
                      "out": _out_rules(entry["out"], out_args) if "out" in entry else None,
                      "alternate": _renamed_alternate(entry.get("alternate"), renames)}
            derived.append(_derived(entry, values))
    return derived


def _check_general_outputs(entry: LineDict, op: str, schema: OpSchema, outputs: tuple[OutputRule, ...],
                           shown: str, problems: Problems) -> None:
    """Shape general: one rule per returned tensor (functional) or per out= argument."""
    loc = Location(shown, entry.line_of("out"))
    if not outputs:
        problems.add(loc, op, "shape general needs `out`: one rule per output",
                     "write `out:` as a mapping (one output) or a list of `- name:` mappings")
        return
    names = [o.name for o in outputs]
    if len(set(names)) != len(names):
        problems.add(loc, op, f"output names repeat: {', '.join(names)}", "give each output its own name")
    if schema.out_args:
        if len(outputs) == 1 and len(schema.out_args) == 1 and outputs[0].name == "out":
            outputs = (OutputRule(outputs[0].size, outputs[0].dtype, outputs[0].loc, outputs[0].size_loc,
                                  outputs[0].dtype_loc, schema.out_args[0]),)
        if sorted(o.name for o in outputs) != sorted(schema.out_args):
            problems.add(loc, op, f"an out= op's outputs are its out= arguments ({', '.join(schema.out_args)}), "
                         f"not {', '.join(o.name for o in outputs)}", "name each out= argument once")
        for rule in outputs:
            if rule.size is None or rule.dtype is not None or rule.when is not None:
                problems.add(rule.loc, op, f"out= argument `{rule.name}` is resized and keeps its dtype: "
                             "it needs `size` and no `dtype` or `when`", "write only `size: <rule>`")
        return
    if schema.inplace or schema.returns_ref:
        problems.add(loc, op, "shape general does not write in place", "use shape inplace")
        return
    if len(outputs) != schema.returns:
        problems.add(loc, op, f"{op} returns {schema.returns} tensor(s); `out` describes {len(outputs)}",
                     "write one output per returned tensor, in return order")
    for rule in outputs:
        if rule.size is None or rule.dtype is None:
            problems.add(rule.loc, op, f"output `{rule.name}` is allocated: it needs `size` and `dtype`",
                         "add `size: <rule>` and `dtype: <rule>` (see docs/codegen.md)")
        if schema.argument(rule.name) is not None:
            problems.add(rule.loc, op, f"output name `{rule.name}` is also an argument of {op}",
                         "rename the output")


def _entries(document: Document | None, shown: str, problems: Problems) -> list[tuple[object, int]]:
    """(entry, line) for each entry of a registry list file."""
    if document is None or document.data is None:
        return []
    data = document.data
    if not isinstance(data, LineList):
        problems.add(Location(shown, getattr(data, "line", document.line)), None,
                     f"expected a list of entries, not {type_word(data)}", "start each entry with `- op: <overload>`")
        return []
    return [(entry, data.line_at(index)) for index, entry in enumerate(data)]


_HANDWRITTEN_FILE = re.compile(r"csrc/handwritten/[A-Za-z0-9_][A-Za-z0-9_./-]*\.(cc|cpp|h)", re.ASCII)


def _handwritten_entry(entry, line: int, shown: str, schemas: ATenSchemas, paths: Paths,
                       problems: Problems) -> HandwrittenEntry | None:
    if not isinstance(entry, LineDict):
        problems.add(Location(shown, line), None, f"a handwritten entry must be a mapping, not {type_word(entry)}",
                     "start it with `- op: <overload>`")
        return None
    before = len(problems.items)
    op, schema = _op_name(entry, schemas, shown, problems)
    _unknown_keys(entry, HANDWRITTEN_KEYS, op, shown, problems)
    if op is None:
        return None
    policy = _policy(entry, schema, op, shown, problems)
    file = entry.get("file")
    if file is None:
        problems.add(Location(shown, entry.line_of("file")), op, "no `file`",
                     "add `file: csrc/handwritten/<file>.cc`, the file that registers it")
    elif not isinstance(file, str) or not _HANDWRITTEN_FILE.fullmatch(file) or "/../" in file or "/./" in file:
        problems.add(Location(shown, entry.line_of("file")), op,
                     f"`file: {shown_text(file)}` is not a source file under csrc/handwritten/",
                     "write `file: csrc/handwritten/<file>.cc`, the file that registers it")
    impl = entry.get("impl")
    if "impl" not in entry:
        problems.add(Location(shown, entry.line), op, "no `impl`: the generator writes every handwritten op's "
                     "wrapper and registration, and calls its body",
                     "add `impl: <name>` and define flagos::impl::<name>(const LaunchDevice& device, ...) in the "
                     "file, as csrc/generated/impls.h declares it")
    else:
        impl_loc = Location(shown, entry.line_of("impl"))
        if not isinstance(impl, str) or local_name_problem(impl) is not None:
            problems.add(impl_loc, op, f"`impl: {shown_text(impl)}` is not a C++ function name",
                         "name the body in lower_snake_case, as the structured group is named (gather, upsample_nearest2d)")
        elif entry.get("guard") == "none":
            problems.add(impl_loc, op, "a body launches on the device its wrapper passes, and `guard: none` "
                         "passes none: the launch would run on whatever device is current",
                         "declare `guard: first-tensor` or `guard: explicit-arg` with `guard_arg:`")
    dtype_fallback = _flag(entry, "dtype_fallback", True, "registered without the per-dtype CPU fallback", op,
                           shown, problems)
    composite = _flag(entry, "composite", False, "the body composes other flagos ops", op, shown, problems)
    autograd_impl = entry.get("autograd_impl")
    if "autograd_impl" in entry:
        if not isinstance(autograd_impl, str) or local_name_problem(autograd_impl) is not None:
            why, fix = (f"`autograd_impl: {shown_text(autograd_impl)}` is not a C++ function name",
                        "name the body in lower_snake_case")
        elif schema is not None and schema.structured is not None:
            why, fix = "`autograd_impl` is for an op that is not structured in torch", "remove `autograd_impl`"
        else:
            why = fix = None
        if why:
            problems.add(Location(shown, entry.line_of("autograd_impl")), op, why, fix)
    fallthrough = entry.get("fallthrough", [])
    unknown = [key for key in fallthrough if key not in FALLTHROUGH_KEYS] if isinstance(fallthrough, list) else [None]
    if unknown:
        what = "is not a list" if unknown == [None] else f"names {shown_text(unknown[0])}"
        problems.add(Location(shown, entry.line_of("fallthrough")), op,
                     f"`fallthrough` {what}: it lists dispatch keys among {', '.join(FALLTHROUGH_KEYS)}",
                     f"write `fallthrough: [{', '.join(FALLTHROUGH_KEYS)}]` or a part of it")
    if len(problems.items) != before or policy is None:
        return None
    structured = impl is not None and schema is not None and schema.structured is not None
    return HandwrittenEntry(op, policy, file, Location(shown, entry.line), impl, structured, dtype_fallback,
                            composite, autograd_impl, tuple(fallthrough))


def _flag(entry: LineDict, key: str, default: bool, meaning: str, op: str, shown: str, problems: Problems) -> bool:
    """An optional true/false key of a handwritten entry."""
    value = entry.get(key, default)
    if not isinstance(value, bool):
        problems.add(Location(shown, entry.line_of(key)), op, f"`{key}: {shown_text(value)}` is not true or false",
                     f"write `{key}: {str(not default).lower()}` ({meaning}) or leave it out")
    return value


def _params(signature: str) -> str:
    """The parameter list of a C++ declaration `R WRAPPER(params)`."""
    return signature[signature.index("WRAPPER(") :]


def _check_impls(handwritten: dict[str, HandwrittenEntry], schemas: ATenSchemas, problems: Problems) -> None:
    """One body serves one structured group (its functional, in-place and out= overloads),
    or ops that are not structured (one C++ function, overloaded when their arguments
    differ), and is defined in one file."""
    first: dict[str, HandwrittenEntry] = {}
    for entry in sorted(handwritten.values(), key=lambda e: e.loc):
        if entry.impl is None:
            continue
        seen = first.setdefault(entry.impl, entry)
        if seen is entry:
            continue
        if entry.structured != seen.structured:
            problems.add(entry.loc, entry.op, f"impl {entry.impl} is also the body of {seen.op} ({seen.loc}); one "
                         "of the two is structured in torch, so their bodies take different arguments",
                         "give each its own body")
            continue
        if not entry.structured:
            if entry.file != seen.file:
                problems.add(entry.loc, entry.op, f"impl {entry.impl} is defined in {seen.file} ({seen.loc})",
                             f"write `file: {seen.file}`")
            signature, seen_signature = (schemas.get(e.op).concrete_signature for e in (entry, seen))
            if signature != seen_signature and _params(signature) == _params(seen_signature):
                problems.add(entry.loc, entry.op, f"impl {entry.impl} is also the body of {seen.op} ({seen.loc}), "
                             "with the same arguments and another result: C++ cannot overload them",
                             "give each its own body")
            continue
        group, seen_group = schemas.get(entry.op).structured, schemas.get(seen.op).structured
        if group.meta_class != seen_group.meta_class:
            problems.add(entry.loc, entry.op, f"impl {entry.impl} is also the body of {seen.op} ({seen.loc}), whose "
                         f"meta function is {seen_group.meta_class}, not {group.meta_class}",
                         "give each structured group its own body")
        elif entry.file != seen.file:
            problems.add(entry.loc, entry.op, f"impl {entry.impl} is defined in {seen.file} ({seen.loc})",
                         f"write `file: {seen.file}`")


def load_registry(paths: Paths, schemas: ATenSchemas | None = None, problems: Problems | None = None) -> Registry:
    """The validated registry (its valid entries); raises RegistryError listing every
    problem, unless the caller passes `problems` to collect more before raising."""
    schemas = schemas or aten_schemas()
    raise_here = problems is None
    problems = problems if problems is not None else Problems()
    invalid_prototypes: set[str] = set()
    loaded = _load_prototypes(paths, problems, invalid_prototypes)
    prototypes = loaded or []
    # None: yaml/aclnn.yaml is unusable; its problem is reported once, not at every launch.
    by_name: dict[str, AclnnPrototype | None] | None = None
    if loaded is not None:
        by_name = {name: None for name in invalid_prototypes}
        by_name.update({p.name: p for p in prototypes})
    inputs = [paths.show(paths.aclnn_yaml)]

    ops: dict[str, OpEntry] = {}
    first_seen: dict[str, Location] = {}
    op_files = paths.op_yamls()
    if not op_files:
        problems.add(Location(paths.show(os.path.join(paths.yaml_dir, "ops")), 1), None, "no registry files",
                     "add yaml/ops/<family>.yaml files")
    for path in op_files:
        shown = paths.show(path)
        inputs.append(shown)
        for listed, line in _entries(_read(path, paths, problems), shown, problems):
            before = len(problems.items)
            forms = _family(listed, shown, schemas, problems) if isinstance(listed, LineDict) else [listed]
            for entry in forms:
                if isinstance(entry, LineDict) and isinstance(entry.get("op"), str):
                    name, loc = entry["op"], Location(shown, entry.line)
                    if name in first_seen:
                        problems.add(loc, name, f"{shown_text(name)} is registered twice (first at {first_seen[name]})",
                                     "keep one entry per ATen overload")
                        continue
                    first_seen[name] = loc
                parsed = _op_entry(entry, line, shown, schemas, by_name, problems)
                if parsed is not None:
                    ops[parsed.op] = parsed
            # A family's forms share its text: a problem of a shared key is reported once, for
            # the first form (the functional one).
            problems.dedupe_since(before)

    handwritten: dict[str, HandwrittenEntry] = {}
    if os.path.exists(paths.handwritten_yaml):
        shown = paths.show(paths.handwritten_yaml)
        inputs.append(shown)
        for entry, line in _entries(_read(paths.handwritten_yaml, paths, problems), shown, problems):
            parsed = _handwritten_entry(entry, line, shown, schemas, paths, problems)
            if parsed is None:
                continue
            if parsed.op in handwritten:
                problems.add(parsed.loc, parsed.op, f"{parsed.op} is listed twice (first at {handwritten[parsed.op].loc})",
                             "keep one entry per ATen overload")
            elif parsed.op in first_seen:
                problems.add(parsed.loc, parsed.op,
                             f"{parsed.op} is both generated (at {first_seen[parsed.op]}) and handwritten",
                             "remove one of the two entries: an op has one kernel")
            else:
                handwritten[parsed.op] = parsed
    _check_impls(handwritten, schemas, problems)

    if raise_here:
        problems.raise_if_any()
    return Registry(
        ops=tuple(ops[name] for name in sorted(ops)),
        handwritten=tuple(handwritten[name] for name in sorted(handwritten)),
        prototypes=tuple(prototypes),
        inputs=tuple(inputs),
    )
