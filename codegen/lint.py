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
line or the line above. Every file also fails when it registers an op
(m.impl, or a TORCH_LIBRARY_IMPL / TORCH_LIBRARY block of an op namespace):
the generator writes every op's registration from the registry. A boxed
fallback (`TORCH_LIBRARY_IMPL(_, Key, m) { m.fallback(...); }`) is no op's
kernel and stays. Files of csrc/handwritten/ also fail when they
  - register an op (m.impl("<op>", ...)): the generator writes every
    registration; or when the body an op of yaml/handwritten.yaml names
    (`impl:`) is not defined in its file, launch device first;
  - launch on another device than a LaunchDevice parameter of the function
    the launch is in, or make a launch device of their own (launch_device_of,
    no_launch_device): the generated wrapper resolves it from the op's policy
    and passes it to the body (check_launch_devices; docs/codegen.md).
"""

from __future__ import annotations

import bisect
import functools
import os
import re
from dataclasses import dataclass, field

from codegen import cpp
from codegen.model import Location, Registry

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


_LIBRARY = re.compile(r"\b(TORCH_LIBRARY(?:_IMPL|_FRAGMENT)?)\s*\(\s*(\w+)", re.ASCII)
_REGISTRY_FIX = ("list the op in the registry, which generates its registration (yaml/aten.yaml: ATen's own kernel "
                 "or a body that launches nothing; yaml/composite.yaml: a composite guard; yaml/handwritten.yaml or "
                 "yaml/ops/: a kernel), and remove the registration")


def registrations_outside_generator(path_shown: str, text: str, ops_too: bool = True) -> list[LintProblem]:
    """Op registrations in a file the generator did not write: its m.impl calls (unless
    `ops_too` is false: csrc/handwritten/ reports them against yaml/handwritten.yaml) and its
    library blocks other than a fallback's (TORCH_LIBRARY_IMPL(_, ...))."""
    problems = []
    if ops_too:
        for op, line in registrations(text):
            problems.append(LintProblem(Location(path_shown, line), f"registers {op} outside csrc/generated/: the "
                                        "generator writes every op's registration", _REGISTRY_FIX))
    lexed = lex(text)
    for match in _LIBRARY.finditer(lexed.code):
        macro, namespace = match.groups()
        if macro == "TORCH_LIBRARY_IMPL" and namespace == "_":
            continue
        problems.append(LintProblem(Location(path_shown, lexed.line(match.start())),
                                    f"{macro}({namespace}, ...) outside csrc/generated/: the generator writes every "
                                    "op's registration (only a boxed fallback, TORCH_LIBRARY_IMPL(_, ...), stays "
                                    "by hand)", _REGISTRY_FIX))
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


# ---- handwritten launches run on the device their body was given ------------------------

_DEVICE_EXEMPTION = re.compile(r"//\s*flagos-lint:\s*allow-launch-device\((?P<reason>[^)]*)\)")
# The ways to make a launch device other than the one the generated wrapper passes.
_DEVICE_MAKERS = re.compile(r"\b(launch_device_of|no_launch_device)\s*\(|\bLaunchDevice\s*[({]", re.ASCII)
_LAUNCH_DEVICE_PARAM = re.compile(r"\bLaunchDevice\b", re.ASCII)


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


def guarded_launches(source: Source, start: int = 0, end: int | None = None) -> list[GuardedLaunch]:
    """The FLAGOS_GUARDED_LAUNCHes of source.code[start:end]. (A raw launch is raw_launches'
    business: it fails unless `allow-raw-launch(<reason>)` documents it.)"""
    found = []
    for match in _LAUNCH_MACRO.finditer(source.code, start, len(source.code) if end is None else end):
        open_ = match.end() - 1
        args = cpp.split_top(source.code[open_ + 1:cpp.matching(source.code, open_)])
        if len(args) >= 2:
            found.append(GuardedLaunch(source, match.start(), args[0], args[1]))
    return found


def _exempted(source: Source, line: int, problems: list[LintProblem]) -> bool:
    """Whether the line carries an allow-launch-device exemption; one without a reason is a problem."""
    exemption = source.exemption(line, _DEVICE_EXEMPTION)
    if exemption is None:
        return False
    if not exemption.group("reason").strip():
        problems.append(LintProblem(Location(source.shown, line), "the allow-launch-device exemption gives no reason",
                                    "write `// flagos-lint: allow-launch-device(<why this launch runs on another "
                                    "device than the one its body was given>)`"))
    return True


def check_launch_devices(source: Source) -> list[LintProblem]:
    """The one device rule of csrc/handwritten/: the generated wrapper resolves each op's launch
    device from its registry policy and passes it to the body, so every FLAGOS_GUARDED_LAUNCH
    launches on a `LaunchDevice` parameter of the function it is in (the body's, or a helper's
    that the body passes it to), and no file makes a launch device of its own
    (launch_device_of, no_launch_device, a LaunchDevice{...}). A deliberate exception carries
    `// flagos-lint: allow-launch-device(<reason>)` on its line or the line above."""
    problems: list[LintProblem] = []
    inside: list[tuple[int, int]] = []
    for function in source.functions:
        inside.append((function.start, function.end))
        device_params = {name for name, declared in zip(function.params, function.declarations)
                         if name and _LAUNCH_DEVICE_PARAM.search(declared)}
        for launch in guarded_launches(source, function.start, function.end):
            if launch.device.strip() in device_params or _exempted(source, launch.line, problems):
                continue
            given = ", ".join(f"`{name}`" for name in sorted(device_params)) or "none"
            problems.append(LintProblem(
                Location(source.shown, launch.line),
                f"`{function.name}` launches {launch.operator} on `{launch.device.strip()}`, not on a LaunchDevice "
                f"parameter of its own (it has {given})",
                "take `const LaunchDevice& device` first and launch on it: the generated wrapper resolves it from the "
                "op's policy in yaml/handwritten.yaml (or mark a deliberate exception "
                "`// flagos-lint: allow-launch-device(<reason>)`)"))
    for launch in guarded_launches(source):
        if not any(start <= launch.position <= end for start, end in inside) and \
                not _exempted(source, launch.line, problems):
            problems.append(LintProblem(
                Location(source.shown, launch.line),
                f"launches {launch.operator} outside a function the lint can read",
                "launch from a function that takes `const LaunchDevice& device`, on that device"))
    for match in _DEVICE_MAKERS.finditer(source.code):
        line = source.line(match.start())
        if _exempted(source, line, problems):
            continue
        made = match.group(1) or "LaunchDevice"
        problems.append(LintProblem(
            Location(source.shown, line),
            f"makes a launch device of its own ({made}): a handwritten body launches on the device its "
            "generated wrapper passes",
            "use the `const LaunchDevice&` the body was given; the op's guard belongs in yaml/handwritten.yaml "
            "(or mark a deliberate exception `// flagos-lint: allow-launch-device(<reason>)`)"))
    return problems


def lint_handwritten(registry: Registry, root: str, handwritten_dir: str, show) -> list[LintProblem]:
    """Every lint problem of csrc/ (launches around the guard) and of csrc/handwritten/ against
    yaml/handwritten.yaml (no registrations, the bodies it names, their launch devices)."""
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
        problems += registrations_outside_generator(show(path), texts[path],
                                                    ops_too=not relative.startswith("handwritten/"))

    generated = {entry.op: entry.loc for entry in registry.ops}
    listed = {entry.op: entry for entry in registry.handwritten}
    sources: dict[str, Source] = {}
    for path in source_files(handwritten_dir) if os.path.isdir(handwritten_dir) else []:
        shown = show(path)
        text = texts[path]
        sources[shown] = read_source(shown, text)
        # The generator writes every registration (csrc/generated/kernels_*.cpp): a handwritten
        # file defines bodies only.
        for op, line in registrations(text):
            entry = listed.get(op)
            if entry is not None:
                message = f"registers {op}, whose wrapper the generator writes and registers (impl: {entry.impl})"
                fix = f"remove this m.impl: the file defines only the body flagos::impl::{entry.impl}"
            elif op in generated:
                message = f"registers {op}, which is generated (at {generated[op]})"
                fix = "remove this m.impl: the generator registers the op's kernel"
            else:
                message = f"registers {op}: handwritten files define bodies, the generator registers them"
                fix = (f"add `- op: {op}` with its guard, `file: {shown}` and `impl: <its body>` to "
                       "yaml/handwritten.yaml, and remove this m.impl")
            problems.append(LintProblem(Location(shown, line), message, fix))
    for entry in registry.handwritten:
        path = os.path.join(root, entry.file)
        shown = show(path)
        if not os.path.isfile(path):
            problems.append(LintProblem(entry.loc, f"{entry.op}: file {entry.file} does not exist",
                                        "fix `file:` or write the body"))
            continue
        bodies = [entry.impl] + ([entry.autograd_impl] if entry.autograd_impl else [])
        for body in bodies:
            if not any(f.name == body and f.declarations and _LAUNCH_DEVICE_PARAM.search(f.declarations[0])
                       for f in sources[shown].functions):
                problems.append(LintProblem(entry.loc, f"{entry.op}: {entry.file} does not define its body "
                                            f"flagos::impl::{body}",
                                            "define it as generated/impls.h declares it, in namespace flagos::impl"))
    for source in sources.values():
        problems += check_launch_devices(source)
    return sorted(set(problems))
