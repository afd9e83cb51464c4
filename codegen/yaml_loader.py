"""A YAML loader that remembers where every mapping and key was written.

Registry errors point at file:line, so mappings load as `LineDict` (the
line of the mapping and of each key) and sequences as `LineList` (the line
of each item). The registry is plain data: keys are names, nesting is
shallow and there are no aliases, so anything else is a syntax error with
its line, never a Python exception.
"""

from __future__ import annotations

import re

import yaml

MAX_DEPTH = 32  # the registry nests five levels deep; nothing needs more


class LineDict(dict):
    line: int = 0  # 1-based line of the mapping
    key_lines: dict

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)


class LineList(list):
    line: int = 0
    item_lines: list

    def line_at(self, index: int) -> int:
        return self.item_lines[index] if index < len(self.item_lines) else self.line


def _error(problem: str, mark) -> yaml.MarkedYAMLError:
    return yaml.composer.ComposerError(None, None, problem, mark)


class _LineLoader(yaml.SafeLoader):
    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0
        self.root_line = 1

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise _error("aliases (*name) are not allowed in the registry; write the value out",
                         self.peek_event().start_mark)
        if self._depth >= MAX_DEPTH:
            raise _error(f"nested more than {MAX_DEPTH} levels deep", self.peek_event().start_mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_document(self, node):
        self.root_line = node.start_mark.line + 1
        return super().construct_document(node)


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    mapping = LineDict()
    mapping.line = node.start_mark.line + 1
    mapping.key_lines = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            raise _error("a key must be a name, not a list or a mapping", key_node.start_mark)
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str):
            raise _error(f"key `{key_node.value}` reads as {type(key).__name__}, not as a name; quote it",
                         key_node.start_mark)
        if key in mapping:
            raise _error(f"duplicate key {key!r}", key_node.start_mark)
        mapping[key] = loader.construct_object(value_node, deep=True)
        mapping.key_lines[key] = key_node.start_mark.line + 1
    return mapping


def _construct_sequence(loader: _LineLoader, node: yaml.SequenceNode) -> LineList:
    sequence = LineList(loader.construct_object(child, deep=True) for child in node.value)
    sequence.line = node.start_mark.line + 1
    sequence.item_lines = [child.start_mark.line + 1 for child in node.value]
    return sequence


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


class YamlSyntaxError(Exception):
    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line
        self.message = message


def _line_of_position(text: str, position: int) -> int:
    return text.count("\n", 0, max(position, 0)) + 1


def load_yaml_document(text: str):
    """(data, line of its first node); raises YamlSyntaxError with the 1-based line of the problem."""
    loader = None
    try:
        loader = _LineLoader(text)
        data = loader.get_single_data()
        return data, loader.root_line
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = " ".join(filter(None, [error.context, error.problem]))
        spans = error.context_mark is not None and error.problem_mark is not None and \
            error.context_mark.line != error.problem_mark.line
        what = re.sub(r"^while (scanning|parsing) ", "", error.context or "a value")
        if spans and "end of stream" in (error.problem or ""):
            # An unterminated quote or bracket runs to the end of the file: the
            # place to fix is where it started, not the last line.
            line = error.context_mark.line + 1
            problem = f"{what} starts here and is never closed (the file ends at line {mark.line + 1})"
        elif spans and (error.context or "").startswith(("while parsing a flow", "while scanning a quoted")):
            # The registry writes its [lists] and "strings" on one line: one that
            # runs on is not closed where it starts.
            line = error.context_mark.line + 1
            problem = f"{what} starts here and is not closed on its line ({error.problem} at line {mark.line + 1})"
        elif spans:
            problem += f" (the construct started at line {error.context_mark.line + 1})"
        raise YamlSyntaxError(line, problem or str(error)) from None
    except yaml.reader.ReaderError as error:
        # A character YAML refuses (control characters): at its position.
        raise YamlSyntaxError(_line_of_position(text, error.position),
                              f"the character U+{error.character:04X} is not allowed in YAML text; "
                              "write it as an escape in a double-quoted string, or remove it") from None
    except yaml.YAMLError as error:
        raise YamlSyntaxError(1, str(error)) from None
    except RecursionError:
        raise YamlSyntaxError(1, f"nested too deeply (more than {MAX_DEPTH} levels)") from None
    finally:
        if loader is not None:
            loader.dispose()


def load_yaml(text: str):
    """Parses `text`; raises YamlSyntaxError with the 1-based line of the problem."""
    return load_yaml_document(text)[0]
