"""The kernel lint (run by --check): no ACLNN launch around FLAGOS_GUARDED_LAUNCH.

Every file of csrc/ but the simulator (csrc/sim/, which implements the
operators) and the generator's own output (csrc/generated/, which --check
compares byte for byte with what the generator writes) is read after the
preprocessor's first phases (line splices joined, comments and literals
blanked, digraphs spelled out) and fails, with file:line, when it

  - names an ACLNN operator (`aclnnX`, or the fragment `aclnn`) anywhere but
    as the operator of FLAGOS_GUARDED_LAUNCH(device, aclnnX, ...), in an
    unevaluated operand (decltype, sizeof, noexcept, alignof, typeid) or as
    a type of the generated traits (flagos::aclnn::aclnnX): a call, a
    pointer, a macro argument, a using-declaration all count;
  - names an ACLNN symbol in a string literal (a lookup by name);
  - resolves symbols by name (opapi_symbol, dlsym, dlopen) or uses the
    launch path's internals (flagos::launch<...>, OpApi, run_launch, the
    guard switch) outside csrc/runtime/launch.h, the headers it includes and
    their implementations;
  - pastes tokens (`##`, C10_CONCATENATE), defines or undefines
    FLAGOS_GUARDED_LAUNCH, defines any macro in a kernel file, includes a
    file outside the scanned tree, or registers a kernel under an op name
    that is not a string literal.
The first two accept `// flagos-lint: allow-raw-launch(<reason>)` on the
line or the line above. Files of csrc/handwritten/ also fail when they
  - register an op (m.impl("<op>", ...)) that yaml/handwritten.yaml does not
    list for that file; or when an op listed there is not registered in its file;
  - launch, from the kernel they register for an op, on another device than
    the op's declared guard/guard_arg (check_policies; docs/codegen.md).
"""

from __future__ import annotations

import bisect
import functools
import os
import re
from dataclasses import dataclass, field

from codegen import cpp
from codegen.model import Guard, HandwrittenEntry, Location, Registry
from codegen.schemas import OpSchema, aten_schemas

SOURCE_EXTENSIONS = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp")

_ACLNN = re.compile(r"\baclnn[A-Za-z0-9_]*", re.ASCII)
_NOT_OPERATORS = {"aclnnStatus"}  # the status type, not an operator
_UNEVALUATED = {"decltype", "sizeof", "alignof", "noexcept", "typeid", "__typeof__", "typeof", "__alignof__"}
_LAUNCH_MACRO = re.compile(r"\bFLAGOS_GUARDED_LAUNCH\s*\(")
_IMPL = re.compile(r"\b\w+\s*\.\s*impl\s*\(\s*\"([^\"]+)\"")
_EXEMPTION = re.compile(r"//\s*flagos-lint:\s*allow-raw-launch\((?P<reason>[^)]*)\)")
_RAW_STRING = re.compile(r'(?:u8|u|U|L)?R"([^ ()\\\t\v\f\n]{0,16})\(')

# What only the launch path itself may use, by file (relative to csrc/).
_RESOLVERS = re.compile(r"\b(opapi_symbol|dlsym|dlvsym|dlopen|dlmopen)\b")
_INTERNALS = re.compile(r"\b(OpApi|launch_with|run_launch|LaunchRecord|BoundArgs|PhaseOneCall|PhaseTwoFn|"
                        r"PhaseOneParams|visit_argument|set_guards_enabled|guards_enabled)\b|\blaunch\s*<")
_GUARD_SWITCH = {"set_guards_enabled", "guards_enabled"}
_PASTING = re.compile(r"##|\b(C10_CONCATENATE|C10_CONCATENATE_IMPL|BOOST_PP_CAT)\b")
_ALLOWED = {
    "runtime/launch.h": {"everything"},  # the one sanctioned launch path
    "runtime/launch.cc": {"internals"},
    "runtime/launch_device.h": {"internals"},  # the guards and their diagnostic switch
    "runtime/launch_device.cc": {"internals"},
    "runtime/acl_args.h": {"internals"},  # the launch record and the argument objects
    "runtime/acl_args.cc": {"internals"},
    "runtime/executor_cache.h": {"internals"},  # keeps the argument objects of cached executors
    "runtime/executor_cache.cc": {"internals"},
    "runtime/opapi.cc": {"resolvers"},  # implements opapi_symbol
    "runtime/opapi.h": {"resolvers"},  # declares it
    "python/module.cc": {"guard switch"},  # the diagnostic binding
}


@dataclass(frozen=True, order=True)
class LintProblem:
    loc: Location
    message: str
    fix: str

    def __str__(self) -> str:
        return f"{self.loc}: {self.message}\n    fix: {self.fix}"


# ---- reading a source file as the compiler does ---------------------------------


_LEXEME = re.compile(r"""//|/\*|["']|(?<![A-Za-z0-9_])(?:u8|u|U|L)?R"(?=[^ ()\\\t\v\f\n]{0,16}\()""")
_QUOTED = {'"': re.compile(r'"(?:[^"\\\n]|\\[\s\S])*"?'), "'": re.compile(r"'(?:[^'\\\n]|\\[\s\S])*'?")}


@functools.lru_cache(maxsize=128)
def _literals_and_comments(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(comment spans, literal spans) of `text`: // and /* */ comments; string, raw string
    and character literals (a `'` inside a number is a digit separator, not a literal)."""
    comments, literals = [], []
    i, n = 0, len(text)
    while True:
        match = _LEXEME.search(text, i)
        if match is None:
            return comments, literals
        i = match.start()
        lexeme = match.group(0)
        if lexeme == "//":
            end = text.find("\n", i)
            end = n if end < 0 else end
            comments.append((i, end))
        elif lexeme == "/*":
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            comments.append((i, end))
        elif lexeme.endswith('R"'):
            raw = _RAW_STRING.match(text, i)
            close = text.find(")" + raw.group(1) + '"', raw.end())
            end = n if close < 0 else close + len(raw.group(1)) + 2
            literals.append((i, end))
        else:
            previous = text[i - 1] if i else ""
            if lexeme == "'" and (previous.isalnum() or previous == "_"):
                word = re.search(r"[A-Za-z0-9_]+$", text[max(0, i - 64):i]).group(0)
                if word not in ("u8", "u", "U", "L"):
                    i += 1  # a digit separator: 1'000'000
                    continue
            end = _QUOTED[lexeme].match(text, i).end()
            literals.append((i, end))
        i = max(end, i + 1)


def _blank(text: str, spans: list[tuple[int, int]], out: list[str]) -> None:
    for start, end in spans:
        for j in range(start, end):
            if text[j] != "\n":
                out[j] = " "


def blank_comments(text: str, strings_too: bool) -> str:
    """`text` with comments (and string and character literals) replaced by spaces; offsets and lines kept."""
    comments, literals = _literals_and_comments(text)
    out = list(text)
    _blank(text, comments + (literals if strings_too else []), out)
    return "".join(out)


_DIGRAPHS = re.compile(r"%:%:|%:|<%|%>")
_DIGRAPH_SPELLING = {"%:%:": "##  ", "%:": "# ", "<%": "{ ", "%>": "} "}


@dataclass
class Lexed:
    """A source after the preprocessor's first phases, with a way back to its lines."""

    text: str  # as written
    spliced: str  # backslash-newlines joined, as the compiler reads it
    origin: list[int]  # offset in `spliced` -> offset in `text`
    code: str  # `spliced` with comments and literals blanked, digraphs spelled out
    literals: list[tuple[int, int]]  # string and character literals in `spliced`
    newlines: list[int] = field(default_factory=list)

    def line(self, offset: int) -> int:
        """The line of `text` that offset `offset` of `spliced` comes from."""
        original = self.origin[min(max(offset, 0), len(self.origin) - 1)]
        return bisect.bisect_right(self.newlines, original - 1) + 1 if self.newlines else 1


@functools.lru_cache(maxsize=128)
def lex(text: str) -> Lexed:
    pieces, origin, last = [], [], 0
    for splice in re.finditer(r"\\[ \t]*\n", text):
        pieces.append(text[last:splice.start()])
        origin.extend(range(last, splice.start()))
        last = splice.end()
    pieces.append(text[last:])
    origin.extend(range(last, len(text) + 1))
    spliced = "".join(pieces)
    comments, literals = _literals_and_comments(spliced)
    out = list(spliced)
    _blank(spliced, comments + literals, out)
    code = _DIGRAPHS.sub(lambda m: _DIGRAPH_SPELLING[m.group(0)], "".join(out))
    newlines = [index for index, char in enumerate(text) if char == "\n"]
    return Lexed(text, spliced, origin, code, literals, newlines)


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


def _directive_spans(code: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of each preprocessor directive (splices already joined)."""
    return [(m.start(), m.end(), m.group(0)) for m in re.finditer(r"(?m)^[ \t]*#[^\n]*", code)]


def _in_unevaluated_operand(code: str, offset: int) -> bool:
    """Whether `offset` lies inside decltype(...), sizeof(...) and the like."""
    depth = 0
    for index in range(offset - 1, -1, -1):
        char = code[index]
        if char in ")]":
            depth += 1
        elif char in "([":
            if depth:
                depth -= 1
                continue
            if char == "(":
                word = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*$", code[:index])
                if word and word.group(1) in _UNEVALUATED:
                    return True
        elif char in ";{}" and depth == 0:
            return False
    return False


def _exempt(lexed: Lexed, line: int) -> re.Match | None:
    lines = lexed.text.split("\n")
    for candidate in (line, line - 1):
        if 1 <= candidate <= len(lines):
            found = _EXEMPTION.search(lines[candidate - 1])
            if found:
                return found
    return None


def _operator_of(name: str) -> str:
    """The operator whose entry point `name` is: aclnnX for aclnnXGetWorkspaceSize."""
    return name[: -len("GetWorkspaceSize")] if name.endswith("GetWorkspaceSize") and name != "GetWorkspaceSize" else name


def raw_launches(path_shown: str, text: str) -> list[LintProblem]:
    """ACLNN operators named outside FLAGOS_GUARDED_LAUNCH (or a type-only use) in one source file."""
    lexed = lex(text)
    code = lexed.code
    allowed = _launch_operand_spans(code)
    includes = [(start, end) for start, end, directive in _directive_spans(code)
                if re.match(r"\s*#\s*include\b", directive)]
    problems = []
    for match in _ACLNN.finditer(code):
        name = match.group(0)
        if name in _NOT_OPERATORS:
            continue
        if any(start <= match.start() and match.end() <= end and code[start:end].strip() == name
               for start, end in allowed):
            continue  # FLAGOS_GUARDED_LAUNCH(device, aclnnX, ...)
        if any(start <= match.start() < end for start, end in includes):
            continue  # #include <flagos/aclnn/aclnnX.h>
        after = code[match.end():].lstrip()
        before = code[:match.start()].rstrip()
        if name == "aclnn" and after.startswith("::") and not after[2:].lstrip().startswith("("):
            continue  # the traits' namespace: flagos::aclnn::
        if re.search(r"\baclnn\s*::$", before) and not after.startswith("("):
            continue  # a trait type: flagos::aclnn::aclnnX::output_mask
        if _in_unevaluated_operand(code, match.start()):
            continue  # decltype(&aclnnXGetWorkspaceSize)
        line = lexed.line(match.start())
        exemption = _exempt(lexed, line)
        if exemption is not None and exemption.group("reason").strip():
            continue
        operator = _operator_of(name)
        if exemption is not None:
            problems.append(LintProblem(Location(path_shown, line),
                                        f"{name}: the allow-raw-launch exemption gives no reason",
                                        "write `// flagos-lint: allow-raw-launch(<why this launch needs no guard>)`"))
        elif name == "aclnn" or not re.fullmatch(r"aclnn[A-Z]\w*", name):
            problems.append(LintProblem(
                Location(path_shown, line),
                f"builds an ACLNN operator name from the fragment `{name}`: a launch the lint cannot see",
                "name the operator in full as the operator of FLAGOS_GUARDED_LAUNCH(<launch device>, aclnnX, ...)"))
        else:
            how = "calls" if after.startswith("(") else "uses"
            problems.append(LintProblem(
                Location(path_shown, line),
                f"{how} ACLNN operator {name} outside FLAGOS_GUARDED_LAUNCH: it would launch on whatever device "
                "is current",
                f"launch it as FLAGOS_GUARDED_LAUNCH(<launch device>, {operator}, <its arguments>), or mark a "
                "deliberate raw launch with `// flagos-lint: allow-raw-launch(<reason>)`"))
    return problems


def evasions(path_shown: str, relative: str, text: str) -> list[LintProblem]:
    """Ways around FLAGOS_GUARDED_LAUNCH that name no operator where raw_launches looks: lookups
    by name, the launch path's internals, token pasting, macros, includes of unscanned code,
    registrations under computed names. `relative` is the path under csrc/."""
    allowed = _ALLOWED.get(relative, set())
    if "everything" in allowed:
        return []
    lexed = lex(text)
    code = lexed.code
    problems = []

    def report(offset: int, message: str, fix: str) -> None:
        problems.append(LintProblem(Location(path_shown, lexed.line(offset)), message, fix))

    directives = _directive_spans(code)
    for start, end in lexed.literals:
        literal = lexed.spliced[start:end]
        if "aclnn" not in literal or any(d_start <= start < d_end and re.match(r"\s*#\s*include", d)
                                         for d_start, d_end, d in directives):
            continue
        line = lexed.line(start)
        exemption = _exempt(lexed, line)
        if exemption is not None and exemption.group("reason").strip():
            continue
        report(start, f"names an ACLNN symbol in a string ({literal[:60]}): a lookup by name would launch around "
               "FLAGOS_GUARDED_LAUNCH",
               "launch with FLAGOS_GUARDED_LAUNCH(<launch device>, aclnnX, ...): only csrc/runtime/launch.h resolves "
               "entry points by name (or mark a mere mention `// flagos-lint: allow-raw-launch(<reason>)`)")
    if "resolvers" not in allowed:
        for match in _RESOLVERS.finditer(code):
            report(match.start(), f"resolves symbols by name (`{match.group(1)}`) outside the launch path",
                   "launch with FLAGOS_GUARDED_LAUNCH(<launch device>, aclnnX, ...): only csrc/runtime/launch.h "
                   "looks ACLNN entry points up")
    for match in _INTERNALS.finditer(code):
        name = match.group(1) or "launch<...>"
        if "internals" in allowed or ("guard switch" in allowed and name in _GUARD_SWITCH):
            continue
        report(match.start(), f"uses the launch path's internals (`{name}`): a launch through them skips the guard "
               "or its checks", "launch with FLAGOS_GUARDED_LAUNCH(<launch device>, aclnnX, ...)")
    for match in _PASTING.finditer(code):
        report(match.start(), f"pastes tokens (`{match.group(0)}`): a pasted name can be an ACLNN entry point the "
               "lint cannot see", "write identifiers out; launch with FLAGOS_GUARDED_LAUNCH(<device>, aclnnX, ...)")
    kernel = relative.startswith("handwritten/")
    for start, _, directive in directives:
        macro = re.match(r"\s*#\s*(define|undef)\s+([A-Za-z_]\w*)", directive)
        if macro and (macro.group(2) == "FLAGOS_GUARDED_LAUNCH" or kernel or not macro.group(2).startswith("FLAGOS_")):
            what = "redefines the launch macro" if macro.group(2) == "FLAGOS_GUARDED_LAUNCH" else \
                f"defines a macro (`{macro.group(2)}`)"
            report(start, f"{what}: a macro can rename what the lint reads (the launch, its device, an operator)",
                   "write the code out; kernels define no macros, and the backend's own are named FLAGOS_* "
                   "(never FLAGOS_GUARDED_LAUNCH outside csrc/runtime/launch.h)")
        include = re.match(r"\s*#\s*include\s*(.*)", directive)
        if include:
            target = lexed.spliced[start:start + len(directive)]
            target = re.sub(r"^\s*#\s*include\s*", "", target).split("//")[0].strip()
            path = target[1:-1] if len(target) > 1 and target[0] + target[-1] in ('""', "<>") else None
            if path is None or ".." in path.split("/") or path.startswith(("/", "sim/")):
                report(start, f"includes {target or 'a computed file'}: code outside the files the lint reads",
                       "include headers by their path under csrc/ (\"runtime/launch.h\") or system headers")
    strings_kept = blank_comments(lexed.spliced, strings_too=False)
    for match in re.finditer(r"(\.|->)\s*impl\s*\(", strings_kept):
        if not strings_kept[match.end():].lstrip().startswith('"'):
            report(match.start(), "registers a kernel under an op name that is not a string literal",
                   'write the op\'s name as a literal: m.impl("<op>", TORCH_FN(<kernel>))')
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
    code: str  # as the compiler reads it, comments and literals blanked (Lexed.code)
    functions: list[cpp.Function]
    lexed: Lexed

    def line(self, offset: int) -> int:
        return self.lexed.line(offset)

    def exemption(self, line: int, pattern: re.Pattern) -> re.Match | None:
        lines = self.text.split("\n")
        for candidate in (line, line - 1):
            if 1 <= candidate <= len(lines):
                found = pattern.search(lines[candidate - 1])
                if found:
                    return found
        return None


def read_source(shown: str, text: str) -> Source:
    lexed = lex(text)
    code = re.sub(r"(?m)^[ \t]*#[^\n]*", lambda m: " " * len(m.group(0)), lexed.code)  # directives
    return Source(shown, text, code, cpp.functions(code, shown), lexed)


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
    """The FLAGOS_GUARDED_LAUNCHes in `function`'s body. (A raw launch is raw_launches' business:
    it fails unless `allow-raw-launch(<reason>)` documents it.)"""
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
        key = (id(frame), name)
        if key in self._active:
            return frozenset()
        self._active.add(key)
        try:
            # Every definition in the function, not only those before the use: a loop may
            # reassign the device after the launch, for the next iteration. A parameter
            # keeps its argument as well as whatever is assigned to it.
            found = frozenset()
            for offset, init in cpp.definitions(frame.source.code, frame.function, name, frame.function.end):
                found |= self.sources(init, frame, offset, depth)
            if name in frame.function.params:
                if frame.kernel_args is not None:
                    arg = frame.kernel_args.get(name)
                    found |= frozenset({arg}) if arg else frozenset({f"?{name}"})
                elif name in frame.bindings:
                    caller, arg, offset = frame.bindings[name]
                    found |= self.sources(arg, caller, offset, depth)
                else:
                    found |= frozenset({f"?{name}"})  # a defaulted parameter
                return found
            return found or frozenset({f"?{name}"})
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


@functools.lru_cache(maxsize=64)
def _kernels(text: str) -> list[tuple[str, str, int]]:
    """(op, kernel function name, line) of each m.impl("<op>", TORCH_FN(<kernel>)) in a file;
    the name is "" when the kernel is not a function of this file (a lambda, at::native::...)."""
    code = blank_comments(text, strings_too=False)
    found = []
    for match in _IMPL_CALL.finditer(code):
        op = match.group(1)
        op = op[len("aten::"):] if op.startswith("aten::") else op
        open_ = code.rfind("(", 0, match.end())
        args = cpp.split_top(code[open_ + 1:cpp.matching(code, open_)])
        # (split_top does not pair angle brackets: rejoin the template's commas)
        target = ",".join(args[1:]).strip() if len(args) > 1 else ""
        inner = re.fullmatch(r"TORCH_FN\s*\((.*)\)", target, re.DOTALL) or \
            re.fullmatch(r'(?:flagos::)?with_dtype_fallback\s*<\s*"[^"]*"\s*,(.*)>\s*\(\s*\)', target, re.DOTALL)
        target = (inner.group(1) if inner else target).strip().lstrip("&").strip()
        parts = [p.strip() for p in target.split("::")]
        name = parts[-1] if re.fullmatch(r"[A-Za-z_]\w*", parts[-1] or "") and \
            set(p for p in parts[:-1] if p) <= _LOCAL_QUALIFIERS else ""
        found.append((op, name, _line_of(text, match.start())))
    return found


def check_policies(registry: Registry, schemas, root: str, sources: dict[str, Source],
                   helpers: list[Source], show, reached: set | None = None) -> list[LintProblem]:
    """Each handwritten op's launches against its declared guard/guard_arg; the launches
    reached from a kernel go to `reached` as (file, offset)."""
    problems = []
    reported = set()
    reached = reached if reached is not None else set()
    bodies_done = set()
    for entry in registry.handwritten:
        source = sources.get(show(os.path.join(root, entry.file)))
        schema = schemas.get(entry.op)
        if source is None or schema is None:
            continue
        table: dict[str, list] = {}
        for owner in [source, *helpers]:
            for function in owner.functions:
                table.setdefault(function.name, []).append((owner, function))
        if entry.impl is not None:
            if entry.impl not in bodies_done:
                bodies_done.add(entry.impl)
                problems += _check_body(entry, source, table, reached)
            continue
        for op, name, line in _kernels(source.text):
            if op != entry.op or not name:
                continue
            candidates = [f for f in source.functions if f.name == name]
            kernel = next((f for f in candidates if len(f.params) == len(schema.arguments)), None)
            if kernel is None:
                problems.append(LintProblem(
                    Location(source.shown, line),
                    f"{op}: cannot find its kernel `{name}({len(schema.arguments)} parameters)` in {source.shown}",
                    "register a function defined in this file, with the op's parameters in schema order"))
                continue
            kernel_args = {param: arg.name for param, arg in zip(kernel.params, schema.arguments) if param}
            for launch, sources_found in _traced_launches(source, kernel, kernel_args, table, reached, reported,
                                                          problems):
                where = f"{launch.source.shown}:{launch.line}"
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


def _traced_launches(source, function, args: dict, table, reached: set, reported: set, problems: list):
    """The launches reached from `function` (its parameters named by `args`), each with the
    arguments its device traces back to; launches exempted with a reason are left out, and an
    exemption without one is a problem."""
    found: list = []
    _walk(Frame(source, function, {}, args), table, (id(function),), found)
    tracer = DeviceTracer()
    for launch, frame in found:
        reached.add((launch.source.shown, launch.position))
        exemption = launch.source.exemption(launch.line, _DEVICE_EXEMPTION)
        if exemption is not None and exemption.group("reason").strip():
            continue
        if exemption is not None:
            key = (f"{launch.source.shown}:{launch.line}", "reason")
            if key not in reported:
                reported.add(key)
                problems.append(LintProblem(Location(launch.source.shown, launch.line),
                                            "the allow-launch-device exemption gives no reason",
                                            "write `// flagos-lint: allow-launch-device(<why this launch "
                                            "runs on another device than its op's policy>)`"))
            continue
        yield launch, tracer.sources(launch.device, frame, launch.position)


def _check_body(entry: HandwrittenEntry, source, table, reached: set) -> list[LintProblem]:
    """A structured op's body launches on the device its generated wrapper passes (its first
    parameter); the wrapper applies the op's declared policy."""
    problems: list = []
    for body in (f for f in source.functions if f.name == entry.impl and f.params and f.params[0]):
        params = {param: param for param in body.params[1:] if param}
        params[body.params[0]] = _BODY_DEVICE
        for launch, sources_found in _traced_launches(source, body, params, table, reached, set(), problems):
            if sources_found != frozenset({_BODY_DEVICE}):
                problems.append(LintProblem(
                    Location(launch.source.shown, launch.line),
                    f"the body flagos::impl::{entry.impl} launches {launch.operator} on {_describe(sources_found)}, "
                    f"not on the launch device its wrapper passes (`{body.params[0]}`)",
                    f"launch on `{body.params[0]}`: the generated wrapper resolved it from {entry.op}'s policy"))
    return problems


_BODY_DEVICE = "the wrapper's launch device"


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
    """Every lint problem of csrc/ (launches around the guard) and of csrc/handwritten/ against
    yaml/handwritten.yaml (registrations, declared policies)."""
    schemas = schemas or aten_schemas()
    problems: list[LintProblem] = []
    csrc = os.path.join(root, "csrc")
    scanned: dict[str, str] = {}  # path -> its path under csrc/
    for path in source_files(csrc) if os.path.isdir(csrc) else []:
        relative = os.path.relpath(path, csrc).replace(os.sep, "/")
        if not relative.startswith(("sim/", "generated/", "include/flagos/aclnn/")):  # the last two: our output
            scanned[path] = relative
    for path in source_files(handwritten_dir) if os.path.isdir(handwritten_dir) else []:
        scanned[path] = "handwritten/" + os.path.relpath(path, handwritten_dir).replace(os.sep, "/")
    texts = {}
    for path, relative in sorted(scanned.items()):
        with open(path, encoding="utf-8", errors="replace") as handle:
            texts[path] = handle.read()
        if _ALLOWED.get(relative) != {"everything"}:
            problems += raw_launches(show(path), texts[path])
        problems += evasions(show(path), relative, texts[path])

    generated = {entry.op: entry.loc for entry in registry.ops}
    listed = {entry.op: entry for entry in registry.handwritten}
    registered: dict[str, set[str]] = {}  # shown file -> ops it registers
    sources: dict[str, Source] = {}
    for path in source_files(handwritten_dir) if os.path.isdir(handwritten_dir) else []:
        shown = show(path)
        text = texts[path]
        sources[shown] = read_source(shown, text)
        for op, line in registrations(text):
            registered.setdefault(shown, set()).add(op)
            entry = listed.get(op)
            if entry is not None and entry.impl is not None:
                message = f"registers {op}, whose wrapper the generator writes and registers (impl: {entry.impl})"
                fix = f"remove this m.impl: the file defines only the body flagos::impl::{entry.impl}"
            elif entry is not None and show(os.path.join(root, entry.file)) == shown:
                continue
            elif entry is not None:
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
        elif entry.impl is not None:
            if not any(f.name == entry.impl and f.params and f.params[0] for f in sources[shown].functions):
                problems.append(LintProblem(entry.loc, f"{entry.op}: {entry.file} does not define its body "
                                            f"flagos::impl::{entry.impl}",
                                            f"define it as generated/impls.h declares it, in namespace flagos::impl"))
        elif entry.op not in registered.get(shown, set()):
            problems.append(LintProblem(entry.loc, f"{entry.op} is not registered in {entry.file}",
                                        f'add m.impl("{entry.op}", TORCH_FN(...)) to its TORCH_LIBRARY_IMPL block'))
    helpers = [source for shown, source in sources.items() if shown.endswith((".h", ".hh", ".hpp"))]
    reached: set = set()
    problems += check_policies(registry, schemas, root, sources, helpers, show, reached)
    for shown, source in sources.items():
        for function in source.functions:
            for launch in guarded_launches(source, function):
                if (shown, launch.position) not in reached:
                    problems.append(LintProblem(
                        Location(shown, launch.line),
                        f"launches {launch.operator} from `{function.name}`, which no registered kernel calls: no "
                        "declared policy checks its device",
                        "call it directly from the kernels that need it (not through a pointer), or remove it"))
    return sorted(set(problems))
