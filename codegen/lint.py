"""The handwritten-kernel lint (run by --check).

Handwritten kernels must launch ACLNN operators only through
FLAGOS_GUARDED_LAUNCH(device, aclnnX, ...), which guards the launch device.
A file in csrc/handwritten/ fails when it
  - calls an ACLNN operator (`aclnnX(...)`) or passes one to anything other
    than FLAGOS_GUARDED_LAUNCH (`EXEC_NPU_CMD(aclnnX, ...)`, `&aclnnX`),
    unless the line or the one above says
    `// flagos-lint: allow-raw-launch(<reason>)`;
  - registers an op (m.impl("<op>", ...)) that yaml/handwritten.yaml does not
    list for that file; or when an op listed there is not registered in its file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from codegen.model import Location, Registry

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


def lint_handwritten(registry: Registry, root: str, handwritten_dir: str, show) -> list[LintProblem]:
    """Every lint problem of csrc/handwritten/ against yaml/handwritten.yaml."""
    problems: list[LintProblem] = []
    generated = {entry.op: entry.loc for entry in registry.ops}
    listed = {entry.op: entry for entry in registry.handwritten}
    registered: dict[str, set[str]] = {}  # shown file -> ops it registers
    for path in source_files(handwritten_dir) if os.path.isdir(handwritten_dir) else []:
        shown = show(path)
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
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
    return sorted(problems)
