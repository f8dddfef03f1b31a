"""A compact Unigram (sentencepiece) tokenizer for large multilingual vocabularies.

XLM-R's vocabulary (multilingual-e5-small) has 250,002 pieces. Loaded into
the `tokenizers` library, its Unigram model keeps a byte trie of hash-map
nodes that costs about 170 MB of resident memory, more than the whole model
may use (`docs/benchmarks/encoder.md`). This module keeps the pieces in one
Python dict (about a fifth of that) and runs the same Viterbi search itself;
`tokenizers` still does everything else from the same `tokenizer.json`: the
normaliser (XLM-R's precompiled character map), the pre-tokenizer (Metaspace)
and the special tokens around each text, through a copy of the file whose
vocabulary holds only the special tokens that come first (`<s>`, `<pad>`,
`</s>`, `<unk>`). Special tokens typed in a text are tokenized as text.

The search follows `tokenizers`' `Unigram::encode` step for step (candidates
by increasing length, a strictly better score replaces, a character no piece
covers costs the lowest score minus 10, adjacent unknowns fuse into one
`<unk>`), so the ids are the library's; `tests/engine/test_encoder_unigram.py`
compares them on thousands of texts in some 60 languages.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
import json
from pathlib import Path
import re
from typing import Any

from tokenizers import Tokenizer

# tokenizers' (and sentencepiece's) penalty for a character no piece covers.
_UNK_PENALTY = 10.0
_SCORE = rb"-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?"
_ENTRY = re.compile(rb'\s*\[\s*"((?:[^"\\]|\\.)*)"\s*,\s*(' + _SCORE + rb")\s*\]\s*,?")
_VOCAB_KEY = re.compile(rb'"vocab"\s*:\s*\[')
_CLOSE = re.compile(rb"\s*\]")


class UnigramError(ValueError):
    """The file is no Unigram tokenizer this module can read."""


def _scan_vocab(raw: bytes) -> tuple[int, int, list[str], array[float]]:
    """Find and read the vocabulary array of a Unigram `tokenizer.json`.

    A streaming scan of the file's bytes instead of `json.loads`, which would
    first decode the whole file (60 MB as a str once it holds an emoji) and
    build 250k lists and floats only to throw them away. Returns the array's
    span in `raw`, the pieces in id order and their scores.
    """
    found = _VOCAB_KEY.search(raw)
    if found is None:
        raise UnigramError("no vocab")
    pos = found.end()
    pieces: list[str] = []
    scores: array[float] = array("d")
    while True:
        entry = _ENTRY.match(raw, pos)
        if entry is None:
            break
        piece = entry.group(1)
        pieces.append(
            json.loads(b'"' + piece + b'"') if b"\\" in piece else piece.decode()
        )
        scores.append(float(entry.group(2)))
        pos = entry.end()
    close = _CLOSE.match(raw, pos)
    if close is None:
        raise UnigramError("unreadable vocab")
    return found.end() - 1, close.end(), pieces, scores


class UnigramTokenizer:
    """Text to token ids for a Unigram `tokenizer.json`, with a compact vocabulary."""

    def __init__(self, path: Path) -> None:
        """Read `path`; `UnigramError` (or OSError) if it is not a Unigram tokenizer."""
        raw = path.read_bytes()
        try:
            start, end, pieces, scores = _scan_vocab(raw)
            rest: dict[str, Any] = json.loads(raw[:start] + b"[]" + raw[end:])
        except UnicodeDecodeError as err:
            raise UnigramError("not UTF-8") from err
        del raw
        model = rest.get("model") or {}
        if model.get("type") != "Unigram" or not pieces:
            raise UnigramError("not a Unigram model")
        if model.get("byte_fallback"):
            raise UnigramError("byte fallback is left to the library")
        unk = model.get("unk_id")
        self.unk_id: int | None = unk if isinstance(unk, int) else None
        if self.unk_id is not None and not 0 <= self.unk_id < len(pieces):
            raise UnigramError("unk_id outside the vocabulary")
        # The library keeps the last id of a piece listed twice; so do we.
        self.ids: dict[str, int] = {piece: i for i, piece in enumerate(pieces)}
        self.scores = scores
        self.unk_score = min(scores) - _UNK_PENALTY
        self.max_chars = max(len(piece) for piece in pieces)
        self.fuse_unk = bool(model.get("fuse_unk", True))
        # The same file with only the leading special tokens: the library runs
        # the normaliser, the pre-tokenizer and the post-processor (whose ids
        # are its own). Specials listed after the ordinary pieces (XLM-R's
        # <mask> is id 250,001) stay out, or the library would be handed every
        # piece and build its large trie after all.
        added = [
            token
            for token in rest.get("added_tokens") or []
            if isinstance(token, dict) and isinstance(token.get("id"), int)
        ]
        specials = {token["id"] for token in added}
        keep = (self.unk_id or 0) + 1
        while keep in specials:
            keep += 1
        keep = min(keep, len(pieces))
        rest["added_tokens"] = [token for token in added if token["id"] < keep]
        model["vocab"] = [[pieces[i], scores[i]] for i in range(keep)]
        self.library_pieces = keep
        del pieces
        self._frame = Tokenizer.from_str(json.dumps(rest))
        self._frame.no_padding()
        self._frame.no_truncation()
        self._prefix, self._suffix = self._special_frame()
        self.max_length: int | None = None

    def _special_frame(self) -> tuple[list[int], list[int]]:
        """Find the special ids the post-processor puts before and after a text."""
        probe = self._frame.encode("x")
        mask = probe.special_tokens_mask
        ids = probe.ids
        content = [i for i, special in enumerate(mask) if not special]
        if not content:
            return list(ids), []
        return ids[: content[0]], ids[content[-1] + 1 :]

    def enable_truncation(self, max_length: int) -> None:
        """Cut texts so that, with their special tokens, they fit `max_length`."""
        self.max_length = max_length

    def encode_ids(self, text: str) -> list[int]:
        """Token ids of one text, special tokens included, truncated if enabled."""
        normalizer = self._frame.normalizer
        normalized = normalizer.normalize_str(text) if normalizer else text
        pre = self._frame.pre_tokenizer
        words = (
            [w for w, _span in pre.pre_tokenize_str(normalized)]
            if pre
            else [normalized]
        )
        ids: list[int] = []
        for word in words:
            ids.extend(self._viterbi(word))
        if self.max_length is not None:
            room = max(self.max_length - len(self._prefix) - len(self._suffix), 0)
            del ids[room:]
        return [*self._prefix, *ids, *self._suffix]

    def encode_batch_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """`encode_ids` for each text."""
        return [self.encode_ids(text) for text in texts]

    def _viterbi(self, word: str) -> list[int]:
        """Segment one pre-tokenized word the best way; return its ids."""
        n = len(word)
        if not n:
            return []
        ids, scores, unk_score = self.ids, self.scores, self.unk_score
        best = [0.0] * (n + 1)
        start = [-1] * (n + 1)
        token = [-1] * (n + 1)
        for i in range(n):
            base = best[i]
            single = False
            for j in range(i + 1, min(n, i + self.max_chars) + 1):
                tid = ids.get(word[i:j])
                if tid is None:
                    continue
                score = base + scores[tid]
                if start[j] < 0 or score > best[j]:
                    best[j], start[j], token[j] = score, i, tid
                if j == i + 1:
                    single = True
            if not single:
                score = base + unk_score
                if start[i + 1] < 0 or score > best[i + 1]:
                    best[i + 1], start[i + 1], token[i + 1] = score, i, -1
        out: list[int] = []
        unknown = False
        end = n
        while end > 0:
            tid = token[end]
            if tid < 0 or tid == self.unk_id:
                # Adjacent unknown characters become one <unk>, as in the library.
                if not (unknown and self.fuse_unk):
                    out.append(self.unk_id if self.unk_id is not None else 0)
                unknown = True
            else:
                out.append(tid)
                unknown = False
            end = start[end]
        out.reverse()
        return out
