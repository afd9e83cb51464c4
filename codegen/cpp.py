"""Just enough C++ reading for the lint: functions and their parameters.

Works on code whose comments and string literals are blanked (lint.lex), so
braces and parentheses balance. It understands the plain style of the
handwritten bodies (free functions in namespaces) and nothing more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_OPEN = "([{"
_CLOSE = ")]}"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
_QUALIFIED_BEFORE = re.compile(r"((?:[A-Za-z_][A-Za-z0-9_]*\s*::\s*)*)([A-Za-z_][A-Za-z0-9_]*)\s*$", re.ASCII)
# What may stand between a function's `)` and its `{`.
_AFTER_PARAMS = re.compile(r"(\s|const|noexcept|override|final|mutable|&|->\s*[\w:<>,\s*&]+)*", re.ASCII)
_NOT_FUNCTIONS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignof", "noexcept"}


def matching(code: str, start: int) -> int:
    """The index of the bracket closing the one at `start` (len(code) when unbalanced)."""
    depth = 0
    for index in range(start, len(code)):
        char = code[index]
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
            if depth == 0:
                return index
    return len(code)


def opening(code: str, end: int) -> int:
    """The index of the bracket opening the one closed at `end` (-1 when unbalanced)."""
    depth = 0
    for index in range(end, -1, -1):
        char = code[index]
        if char in _CLOSE:
            depth += 1
        elif char in _OPEN:
            depth -= 1
            if depth == 0:
                return index
    return -1


def split_top(text: str, separator: str = ",", angles: bool = False) -> list[str]:
    """`text` split at the separators outside brackets (and outside <...> with `angles`)."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in _OPEN or (angles and char == "<"):
            depth += 1
        elif char in _CLOSE or (angles and char == ">" and depth > 0):
            depth -= 1
        elif char == separator and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [part.strip() for part in parts] if any(part.strip() for part in parts) else []


def param_name(param: str) -> str | None:
    """The name of one declared parameter (None when unnamed: `bool`, `const at::Tensor&`)."""
    param = split_top(param, "=", angles=True)[0] if "=" in param else param.strip()
    match = re.fullmatch(r"(.*[\s&*>])\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\[[^\]]*\])?", param, re.ASCII | re.DOTALL)
    if match is None or not re.search(r"[A-Za-z_]", match.group(1)):
        return None
    type_words = set(re.findall(r"[A-Za-z_]\w*", match.group(1)))
    if type_words <= {"const", "volatile", "unsigned", "signed"}:
        return None  # `unsigned int`: the last word is the type
    return match.group(2)


@dataclass
class Function:
    name: str  # unqualified
    params: list[str | None]  # parameter names, None for unnamed ones
    start: int  # offset of the body's `{`
    end: int  # offset of its `}`
    file: str = ""  # as shown in messages
    declarations: list[str] = field(default_factory=list)  # each parameter as declared (`const LaunchDevice& d`)


def functions(code: str, file: str = "") -> list[Function]:
    """The function definitions at namespace level (namespaces and extern blocks are entered;
    classes, enums and initializers are skipped)."""
    found: list[Function] = []
    index = 0
    while True:
        brace = code.find("{", index)
        if brace < 0:
            return found
        window = max(0, brace - 400)  # what can stand between `)` and `{` is short
        stripped = code[window:brace].rstrip()
        close = None
        after = re.search(r"\)(?P<tail>[^()]*)$", stripped)
        if after and _AFTER_PARAMS.fullmatch(after.group("tail")):
            close = window + after.start()
        if close is not None:
            open_ = opening(code, close)
            head = _QUALIFIED_BEFORE.search(code[max(0, open_ - 400):open_]) if open_ > 0 else None
            end = matching(code, brace)
            if head and head.group(2) not in _NOT_FUNCTIONS:
                declarations = split_top(code[open_ + 1:close], angles=True)
                params = [param_name(p) for p in declarations]
                if params == [None] and code[open_ + 1:close].strip() == "void":
                    params, declarations = [], []
                found.append(Function(head.group(2), params, brace, end, file, declarations=declarations))
            index = end + 1
            continue
        if re.search(r"(\bnamespace(\s+[\w:]+)?|\bextern\s*)\s*$", stripped):
            index = brace + 1  # enter
            continue
        index = matching(code, brace) + 1  # a class, an enum, an initializer: skip
