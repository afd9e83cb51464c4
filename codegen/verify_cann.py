"""`python -m codegen --verify-cann DIR...`: the registry and the project's
CANN declarations against checkouts of CANN's own repositories.

Each DIR is a checkout of one of CANN's public repositories, named by its
folder (`.../ops-math`) or explicitly (`ops-math=/path`); `@<commit>` after
the path labels the checkout in the report when it is no git work tree.

Checked:
- every prototype of yaml/aclnn.yaml against the declaration in its
  `source` (a header, or the doc of an operator whose header CANN
  generates): parameter count, order, types, constness and names; the
  trailing (uint64_t* workspaceSize, aclOpExecutor** executor); and phase 2
  (void*, uint64_t, aclOpExecutor*, aclrtStream), top-level const aside;
- a `source` that is a doc while a header of the checkouts (`aclnn_*.h`)
  declares the operator: the header is the source to name;
- with hicann/opbase: the nnopbase functions and ACLNN status codes that
  csrc/include/flagos/acl_subset_*.h declare;
- with hicann/runtime: the ACL runtime functions, enum values and status
  codes that they declare.

Exit codes: 0 no difference; 1 differences (each listed); 2 a checkout is
missing or unreadable.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass

from codegen.model import AclnnPrototype, Registry

REPOS = ("ops-math", "ops-nn", "ops-cv", "ops-transformer", "opbase", "runtime")

# Where CANN declares what acl_subset_*.h declares.
OPBASE_HEADERS = ("include/nnopbase/aclnn/acl_meta.h", "include/nnopbase/opdev/op_errno.h")
RUNTIME_HEADERS = ("include/external/acl/acl_rt.h", "include/external/acl/acl_base_rt.h",
                   "include/external/acl/error_codes/rt_error_codes.h", "include/external/acl/acl_base.h")
SUBSET_FUNCTIONS = os.path.join("csrc", "include", "flagos", "acl_subset_functions.h")
SUBSET_TYPES = os.path.join("csrc", "include", "flagos", "acl_subset_types.h")


@dataclass(frozen=True)
class Checkout:
    repo: str
    path: str
    commit: str


@dataclass(frozen=True)
class Param:
    ctype: str
    name: str

    def __str__(self) -> str:
        return f"{self.ctype} {self.name}"


@dataclass(frozen=True)
class Declaration:
    name: str
    params: tuple[Param, ...]
    result: str
    where: str  # path:line


def parse_checkouts(args: list[str]) -> tuple[dict[str, Checkout], list[str]]:
    """The checkouts named on the command line, and the problems with them."""
    checkouts, problems = {}, []
    for arg in args:
        name, _, path = arg.partition("=") if "=" in arg else (None, None, arg)
        path, _, commit = path.partition("@")
        path = os.path.abspath(path)
        name = name or os.path.basename(path.rstrip(os.sep))
        if name not in REPOS:
            problems.append(f"{arg}: `{name}` is not one of CANN's repositories ({', '.join(REPOS)}); "
                            f"name it as <repo>=<path>")
            continue
        if not os.path.isdir(path):
            problems.append(f"{arg}: no such folder")
            continue
        checkouts[name] = Checkout(name, path, commit or _git_commit(path))
    return checkouts, problems


def _git_commit(path: str) -> str:
    try:
        result = subprocess.run(["git", "-C", path, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return result.stdout.strip() if result.returncode == 0 else "unknown"


# ---- reading C declarations ----------------------------------------------------------

def _keep_lines(match: re.Match) -> str:
    return "\n" * match.group(0).count("\n")


def _blank_comments(text: str) -> str:
    """`text` without /* */ and // comments (newlines kept, so lines still count)."""
    text = re.sub(r"/\*.*?\*/", _keep_lines, text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _blank_preprocessor(code: str) -> str:
    """`code` without preprocessor lines (continuations included), newlines kept."""
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", _keep_lines, code, flags=re.M)


def _code_blocks(markdown: str) -> str:
    """The fenced code of a Markdown doc, other lines blanked (so lines still count)."""
    out, inside = [], False
    for line in markdown.split("\n"):
        if line.lstrip().startswith("```"):
            inside = not inside
            out.append("")
        else:
            out.append(line if inside else "")
    return "\n".join(out)


def normalize_type(text: str) -> str:
    """`const aclTensor *` -> `const aclTensor*`; spacing only, nothing else."""
    text = re.sub(r"\s+", " ", text.strip())
    text = re.sub(r"\s*\*\s*", "*", text)
    return text


def _split_params(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        if char in "([<":
            depth += 1
        elif char in ")]>":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current)
    return parts


def parse_param(text: str) -> Param:
    text = " ".join(text.split())
    match = re.fullmatch(r"(.*?[\s*&])([A-Za-z_]\w*)", text)
    if match is None:  # an unnamed parameter
        return Param(normalize_type(text), "")
    return Param(normalize_type(match.group(1)), match.group(2))


_MACROS = re.compile(r"\b(ACL_FUNC_VISIBILITY|ACLNN_API|ACL_DEPRECATED_MESSAGE\([^)]*\)|ACL_DEPRECATED|"
                     r"__attribute__\s*\(\([^)]*\)\))\s*")


def declarations(text: str, shown: str, markdown: bool = False) -> dict[str, list[Declaration]]:
    """Every function declaration (or definition head) of a header or a doc's code blocks, by name."""
    code = _blank_preprocessor(_blank_comments(_code_blocks(text) if markdown else text))
    found: dict[str, list[Declaration]] = {}
    for match in re.finditer(r"([A-Za-z_][\w\s*]*?[\s*])([A-Za-z_]\w*)\s*\(", code):
        name = match.group(2)
        if name in ("if", "for", "while", "switch", "return", "sizeof", "defined"):
            continue
        start = match.end()
        depth, end = 1, start
        while end < len(code) and depth:
            depth += {"(": 1, ")": -1}.get(code[end], 0)
            end += 1
        if depth:
            continue
        after = code[end:end + 40].lstrip()
        if not (after.startswith(";") or after.startswith("{") or markdown):
            continue
        result = normalize_type(_MACROS.sub("", match.group(1)).replace("extern", ""))
        result = re.sub(r'^"C"\s*', "", result).strip()
        if not result or result in ("return", "else", "new", "delete"):
            continue
        params = tuple(parse_param(p) for p in _split_params(code[start:end - 1]))
        if len(params) == 1 and params[0].ctype in ("void", ""):
            params = ()
        line = code.count("\n", 0, match.start(2)) + 1
        found.setdefault(name, []).append(Declaration(name, params, result, f"{shown}:{line}"))
    return found


_NUMBER = r"-?(?:0[xX][0-9a-fA-F]+|\d+)"


def constants(text: str) -> dict[str, int]:
    """The integer constants of a header: `static const int NAME = value;`, `#define NAME value`, and
    every enumerator (implicit values counted as C does)."""
    code = _blank_comments(text)
    values: dict[str, int] = {}
    for pattern in (rf"static\s+const\s+\w+\s+([A-Z][A-Z0-9_]+)\s*=\s*({_NUMBER})[uUlL]*\s*;",
                    rf"#\s*define\s+([A-Z][A-Z0-9_]+)\s+\(?\s*({_NUMBER})[uUlL]*\s*\)?\s*$"):
        for match in re.finditer(pattern, code, flags=re.M):
            values.setdefault(match.group(1), int(match.group(2), 0))
    for body in re.finditer(r"\benum\b[^{;]*\{([^}]*)\}", code):
        next_value = 0
        for item in _MACROS.sub("", body.group(1)).split(","):
            item = item.strip()
            match = re.fullmatch(rf"([A-Za-z_]\w*)\s*(?:=\s*\(?\s*({_NUMBER})[uUlL]*\s*\)?)?", item)
            if match is None:
                break  # a value this reader does not evaluate: stop counting this enum
            next_value = int(match.group(2), 0) if match.group(2) else next_value
            values.setdefault(match.group(1), next_value)
            next_value += 1
    return values


# ---- comparisons --------------------------------------------------------------------

_PHASE_ONE_TAIL = ("uint64_t*", "aclOpExecutor**")
_PHASE_TWO = ("void*", "uint64_t", "aclOpExecutor*", "aclrtStream")


def _strip_top_const(ctype: str) -> str:
    """A by-value parameter's top-level const is not part of the function type."""
    return ctype[len("const "):] if ctype.startswith("const ") and "*" not in ctype else ctype


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def verify_prototype(proto: AclnnPrototype, checkout: Checkout, where: str) -> list[str]:
    """The differences between one registry prototype and its CANN source."""
    shown = f"hicann/{checkout.repo}/{proto.source_path}"
    text = _read(os.path.join(checkout.path, proto.source_path))
    if text is None:
        return [f"{where}: {proto.name}: its source {shown} does not exist in the checkout"]
    found = declarations(text, shown, markdown=proto.source_path.endswith(".md"))
    phase_one = found.get(f"{proto.name}GetWorkspaceSize", [])
    if not phase_one:
        return [f"{where}: {proto.name}: {shown} declares no {proto.name}GetWorkspaceSize"]
    cann = phase_one[0]
    problems = []
    params, tail = cann.params[:-2], cann.params[-2:]
    if tuple(p.ctype for p in tail) != _PHASE_ONE_TAIL:
        problems.append(f"{where}: {proto.name}: {cann.where} ends with ({', '.join(map(str, tail))}), "
                        "not (uint64_t* workspaceSize, aclOpExecutor** executor)")
    if len(params) != len(proto.params):
        problems.append(f"{where}: {proto.name}: {len(proto.params)} parameter(s) in the registry, "
                        f"{len(params)} in {cann.where}: ({', '.join(map(str, params))})")
    else:
        for index, (ours, theirs) in enumerate(zip(proto.params, params), 1):
            if ours.ctype != theirs.ctype or ours.name != theirs.name:
                problems.append(f"{where}: {proto.name}: parameter {index} is `{ours.ctype} {ours.name}` in the "
                                f"registry, `{theirs}` in {cann.where}")
    if cann.result != "aclnnStatus":
        problems.append(f"{where}: {proto.name}: {cann.where} returns {cann.result}, not aclnnStatus")
    phase_two = found.get(proto.name, [])
    if phase_two:
        types = tuple(_strip_top_const(p.ctype) for p in phase_two[0].params)
        if types != _PHASE_TWO or phase_two[0].result != "aclnnStatus":
            problems.append(f"{where}: {proto.name}: phase 2 at {phase_two[0].where} is "
                            f"{phase_two[0].result} ({', '.join(types)}), not aclnnStatus "
                            f"({', '.join(_PHASE_TWO)})")
    elif not proto.source_path.endswith(".md"):
        problems.append(f"{where}: {proto.name}: {shown} declares no phase 2 {proto.name}(...)")
    return problems


def declaring_headers(checkouts: dict[str, Checkout], names: set[str]) -> dict[str, list[str]]:
    """The CANN headers (`aclnn_*.h`, as hicann/<repo>/<path>) that declare each of the operators
    `names` (its GetWorkspaceSize), those outside experimental/ first."""
    found: dict[str, list[str]] = {}
    if not names:
        return found
    for checkout in checkouts.values():
        for folder, subfolders, files in os.walk(checkout.path):
            subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
            for file in sorted(files):
                if not (file.startswith("aclnn") and file.endswith(".h")):
                    continue
                path = os.path.join(folder, file)
                text = _read(path) or ""
                wanted = [name for name in names if f"{name}GetWorkspaceSize" in text]
                if not wanted:
                    continue
                shown = f"hicann/{checkout.repo}/{os.path.relpath(path, checkout.path)}"
                declared = declarations(text, shown)
                for name in wanted:
                    if f"{name}GetWorkspaceSize" in declared:
                        found.setdefault(name, []).append(shown)
    for headers in found.values():
        headers.sort(key=lambda shown: ("/experimental/" in shown, shown))
    return found


def _subset(root: str) -> tuple[dict[str, Declaration], dict[str, int]]:
    functions_path = os.path.join(root, SUBSET_FUNCTIONS)
    text = _read(functions_path) or ""
    functions = {name: decls[0] for name, decls in declarations(text, SUBSET_FUNCTIONS).items()}
    values = constants(_read(os.path.join(root, SUBSET_TYPES)) or "")
    return functions, values


def verify_subset(root: str, checkout: Checkout, headers: tuple[str, ...],
                  prefixes: tuple[str, ...]) -> tuple[list[str], set[str]]:
    """The project's declarations (functions and constants with `prefixes`) against CANN's `headers`,
    and the names found there."""
    functions, values = _subset(root)
    theirs_functions: dict[str, Declaration] = {}
    theirs_values: dict[str, int] = {}
    for header in headers:
        text = _read(os.path.join(checkout.path, header))
        if text is None:
            return [f"hicann/{checkout.repo}/{header}: missing from the checkout"], set()
        shown = f"hicann/{checkout.repo}/{header}"
        for name, decls in declarations(text, shown).items():
            theirs_functions.setdefault(name, decls[0])
        for name, value in constants(text).items():
            theirs_values.setdefault(name, value)
    problems, found = [], set()
    for name, ours in sorted(functions.items()):
        if not name.startswith(prefixes):
            continue
        theirs = theirs_functions.get(name)
        if theirs is None:
            continue  # declared by the other repository's headers
        found.add(name)
        ours_types = tuple(_strip_top_const(p.ctype) for p in ours.params)
        theirs_types = tuple(_strip_top_const(p.ctype) for p in theirs.params)
        if ours_types != theirs_types or ours.result != theirs.result:
            problems.append(f"{ours.where}: {name}: {ours.result} ({', '.join(ours_types)}) here, "
                            f"{theirs.result} ({', '.join(theirs_types)}) in {theirs.where}")
    for name, value in sorted(values.items()):
        if name.startswith(prefixes) and name in theirs_values:
            found.add(name)
            if theirs_values[name] != value:
                problems.append(f"{SUBSET_TYPES}: {name} is {value} here, {theirs_values[name]} "
                                f"in hicann/{checkout.repo}")
    return problems, found


def verify(registry: Registry, root: str, checkouts: dict[str, Checkout],
           aclnn_yaml: str) -> tuple[list[str], int, int]:
    """Every difference, how many registry prototypes and how many subset declarations were compared."""
    problems: list[str] = []
    compared = 0
    for proto in registry.prototypes:
        where = f"{aclnn_yaml}:{proto.loc.line}"
        checkout = checkouts.get(proto.source_repo)
        if checkout is None:
            continue
        compared += 1
        problems += verify_prototype(proto, checkout, where)
    # A doc is the source only where CANN generates the header at build time.
    documented = {proto.name: proto for proto in registry.prototypes
                  if proto.source_path.endswith(".md") and proto.source_repo in checkouts}
    for name, headers in sorted(declaring_headers(checkouts, set(documented)).items()):
        proto = documented[name]
        problems.append(f"{aclnn_yaml}:{proto.loc.line}: {name}: its source is the doc "
                        f"hicann/{proto.source_repo}/{proto.source_path}, but {headers[0]} declares it: "
                        f"name that header in `source:`")
    found: set[str] = set()
    for repo, headers in (("opbase", OPBASE_HEADERS), ("runtime", RUNTIME_HEADERS)):
        if repo in checkouts:
            more, names = verify_subset(root, checkouts[repo], headers, ("acl", "ACL"))
            problems += more
            found |= names
    if "opbase" in checkouts and "runtime" in checkouts:
        functions, values = _subset(root)
        for name in sorted(set(functions) | set(values)):
            if name not in found:
                problems.append(f"{SUBSET_FUNCTIONS if name in functions else SUBSET_TYPES}: {name} is declared "
                                f"here but in none of CANN's headers checked")
    return problems, compared, len(found)
