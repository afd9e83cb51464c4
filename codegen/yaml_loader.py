"""A YAML loader that remembers where every mapping and key was written.

Registry errors point at file:line, so mappings load as `LineDict` (the
line of the mapping and of each key) and sequences as `LineList`.
"""

from __future__ import annotations

import yaml


class LineDict(dict):
    line: int = 0  # 1-based line of the mapping
    key_lines: dict

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)


class LineList(list):
    line: int = 0
    item_lines: list


class _LineLoader(yaml.SafeLoader):
    pass


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    mapping = LineDict()
    mapping.line = node.start_mark.line + 1
    mapping.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in mapping:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
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


def load_yaml(text: str):
    """Parses `text`; raises YamlSyntaxError with the 1-based line of the problem."""
    try:
        return yaml.load(text, Loader=_LineLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = " ".join(filter(None, [error.context, error.problem]))
        raise YamlSyntaxError(line, problem or str(error)) from None
    except yaml.YAMLError as error:
        raise YamlSyntaxError(1, str(error)) from None
