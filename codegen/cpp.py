"""Just enough C++ reading for the lint: functions, their parameters, calls, declarations.

Works on code whose comments and string literals are blanked (lint.prepare),
so braces and parentheses balance. It understands the plain style of the
handwritten kernels (free functions in namespaces, locals declared with an
initializer, calls by name) and nothing more; the lint reports what it
cannot follow instead of guessing.
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
KEYWORDS_BEFORE_NAME = {"return", "case", "else", "throw", "delete", "new", "co_return", "co_yield", "goto", "do",
                        "typename", "using", "namespace", "struct", "class", "enum", "union", "operator"}


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
    calls: list["Call"] = field(default_factory=list)


@dataclass(frozen=True)
class Call:
    name: str  # unqualified name of the callee
    args: tuple[str, ...]
    position: int  # offset of the name


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
                params = [param_name(p) for p in split_top(code[open_ + 1:close], angles=True)]
                if params == [None] and code[open_ + 1:close].strip() == "void":
                    params = []
                found.append(Function(head.group(2), params, brace, end, file))
            index = end + 1
            continue
        if re.search(r"(\bnamespace(\s+[\w:]+)?|\bextern\s*)\s*$", stripped):
            index = brace + 1  # enter
            continue
        index = matching(code, brace) + 1  # a class, an enum, an initializer: skip


_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*(<[^<>;(){}]*>)?\s*\(", re.ASCII)


def calls(code: str, function: Function, names: set[str], local_qualifiers: set[str]) -> list[Call]:
    """Calls from `function`'s body to the functions called `names` (member calls and calls
    qualified by a namespace outside `local_qualifiers` excluded)."""
    found = []
    for match in _CALL.finditer(code, function.start, function.end):
        name = match.group(1)
        if name not in names:
            continue
        before = code[function.start:match.start()].rstrip()
        if before.endswith((".", "->")):
            continue
        qualifier = re.search(r"((?:[A-Za-z_][A-Za-z0-9_]*\s*::\s*)+)$", before)
        if qualifier:
            parts = [p.strip() for p in qualifier.group(1).split("::") if p.strip()]
            if not set(parts) <= local_qualifiers:
                continue
        open_ = match.end() - 1
        close = matching(code, open_)
        found.append(Call(name, tuple(split_top(code[open_ + 1:close])), match.start()))
    return found


def definitions(code: str, function: Function, name: str, before: int) -> list[tuple[int, str]]:
    """(offset, initializer) of each definition of the local `name` in `function` before
    offset `before`: declarations with `=`, `(...)` or `{...}`, range-for variables and
    plain assignments. An initializer in parentheses or braces is given as its first argument."""
    found = []
    body = code[function.start:before]
    for match in re.finditer(rf"(?<![\w.:])(?<!->){re.escape(name)}\s*(=(?!=)|\(|\{{|:(?!:))", body, re.ASCII):
        position = function.start + match.start()
        prefix = body[:match.start()].rstrip()
        previous = re.search(r"([A-Za-z_][A-Za-z0-9_]*)$", prefix)
        declared = bool(prefix) and (prefix[-1] in ">&*" or (previous and previous.group(1) not in KEYWORDS_BEFORE_NAME))
        assigned = not prefix or prefix[-1] in ";{}" or prefix.endswith(")")
        token = match.group(1)
        statement = re.split(r"[;{}]", prefix)[-1]
        if declared and re.search(r"\b(static|thread_local)\b", statement):
            found.append((position, "static local"))  # keeps the first call's value: not this call's device
            continue
        if token == ":":  # a range-for: `for (const T& name : range)`
            loop = re.search(r"\bfor\s*(\()[^;()]*$", prefix)
            if declared and loop:
                close = matching(code, function.start + loop.start(1))
                found.append((position, code[function.start + match.end():close].strip()))
            continue
        if token == "=" and (declared or assigned):
            start = function.start + match.end()
            end = start
            depth = 0
            while end < len(code) and end < function.end:
                char = code[end]
                if char in _OPEN:
                    depth += 1
                elif char in _CLOSE:
                    if depth == 0:
                        break
                    depth -= 1
                elif char in ";," and depth == 0:
                    break
                end += 1
            found.append((position, code[start:end].strip()))
        elif token in "({" and declared:
            open_ = function.start + match.end() - 1
            args = split_top(code[open_ + 1:matching(code, open_)])
            found.append((position, args[0] if args else "{}"))
    return found


def identifier_at(text: str) -> str | None:
    match = _IDENT.fullmatch(text.strip())
    return match.group(0) if match else None
