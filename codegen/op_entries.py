"""yaml/ops/*.yaml: one generated op's entry (shape, launches, outputs, enums, alternate)."""

from __future__ import annotations

import re

from codegen.errors import Problems
from codegen.exprs import ExprError, literal_problem, parse_expr, parse_launch, show
from codegen.fields import entry_op, torch_version, unknown_keys
from codegen.model import AclnnPrototype, Call, Enum, Launch, Location, Name, OpEntry, OutputRule
from codegen.policies import device_policy
from codegen.safety import local_name_problem
from codegen.safety import shown as shown_text
from codegen.schemas import ATenSchemas, OpSchema
from codegen.shapes import SHAPES
from codegen.yaml_loader import LineDict, LineList

OP_KEYS = ("op", "variants", "shape", "launch", "wrapped_number", "inplace_launch", "inplace_wrapped_number", "out",
           "alternate", "enums", "check", "guard", "guard_arg", "device_check", "reason")
ALTERNATE_KEYS = ("when", "launch")
ABSENT = "None"  # the `enums:` key of an absent `str?` argument, as ATen's messages spell it
_ENUM_STRING = re.compile(r"[A-Za-z0-9_]{1,32}", re.ASCII)  # a string ATen accepts, a string code
OUT_KEYS = ("size", "dtype")
OUTPUT_KEYS = ("name", "size", "dtype", "when")  # one output of a list (shape general)


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
    unknown_keys(value, keys, op, shown, problems)
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


def op_entry(entry, line: int, shown: str, schemas: ATenSchemas,
             prototypes: dict[str, AclnnPrototype | None] | None, problems: Problems) -> OpEntry | None:
    before = len(problems.items)
    op, schema = entry_op(entry, line, "registry", OP_KEYS, shown, schemas, problems)
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
    policy = device_policy(entry, schema, op, shown, problems)
    enums = _enums(entry, op, schema, shown, problems)
    alternate, alternate_when = _alternate(entry, op, shown, prototypes, problems)
    check = entry.get("check")
    if "check" in entry:
        check_loc = Location(shown, entry.line_of("check"))
        if not isinstance(check, str) or local_name_problem(check) is not None:
            problems.add(check_loc, op, f"`check: {shown_text(check)}` is not a C++ function name",
                         "name the check in lower_snake_case, after the op (dot, where)")
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
                         f"{op} is structured in torch {torch_version()}: its meta function "
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
    unknown_keys(value, ALTERNATE_KEYS, op, shown, problems)
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
        if kind not in ("str", "optional_str"):
            problems.add(where, op, f"enums: `{shown_text(arg)}` is not a `str` or `str?` argument of {op}",
                         "list only the op's `str` and `str?` arguments")
            continue
        # A `str?` argument may be None: `None:` gives that its code too.
        if isinstance(codes, LineDict) and (kind == "optional_str") != (ABSENT in codes):
            fix = (f"add `{ABSENT}: <code>` for an absent {arg}" if kind == "optional_str"
                   else f"remove `{ABSENT}`: {arg} is a `str`, never None")
            problems.add(where, op, f"enums: `{arg}` is a `{'str?' if kind == 'optional_str' else 'str'}`: "
                         f"`{ABSENT}` is the code of its absence, "
                         f"{'which it needs' if kind == 'optional_str' else 'which it cannot have'}", fix)
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
        strings = tuple((name, code) for name, code in codes.items() if name != ABSENT)
        enums.append(Enum(arg, strings, codes.get(ABSENT)))
    return tuple(enums)



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
