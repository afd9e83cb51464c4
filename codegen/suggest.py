"""Suggestions for a mistyped op name, by edit distance."""

from __future__ import annotations

from typing import Iterable


def edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal string alignment distance (insert, delete, substitute, swap two
    neighbours), or limit + 1 when it exceeds `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1]


def closest(name: str, candidates: Iterable[str], preferred: Iterable[str] = (), n: int = 5) -> list[str]:
    """The candidates nearest to `name` (at most a quarter of its length away, at
    least 2 edits allowed); on a tie, `preferred` names (the registry's) first."""
    limit = max(2, len(name) // 4)
    favoured = set(preferred)
    scored = []
    for candidate in set(candidates) | favoured:
        distance = edit_distance(name, candidate, limit)
        if distance <= limit and candidate != name:
            scored.append((distance, candidate not in favoured, candidate))
    return [candidate for _, _, candidate in sorted(scored)[:n]]
