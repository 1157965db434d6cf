"""Fuzzy matching for ``workspace/symbol``, the way editors' pickers expect.

A name matches when the query's characters appear in it in order, case
ignored ("rf" finds "ruff"). Better matches first, in tiers: a prefix
(the whole name, being shortest, first); a run that starts a word, then any
run (earlier first); then the subsequence that ends soonest; ties by name.
Tiers are filled best first and the search stops once ``limit`` names are
found, so a query that prefixes thousands of names ranks only those.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Sequence


class NameIndex:
    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self._folded = [name.casefold() for name in self.names]
        self._by_name = sorted(range(len(self.names)), key=self.names.__getitem__)

    def best(self, query: str, limit: int) -> list[int]:
        """Indices of the ``limit`` best matches of ``query``, best first."""
        wanted = query.casefold()
        if not wanted:
            return self._by_name[:limit]
        folded, names = self._folded, self.names
        search = re.compile(".*?".join(re.escape(char) for char in wanted), re.DOTALL).search
        left = [index for index, name in enumerate(folded) if search(name)]
        # Prefixes, the whole name first (it is the shortest).
        prefixes = [index for index in left if folded[index].startswith(wanted)]
        chosen = heapq.nsmallest(limit, prefixes, key=lambda i: (len(names[i]), names[i]))
        if len(chosen) >= limit:
            return chosen
        rest = [index for index in left if not folded[index].startswith(wanted)]
        runs = [(index, folded[index].find(wanted)) for index in rest]
        ranked = [
            (not _starts_word(names[index], at), at, names[index], index)
            for index, at in runs
            if at >= 0
        ]
        chosen += [entry[-1] for entry in heapq.nsmallest(limit - len(chosen), ranked)]
        if len(chosen) >= limit:
            return chosen
        scattered = [(_end(search(folded[i])), names[i], i) for i, at in runs if at < 0]
        chosen += [entry[-1] for entry in heapq.nsmallest(limit - len(chosen), scattered)]
        return chosen


def _starts_word(name: str, at: int) -> bool:
    """Whether a run found at ``at`` starts a word (after a separator, or a
    capital after a small letter)."""
    if at == 0 or not name[at - 1].isalnum():
        return True
    return name[at].isupper() and name[at - 1].islower()


def _end(found: re.Match[str] | None) -> int:
    return found.end() if found is not None else 0
