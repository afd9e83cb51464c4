"""Registry problems: collected while validating, reported all at once."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.model import Location
from codegen.safety import shown


@dataclass(frozen=True, order=True)
class Problem:
    loc: Location
    op: str | None  # the op the problem belongs to, if any
    message: str  # what is wrong
    fix: str  # how to fix it

    def __str__(self) -> str:
        subject = f" {shown(self.op)}:" if self.op else ""
        return f"{self.loc}:{subject} {self.message}\n    fix: {self.fix}"


class RegistryError(Exception):
    """The registry did not validate; nothing may be generated from it."""

    def __init__(self, problems: list[Problem]):
        self.problems = sorted(problems)
        super().__init__(self.render())

    def render(self) -> str:
        lines = [f"error: the registry has {len(self.problems)} problem(s); nothing was written"]
        lines += [f"{problem}" for problem in self.problems]
        return "\n".join(lines)


class Problems:
    """An accumulator: validators add to it and keep going."""

    def __init__(self) -> None:
        self.items: list[Problem] = []

    def add(self, loc: Location, op: str | None, message: str, fix: str) -> None:
        self.items.append(Problem(loc, op, message, fix))

    def dedupe_since(self, start: int) -> None:
        """Drops the problems added since item `start` that repeat an earlier one's place, message and fix."""
        seen = set()
        kept = self.items[:start]
        for problem in self.items[start:]:
            key = (problem.loc, problem.message, problem.fix)
            if key not in seen:
                seen.add(key)
                kept.append(problem)
        self.items = kept

    def raise_if_any(self) -> None:
        if self.items:
            raise RegistryError(self.items)
