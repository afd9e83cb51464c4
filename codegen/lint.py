"""The handwritten-kernel lint (run by --check).

Handwritten kernels must launch ACLNN operators only through
FLAGOS_GUARDED_LAUNCH(device, aclnnX, ...), which guards the launch device.
A file in csrc/handwritten/ fails when it
  - calls an ACLNN operator (`aclnnX(...)`) or passes one to anything other
    than FLAGOS_GUARDED_LAUNCH (`EXEC_NPU_CMD(aclnnX, ...)`, `&aclnnX`),
    unless the line or the one above says
    `// flagos-lint: allow-raw-launch(<reason>)`;
  - registers an op (m.impl("<op>", ...)) that yaml/handwritten.yaml does not
    list for that file; or when an op listed there is not registered in its file;
  - launches, from the kernel it registers for an op, on another device than
    the op's declared guard/guard_arg (check_policies; docs/codegen.md).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from codegen import cpp
from codegen.model import Guard, HandwrittenEntry, Location, Registry
from codegen.schemas import OpSchema, aten_schemas

SOURCE_EXTENSIONS = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp")

_ACLNN = re.compile(r"\baclnn[A-Z]\w*")
_NOT_OPERATORS = {"aclnnStatus"}  # the status type, not an operator
_LAUNCH_MACRO = re.compile(r"\bFLAGOS_GUARDED_LAUNCH\s*\(")
_IMPL = re.compile(r"\b\w+\s*\.\s*impl\s*\(\s*\"([^\"]+)\"")
_EXEMPTION = re.compile(r"//\s*flagos-lint:\s*allow-raw-launch\((?P<reason>[^)]*)\)")


@dataclass(frozen=True, order=True)
class LintProblem:
    loc: Location
    message: str
    fix: str

    def __str__(self) -> str:
        return f"{self.loc}: {self.message}\n    fix: {self.fix}"


def blank_comments(text: str, strings_too: bool) -> str:
    """`text` with comments (and string literals) replaced by spaces; offsets and lines kept."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
        elif text[i] in "\"'":
            quote, end = text[i], i + 1
            while end < n and text[end] != quote and text[end] != "\n":
                end += 2 if text[end] == "\\" else 1
            end = min(end + 1, n)
            if not strings_too:
                i = end
                continue
        else:
            i += 1
            continue
        for j in range(i, end):
            if out[j] != "\n":
                out[j] = " "
        i = end
    return "".join(out)


def _launch_operand_spans(code: str) -> list[tuple[int, int]]:
    """Spans of the second argument of each FLAGOS_GUARDED_LAUNCH(...): the operator it launches."""
    spans = []
    for match in _LAUNCH_MACRO.finditer(code):
        depth, start, index = 0, match.end(), 0
        for pos in range(match.end(), len(code)):
            char = code[pos]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                if depth == 0:
                    if index == 1:
                        spans.append((start, pos))
                    break
                depth -= 1
            elif char == "," and depth == 0:
                if index == 1:
                    spans.append((start, pos))
                    break
                index, start = index + 1, pos + 1
    return spans


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def raw_launches(path_shown: str, text: str) -> list[LintProblem]:
    """ACLNN operators used outside FLAGOS_GUARDED_LAUNCH in one source file."""
    code = blank_comments(text, strings_too=True)
    lines = text.split("\n")
    allowed = _launch_operand_spans(code)
    problems = []
    for match in _ACLNN.finditer(code):
        name = match.group(0)
        if name in _NOT_OPERATORS or any(start <= match.start() < end for start, end in allowed):
            continue
        after = code[match.end():].lstrip()[:1]
        before = code[: match.start()].rstrip()[-1:]
        if after != "(" and before not in ("(", ",", "&"):
            continue  # a declaration or a mention, not a launch
        line = _line_of(text, match.start())
        exemption = None
        for candidate in (line, line - 1):
            if 1 <= candidate <= len(lines):
                found = _EXEMPTION.search(lines[candidate - 1])
                if found:
                    exemption = found
                    break
        if exemption is not None and exemption.group("reason").strip():
            continue
        how = "calls" if after == "(" else "passes"
        if exemption is not None:
            problems.append(LintProblem(Location(path_shown, line),
                                        f"{name}: the allow-raw-launch exemption gives no reason",
                                        "write `// flagos-lint: allow-raw-launch(<why this launch needs no guard>)`"))
        else:
            problems.append(LintProblem(
                Location(path_shown, line),
                f"{how} ACLNN operator {name} outside FLAGOS_GUARDED_LAUNCH: it would launch on whatever device is current",
                f"launch it as FLAGOS_GUARDED_LAUNCH(<launch device>, {name}, ...), or mark a deliberate raw launch "
                "with `// flagos-lint: allow-raw-launch(<reason>)`"))
    return problems


def registrations(text: str) -> list[tuple[str, int]]:
    """(op, line) of each m.impl("<op>", ...) in a source file."""
    code = blank_comments(text, strings_too=False)
    found = []
    for match in _IMPL.finditer(code):
        op = match.group(1)
        found.append((op[len("aten::"):] if op.startswith("aten::") else op, _line_of(text, match.start())))
    return found


def source_files(directory: str) -> list[str]:
    files = []
    for folder, _, names in os.walk(directory):
        files.extend(os.path.join(folder, name) for name in names if name.endswith(SOURCE_EXTENSIONS))
    return sorted(files)


# ---- the launch device of each handwritten launch against the declared policy ----------

NO_DEVICE = "no launch device"  # no_launch_device(): the thread's current device
_LOCAL_QUALIFIERS = {"flagos", "hw", "detail"}
_DEVICE_EXEMPTION = re.compile(r"//\s*flagos-lint:\s*allow-launch-device\((?P<reason>[^)]*)\)")
_IMPL_CALL = re.compile(r"\b\w+\s*\.\s*impl\s*\(\s*\"([^\"]+)\"\s*,", re.ASCII)


@dataclass
class Source:
    """A source file as the lint reads it."""

    shown: str
    text: str
    code: str  # comments and string literals blanked
    functions: list[cpp.Function]

    def line(self, offset: int) -> int:
        return _line_of(self.text, offset)

    def exemption(self, line: int, pattern: re.Pattern) -> re.Match | None:
        lines = self.text.split("\n")
        for candidate in (line, line - 1):
            if 1 <= candidate <= len(lines):
                found = pattern.search(lines[candidate - 1])
                if found:
                    return found
        return None


def read_source(shown: str, text: str) -> Source:
    code = blank_comments(text, strings_too=True)
    return Source(shown, text, code, cpp.functions(code, shown))


@dataclass(frozen=True)
class GuardedLaunch:
    source: Source
    position: int
    device: str  # the device expression, as written
    operator: str

    @property
    def line(self) -> int:
        return self.source.line(self.position)


def guarded_launches(source: Source, function: cpp.Function) -> list[GuardedLaunch]:
    found = []
    for match in _LAUNCH_MACRO.finditer(source.code, function.start, function.end):
        open_ = match.end() - 1
        args = cpp.split_top(source.code[open_ + 1:cpp.matching(source.code, open_)])
        if len(args) >= 2:
            found.append(GuardedLaunch(source, match.start(), args[0], args[1]))
    return found


@dataclass
class Frame:
    """A function on a path from a registered kernel: how its parameters were bound."""

    source: Source
    function: cpp.Function
    bindings: dict  # parameter -> (caller Frame, argument expression, offset of the call)
    kernel_args: dict | None = None  # the kernel itself: C++ parameter -> schema argument


class DeviceTracer:
    """Which kernel arguments a launch's device expression comes from.

    The answer is a set of schema argument names, NO_DEVICE (no_launch_device(),
    an empty LaunchDevice) or `?<expression>` for what cannot be followed. An
    expression is followed through: launch_device_of(a, b) (each argument),
    on_launch_device(t, device) (the device), any other call (its first
    argument: empty_on(device, ...), pick(self, group), contiguous_on_device(src)),
    a ternary (both branches), member access and indexing (the object), locals
    (their initializers and assignments) and parameters (the argument at the
    call site on the path from the kernel, or the kernel's own argument)."""

    MAX_DEPTH = 24

    def __init__(self) -> None:
        self._active: set = set()

    def sources(self, expr: str, frame: Frame, position: int, depth: int = 0) -> frozenset[str]:
        expr = expr.strip()
        if depth > self.MAX_DEPTH or not expr:
            return frozenset({f"?{expr}"})
        while expr.startswith("(") and cpp.matching(expr, 0) == len(expr) - 1:
            expr = expr[1:-1].strip()
        parts = _ternary(expr)
        if parts:
            return self.sources(parts[0], frame, position, depth + 1) | self.sources(parts[1], frame, position, depth + 1)
        if expr in ("{}", "LaunchDevice{}", "LaunchDevice()", "flagos::LaunchDevice{}", "flagos::LaunchDevice()"):
            return frozenset({NO_DEVICE})
        if expr[0] in "*&":
            return self.sources(expr[1:], frame, position, depth + 1)
        head = re.match(r"((?:::)?(?:[A-Za-z_]\w*\s*::\s*)*)([A-Za-z_]\w*)\s*", expr, re.ASCII)
        if head is None:
            return frozenset({f"?{expr}"})
        qualifiers = {q.strip() for q in head.group(1).split("::") if q.strip()}
        name, rest = head.group(2), expr[head.end():]
        if rest.startswith("<") and name in ("static_cast", "const_cast", "reinterpret_cast"):
            rest = rest[cpp.matching(rest.replace("<", "(").replace(">", ")"), 0) + 1:].lstrip()
        if rest.startswith("("):
            close = cpp.matching(rest, 0)
            args = cpp.split_top(rest[1:close])
            if name == "no_launch_device" and not args:
                return frozenset({NO_DEVICE})
            if name == "launch_device_of":
                found = frozenset()
                for arg in args:
                    found |= self.sources(arg, frame, position, depth + 1)
                return found or frozenset({NO_DEVICE})
            if name == "on_launch_device" and len(args) == 2:
                return self.sources(args[1], frame, position, depth + 1)
            if name == "move" and qualifiers <= {"std"} and args:
                return self.sources(args[0], frame, position, depth + 1)
            if args:
                return self.sources(args[0], frame, position, depth + 1)
            return frozenset({f"?{expr}"})
        if rest and not rest.startswith((".", "->", "[")):
            return frozenset({f"?{expr}"})  # an operator expression: not a device
        if qualifiers - _LOCAL_QUALIFIERS:
            return frozenset({f"?{expr}"})
        return self.resolve(name, frame, position, depth + 1)

    def resolve(self, name: str, frame: Frame, position: int, depth: int) -> frozenset[str]:
        key = (id(frame), name, position)
        if key in self._active:
            return frozenset()
        self._active.add(key)
        try:
            definitions = cpp.definitions(frame.source.code, frame.function, name, position)
            if definitions:
                found = frozenset()
                for offset, init in definitions:
                    found |= self.sources(init, frame, offset, depth)
                return found
            if name in frame.function.params:
                if frame.kernel_args is not None:
                    arg = frame.kernel_args.get(name)
                    return frozenset({arg}) if arg else frozenset({f"?{name}"})
                if name in frame.bindings:
                    caller, arg, offset = frame.bindings[name]
                    return self.sources(arg, caller, offset, depth)
            return frozenset({f"?{name}"})
        finally:
            self._active.discard(key)


def _ternary(expr: str) -> tuple[str, str] | None:
    """The two branches of a top-level `cond ? a : b`, or None."""
    depth, question = 0, -1
    for index, char in enumerate(expr):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0 and char == "?" and question < 0:
            question = index
        elif depth == 0 and char == ":" and question >= 0 and expr[index - 1:index + 1] != "::" \
                and expr[index:index + 2] != "::":
            return expr[question + 1:index], expr[index + 1:]
    return None


def _walk(frame: Frame, table: dict, path: tuple, found: list) -> None:
    """Every guarded launch reachable from `frame`'s function, with the frame it runs in."""
    for launch in guarded_launches(frame.source, frame.function):
        found.append((launch, frame))
    if len(path) > DeviceTracer.MAX_DEPTH:
        return
    for call in cpp.calls(frame.source.code, frame.function, set(table), _LOCAL_QUALIFIERS):
        for source, function in table.get(call.name, ()):
            if id(function) in path or len(call.args) > len(function.params):
                continue
            bindings = {param: (frame, arg, call.position)
                        for param, arg in zip(function.params, call.args) if param is not None}
            _walk(Frame(source, function, bindings), table, path + (id(function),), found)


def _describe(sources: frozenset[str]) -> str:
    named = sorted(s for s in sources if not s.startswith("?") and s != NO_DEVICE)
    parts = [f"the device of {', '.join(f'`{n}`' for n in named)}"] if named else []
    if NO_DEVICE in sources:
        parts.append("no launch device (the thread's current device)")
    parts += [f"`{s[1:]}`, which the lint cannot trace to an argument" for s in sorted(sources) if s.startswith("?")]
    return " and ".join(parts) or "no device"


def _policy_problem(entry: HandwrittenEntry, schema: OpSchema, sources: frozenset[str]) -> str | None:
    """Why a launch on `sources` contradicts the entry's declared guard, or None."""
    policy = entry.policy
    untraced = any(s.startswith("?") for s in sources)
    if policy.guard is Guard.NONE:
        return "declares guard none, so it launches nothing guarded"
    if untraced:
        return "the lint cannot tell which argument the launch device comes from"
    if policy.guard is Guard.FIRST_TENSOR:
        tensors = set(schema.first_tensor_candidates())
        if NO_DEVICE in sources or not sources or not sources <= tensors:
            return f"declares guard first-tensor (a device from {', '.join(sorted(tensors))})"
        return None
    if sources != {policy.guard_arg}:
        return f"declares guard explicit-arg `{policy.guard_arg}`"
    return None


def _kernels(source: Source) -> list[tuple[str, str, int]]:
    """(op, kernel function name, offset) of each m.impl("<op>", TORCH_FN(<kernel>)) in the file;
    the name is "" when the kernel is not a function of this file (a lambda, at::native::...)."""
    code = blank_comments(source.text, strings_too=False)
    found = []
    for match in _IMPL_CALL.finditer(code):
        op = match.group(1)
        op = op[len("aten::"):] if op.startswith("aten::") else op
        open_ = code.rfind("(", 0, match.end())
        args = cpp.split_top(code[open_ + 1:cpp.matching(code, open_)])
        target = args[1] if len(args) > 1 else ""
        inner = re.fullmatch(r"TORCH_FN\s*\((.*)\)", target, re.DOTALL)
        target = (inner.group(1) if inner else target).strip().lstrip("&").strip()
        parts = [p.strip() for p in target.split("::")]
        name = parts[-1] if re.fullmatch(r"[A-Za-z_]\w*", parts[-1] or "") and \
            set(p for p in parts[:-1] if p) <= _LOCAL_QUALIFIERS else ""
        found.append((op, name, match.start()))
    return found


def check_policies(registry: Registry, schemas, root: str, sources: dict[str, Source],
                   helpers: list[Source], show) -> list[LintProblem]:
    """Each handwritten op's guarded launches against its declared guard/guard_arg."""
    problems = []
    reported = set()
    for entry in registry.handwritten:
        source = sources.get(show(os.path.join(root, entry.file)))
        schema = schemas.get(entry.op)
        if source is None or schema is None:
            continue
        table: dict[str, list] = {}
        for owner in [source, *helpers]:
            for function in owner.functions:
                table.setdefault(function.name, []).append((owner, function))
        for op, name, offset in _kernels(source):
            if op != entry.op or not name:
                continue
            candidates = [f for f in source.functions if f.name == name]
            kernel = next((f for f in candidates if len(f.params) == len(schema.arguments)), None)
            if kernel is None:
                problems.append(LintProblem(
                    Location(source.shown, source.line(offset)),
                    f"{op}: cannot find its kernel `{name}({len(schema.arguments)} parameters)` in {source.shown}",
                    "register a function defined in this file, with the op's parameters in schema order"))
                continue
            kernel_args = {param: arg.name for param, arg in zip(kernel.params, schema.arguments) if param}
            found: list = []
            _walk(Frame(source, kernel, {}, kernel_args), table, (id(kernel),), found)
            tracer = DeviceTracer()
            for launch, frame in found:
                exemption = launch.source.exemption(launch.line, _DEVICE_EXEMPTION)
                if exemption is not None and exemption.group("reason").strip():
                    continue
                where = f"{launch.source.shown}:{launch.line}"
                if exemption is not None:
                    key = (where, "reason")
                    if key not in reported:
                        reported.add(key)
                        problems.append(LintProblem(Location(launch.source.shown, launch.line),
                                                    "the allow-launch-device exemption gives no reason",
                                                    "write `// flagos-lint: allow-launch-device(<why this launch "
                                                    "runs on another device than its op's policy>)`"))
                    continue
                sources_found = tracer.sources(launch.device, frame, launch.position)
                why = _policy_problem(entry, schema, sources_found)
                if why is None or (op, where) in reported:
                    continue
                reported.add((op, where))
                problems.append(LintProblem(
                    Location(launch.source.shown, launch.line),
                    f"{op} {why} (at {entry.loc}), but its kernel `{kernel.name}` launches {launch.operator} "
                    f"on {_describe(sources_found)}",
                    _policy_fix(entry, schema, sources_found)))
    return problems


def _policy_fix(entry: HandwrittenEntry, schema: OpSchema, sources: frozenset[str]) -> str:
    named = sorted(s for s in sources if not s.startswith("?") and s != NO_DEVICE)
    tensors = set(schema.first_tensor_candidates())
    if any(s.startswith("?") for s in sources):
        declared = "declared guard" + (f"'s argument `{entry.policy.guard_arg}`" if entry.policy.guard_arg else "")
        return (f"compute the launch device with launch_device_of(<arguments>) from the kernel's arguments "
                f"({declared}), or mark a deliberate exception `// flagos-lint: allow-launch-device(<reason>)`")
    if len(named) == 1 and NO_DEVICE not in sources:
        suggestion = f"`guard: explicit-arg` with `guard_arg: {named[0]}`"
    elif named and NO_DEVICE not in sources and set(named) <= tensors:
        suggestion = "`guard: first-tensor`"
    else:
        suggestion = "the policy the kernel implements"
    return (f"declare {suggestion} in yaml/handwritten.yaml, or launch on the declared device, or mark a "
            "deliberate exception `// flagos-lint: allow-launch-device(<reason>)` on the launch")


def lint_handwritten(registry: Registry, root: str, handwritten_dir: str, show, schemas=None) -> list[LintProblem]:
    """Every lint problem of csrc/handwritten/ against yaml/handwritten.yaml."""
    schemas = schemas or aten_schemas()
    problems: list[LintProblem] = []
    generated = {entry.op: entry.loc for entry in registry.ops}
    listed = {entry.op: entry for entry in registry.handwritten}
    registered: dict[str, set[str]] = {}  # shown file -> ops it registers
    sources: dict[str, Source] = {}
    for path in source_files(handwritten_dir) if os.path.isdir(handwritten_dir) else []:
        shown = show(path)
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        sources[shown] = read_source(shown, text)
        problems += raw_launches(shown, text)
        for op, line in registrations(text):
            registered.setdefault(shown, set()).add(op)
            entry = listed.get(op)
            if entry is not None and show(os.path.join(root, entry.file)) == shown:
                continue
            if entry is not None:
                message = f"registers {op}, which yaml/handwritten.yaml lists with file {entry.file}"
                fix = f"set `file: {shown}` in its entry at {entry.loc}"
            elif op in generated:
                message = f"registers {op}, which is generated (at {generated[op]})"
                fix = "remove the generated entry and list the op in yaml/handwritten.yaml, or drop this m.impl"
            else:
                message = f"registers {op}, which yaml/handwritten.yaml does not list"
                fix = f"add `- op: {op}` with its guard and `file: {shown}` to yaml/handwritten.yaml"
            problems.append(LintProblem(Location(shown, line), message, fix))
    for entry in registry.handwritten:
        path = os.path.join(root, entry.file)
        shown = show(path)
        if not os.path.isfile(path):
            problems.append(LintProblem(entry.loc, f"{entry.op}: file {entry.file} does not exist",
                                        "fix `file:` or write the kernel"))
        elif entry.op not in registered.get(shown, set()):
            problems.append(LintProblem(entry.loc, f"{entry.op} is not registered in {entry.file}",
                                        f'add m.impl("{entry.op}", TORCH_FN(...)) to its TORCH_LIBRARY_IMPL block'))
    helpers = [source for shown, source in sources.items() if shown.endswith((".h", ".hh", ".hpp"))]
    problems += check_policies(registry, schemas, root, sources, helpers, show)
    return sorted(problems)
