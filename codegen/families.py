"""Op families (`variants:`): the in-place and out= forms derived from the functional form's entry."""

from __future__ import annotations

from codegen.errors import Problems
from codegen.exprs import ExprError, parse_launch, show
from codegen.fields import torch_version
from codegen.model import Call, Location, Name, Or
from codegen.schemas import ATenSchemas, OpSchema
from codegen.yaml_loader import LineDict, LineList

# The forms of an op family, as torchgen groups them (NativeFunctionsGroup).
VARIANTS = ("functional", "inplace", "out")
FAMILY_KEYS = ("variants", "inplace_launch", "inplace_wrapped_number")


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


def family_forms(entry: LineDict, shown: str, schemas: ATenSchemas, problems: Problems) -> list[LineDict]:
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
            problems.add(loc, op, f"torch {torch_version()} has no {variant} form of {op} "
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
