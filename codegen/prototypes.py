"""yaml/aclnn.yaml: the ACLNN operators' C prototypes, as CANN's headers declare them."""

from __future__ import annotations

import re

from codegen.errors import Problems
from codegen.exprs import PARAM_TYPES, TENSOR_TYPES
from codegen.fields import unknown_keys
from codegen.model import AclnnParam, AclnnPrototype, Location
from codegen.safety import ENTRY_NAME, entry_name_problem, parameter_name_problem, text_problem
from codegen.safety import shown as shown_text
from codegen.yaml_loader import LineDict, LineList

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


def load_prototypes(data: object, line: int, shown: str, problems: Problems,
                    invalid: set[str]) -> list[AclnnPrototype] | None:
    """The valid prototypes of yaml/aclnn.yaml's parsed `data` (its first node at `line`); the names of
    invalid ones go to `invalid` (their launches are not reported again). None when the file itself is
    unusable (then no launch is reported for lack of a prototype)."""
    if data is None or (isinstance(data, LineDict) and not data):
        problems.add(Location(shown, line), None, "declares no ACLNN operator",
                     "restore the prototypes: one `aclnnX:` entry with `source:`, `params:` and `outputs:` per operator")
        return None
    if not isinstance(data, LineDict):
        problems.add(Location(shown, getattr(data, "line", line)), None,
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
        unknown_keys(entry, PROTOTYPE_KEYS, name, shown, problems)
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
