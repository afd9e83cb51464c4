"""What registry text may become C++, and how it is rendered.

The registry is reviewed YAML that turns into compiled code, so nothing in
it reaches csrc/generated/ except through a validated, escaped field:

- free text (a `reason`, a CANN `source` path) lands in `//` comments: it
  must be one line of printable characters, bounded, not ending in a
  backslash (which would splice the next line into the comment), and the
  templates render it through `comment` anyway;
- names (outputs, prototype parameters, entry points) become C++
  identifiers: ASCII, whole-string matches, no keyword, no reserved or
  macro-like name, none of the generator's own locals;
- text inside a C++ string literal goes through `cstring`.

Each check returns why a value is not acceptable (None when it is), so the
registry loader can report it with file:line and a fix.
"""

from __future__ import annotations

import re

MAX_TEXT = 320  # a reason is a sentence, not an essay
MAX_NAME = 64
MAX_ENTRY_NAME = 96

# C++20 keywords and alternative tokens, plus the identifiers with a special
# meaning (final, override, import, module): none may name a variable.
CPP_KEYWORDS = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class
compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype
default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
register reinterpret_cast requires return short signed sizeof static static_assert static_cast struct
switch template this thread_local throw true try typedef typeid typename union unsigned using virtual void
volatile wchar_t while xor xor_eq final override import module
""".split())

# Lower-case names that a C++ compiler or the standard library defines as
# macros (GCC's GNU modes predefine `linux` and `unix` as 1): a variable of
# that name would not survive preprocessing. ALL_CAPS names are refused as a
# class (see check_cpp_name).
MACRO_NAMES = frozenset("""
linux unix i386 assert errno offsetof setjmp va_arg va_copy va_end va_start
""".split())

# What a generated wrapper declares itself (`launch_device`; the launch
# macro's `flagos_launch_guard_`; the wrappers `wrapper_<op>`): an output of
# that name would collide with it. (Namespace names such as `std` or `at` are
# fine: a qualified name `std::` looks up namespaces only.)
GENERATOR_NAMES = frozenset(["launch_device"])
GENERATOR_PREFIXES = ("flagos_", "wrapper_")
# The trailing parameters every generated phase-1/phase-2 prototype declares.
PROTOTYPE_NAMES = frozenset("workspaceSize executor workspace stream".split())

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*", re.ASCII)
_ALL_CAPS = re.compile(r"[A-Z][A-Z0-9_]+", re.ASCII)
ENTRY_NAME = re.compile(r"aclnn[A-Z][A-Za-z0-9]*", re.ASCII)


def text_problem(value: object, max_length: int = MAX_TEXT) -> str | None:
    """Why `value` cannot be placed in a one-line `//` comment, or None."""
    if not isinstance(value, str):
        return f"must be text, not {type_word(value)}"
    if not value.strip():
        return "is empty"
    if len(value) > max_length:
        return f"is {len(value)} characters long; at most {max_length} fit on one comment line"
    for index, char in enumerate(value):
        if char in "\r\n\u2028\u2029\x85\x0b\x0c":
            return f"holds a line break ({char_name(char)}) at character {index + 1}"
        if not char.isprintable():
            return f"holds the non-printable character {char_name(char)} at character {index + 1}"
    stripped = value.rstrip()
    if stripped.endswith("\\") or stripped.endswith("??/"):
        return "ends with a backslash, which would continue the comment onto the next line of code"
    return None


def name_problem(value: object, max_length: int = MAX_NAME) -> str | None:
    """Why `value` cannot be a C++ identifier written by the generator, or None."""
    if not isinstance(value, str):
        return f"must be a name, not {type_word(value)}"
    if not _NAME.fullmatch(value):
        if value[:1] == "_":
            return "starts with an underscore (names that do are reserved to the implementation)"
        return "is not an ASCII identifier (a letter, then letters, digits and underscores)"
    if len(value) > max_length:
        return f"is longer than {max_length} characters"
    if "__" in value:
        return "contains a double underscore (reserved to the implementation)"
    if value in CPP_KEYWORDS:
        return "is a C++ keyword"
    if value in MACRO_NAMES:
        return "is a macro of the compiler or the C library"
    if _ALL_CAPS.fullmatch(value):
        return "is written like a macro (ALL_CAPS); a macro of that name would replace it"
    return None


def local_name_problem(value: object) -> str | None:
    """Why `value` cannot name a variable of a generated wrapper, or None."""
    why = name_problem(value)
    if why is not None:
        return why
    assert isinstance(value, str)
    if value in GENERATOR_NAMES or value.startswith(GENERATOR_PREFIXES):
        return "is a name the generated wrapper uses itself"
    return None


def parameter_name_problem(value: object) -> str | None:
    """Why `value` cannot name a parameter of a generated ACLNN prototype, or None."""
    why = name_problem(value)
    if why is not None:
        return why
    if value in PROTOTYPE_NAMES:
        return "is a parameter every generated prototype already has"
    return None


def entry_name_problem(value: object) -> str | None:
    """Why `value` cannot name an ACLNN operator (a struct, two functions, a header), or None."""
    if not isinstance(value, str) or not ENTRY_NAME.fullmatch(value):
        return "is not an ACLNN operator name (aclnn, a capital letter, then ASCII letters and digits)"
    if len(value) > MAX_ENTRY_NAME:
        return f"is longer than {MAX_ENTRY_NAME} characters"
    if value == "aclnnStatus":
        return "is ACLNN's status type, not an operator"
    return None


def type_word(value: object) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "a number"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, str):
        return "text"
    return f"a {type(value).__name__}"


def char_name(char: str) -> str:
    return f"U+{ord(char):04X}"


def shown(value: object, limit: int = 80) -> str:
    """`value` as a registry message shows it: as written when it is a short, clean
    line of text, else escaped and cut (messages never replay raw control characters)."""
    if isinstance(value, str) and value.isprintable() and value.strip() == value:
        return value if len(value) <= limit else value[: limit - 3] + "..."
    if isinstance(value, (list, dict)):
        text = type_word(value)
    else:
        text = ascii(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---- rendering (Jinja filters) ------------------------------------------------


def comment(value: object) -> str:
    """Text for a `//` comment, safe by construction: unprintable characters (line
    breaks included) are written as U+XXXX, and a trailing backslash cannot splice
    the next line into the comment."""
    text = "".join(char if char.isprintable() else f"<{char_name(char)}>" for char in str(value))
    text = text.rstrip()
    if text.endswith("\\") or text.endswith("??/"):
        text = text[:-1] + "<" + char_name(text[-1]) + ">"
    return text


def cstring(value: object) -> str:
    """The body of a C++ string literal: printable ASCII as is, `"` and `\\` escaped,
    everything else as three-digit octal escapes of its UTF-8 bytes."""
    out = []
    for byte in str(value).encode("utf-8", "surrogatepass"):
        char = chr(byte)
        if char in "\"\\":
            out.append("\\" + char)
        elif 0x20 <= byte < 0x7F and char != "?":  # `?` escaped: no trigraph can form
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return "".join(out)


_TOKEN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)


def ident(value: object) -> str:
    """One C++ identifier token; refuses (raises) anything else. The registry has
    validated its names already: this is the templates' second line of defence,
    which keeps any other text from being rendered as code."""
    if not isinstance(value, str) or not _TOKEN_NAME.fullmatch(value) or value in CPP_KEYWORDS:
        raise ValueError(f"refusing to render {value!r} as a C++ identifier")
    return value
