"""Text handling that knows no language: folding, content keys, text safe in a prompt.

Words are matched per language elsewhere (`analysis.py`: keyword search,
the near-duplicate and the secret checks); what is here is language-blind:
folding like FTS5's unicode61 (`fold`), content and tag normalisation
(`normalize_content`, `content_key`, `normalize_tag`), what shows nothing
(`visible`, `is_blank`).

Every stored or spoken text that goes into an LLM prompt (recall, digestion,
the consolidation question, profiles, tool results) passes `fence_safe`
first: one line, nothing invisible, no angle bracket, so it can neither fake
a line of the prompt nor close the fence it is shown in, and is measured
and cut to a token budget with `estimate_tokens` and `cut_to_tokens`.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from typing import Final
import unicodedata

_SPACE = re.compile(r"\s+")
_TAG = re.compile(r"^[\w.-]+$", re.UNICODE)


def fold(text: str) -> str:
    """Case- and accent-fold like FTS5's `unicode61 remove_diacritics 2`."""
    if text.isascii():
        return text.lower()  # the common case, and 20 times faster
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def normalize_content(text: str) -> str:
    """Collapse the differences that do not change what a memory says."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _SPACE.sub(" ", text).strip()
    return text.rstrip(" .!?;,")


def clean_content(text: str) -> str:
    r"""Drop NUL and the other control characters; tabs and line breaks stay.

    A control that breaks a line (`\r`, `\x0b`, `\x0c`, `\x1c`-`\x1f`,
    `\x85`) becomes `\n`, and `\r\n` one `\n`: words on either side stay
    apart. Every prompt shows a line break as a space (`fence_safe`).
    """
    if text.isprintable():
        return text  # the common case
    text = text.replace("\r\n", "\n")
    return "".join(
        ("\n" if char.isspace() else "")
        if unicodedata.category(char) == "Cc" and char not in "\t\n"
        else char
        for char in text
    )


def is_blank(text: str) -> bool:
    """Whether no character of `text` would show in a prompt.

    Whitespace, what `fence_safe` removes (controls, format characters,
    private-use, unassigned, the fillers), a blank Braille pattern and
    combining marks with nothing to combine with.
    """
    return all(
        char.isspace()
        or char in _BLANKS
        or _is_hidden(char)
        or unicodedata.category(char) in {"Mn", "Me"}
        for char in text
    )


def content_key(text: str) -> str:
    """Stable key of the normalised text, used for de-duplication."""
    return hashlib.sha256(normalize_content(text).encode()).hexdigest()[:32]


def normalize_tag(tag: str) -> str | None:
    """Lower-case a tag and join words with `_`; None when it is not storable."""
    tag = _SPACE.sub("_", unicodedata.normalize("NFKC", tag).strip().casefold())
    return tag if tag and _TAG.match(tag) else None


# -- text safe in a prompt ----------------------------------------------------

# What `<` and `>` become in a prompt. Every character that looks like one is
# written the same way: those NFKD maps to them (＜ ﹤ ≮ and their pairs) and
# single angle brackets of other blocks (˂ ᐸ ‹ 〈 ❬ ❮ ❰ ⟨ ⧼ 〈).
ANGLE_OPEN: Final = "\u2039"  # ‹
ANGLE_CLOSE: Final = "\u203a"  # ›
_LOOKS_LIKE_OPEN: Final = frozenset(
    "<\u02c2\u1438\u2039\u226e\u2329\u276c\u276e\u2770\u27e8\u29fc\u3008\ufe64\uff1c"
)
_LOOKS_LIKE_CLOSE: Final = frozenset(
    ">\u02c3\u1433\u203a\u226f\u232a\u276d\u276f\u2771\u27e9\u29fd\u3009\ufe65\uff1e"
)
# Control, format (zero-width, direction, tags), private-use, surrogate and
# unassigned characters go; line and paragraph separators (and the controls
# that are whitespace) become a space. Unassigned ones go too: a code point
# this Python does not know (an emoji newer than its Unicode 16 tables) may
# be read as anything by the model, and is shown as nothing here.
INVISIBLE_CATEGORIES: Final = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})
# Letters and marks that show nothing: the combining grapheme joiner, Hangul
# fillers, Khmer inherent vowels, and the variation selectors (Mongolian,
# standard, and the supplement).
_FILLER_RANGES: Final = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xE0100, 0xE01EF),
)
FILLERS: Final = frozenset(
    chr(code) for first, last in _FILLER_RANGES for code in range(first, last + 1)
)
# A braille pattern with no dots is a blank: a space, as in braille text.
_BLANKS: Final = frozenset("\u2800")
# Printable characters beyond ASCII that are not shown as they are: one
# search finds them (ASCII `<` `>` are replaced in any case).
_NOT_AS_IS: Final = re.compile(
    "["
    + "".join(f"{chr(first)}-{chr(last)}" for first, last in _FILLER_RANGES)
    + re.escape(
        "".join(sorted((_BLANKS | _LOOKS_LIKE_OPEN | _LOOKS_LIKE_CLOSE) - {"<", ">"}))
    )
    + "]"
)
# From a character beyond ASCII to the next ASCII control or angle: one run
# to look at, mostly printable as it is.
_NON_ASCII: Final = re.compile(r"[^\x00-\x7f][^\x00-\x1f\x7f<>]*")
# ASCII: the controls go (the whitespace ones become a space), and `<` `>`.
_ASCII_UNSAFE: Final = re.compile(r"[\x00-\x1f\x7f<>]")
_ASCII: Final = {
    **{chr(code): (" " if chr(code).isspace() else "") for code in range(0x20)},
    "\x7f": "",
    "<": ANGLE_OPEN,
    ">": ANGLE_CLOSE,
}


@functools.lru_cache(maxsize=4096)
def _shown_as(char: str) -> str:
    """Show one character in a prompt: itself, a space, an angle, or nothing."""
    if char.isspace() or char in _BLANKS:
        return " "
    if char in _LOOKS_LIKE_OPEN:
        return ANGLE_OPEN
    if char in _LOOKS_LIKE_CLOSE:
        return ANGLE_CLOSE
    if unicodedata.category(char) in INVISIBLE_CATEGORIES or char in FILLERS:
        return ""
    return char


def _show(match: re.Match[str]) -> str:
    return "".join(map(_shown_as, match.group()))


def _ascii(match: re.Match[str]) -> str:
    return _ASCII[match.group()]


@functools.lru_cache(maxsize=4096)
def _is_hidden(char: str) -> bool:
    """Whether a character shows nothing and is not whitespace."""
    return not char.isspace() and (
        unicodedata.category(char) in INVISIBLE_CATEGORIES or char in FILLERS
    )


def visible(text: str) -> str:
    """Return `text` without the characters that show nothing.

    Whitespace and line breaks stay. A word split by a zero-width space or a
    soft hyphen ("pass\u200bword") reads as one word again, so a pattern
    that looks for it finds it.
    """
    if text.isprintable() and not _NOT_AS_IS.search(text):
        return text
    return "".join(char for char in text if not _is_hidden(char))


def fence_safe(text: str) -> str:
    """Make text safe to show as data in a prompt, on one line.

    Invisible characters go (control, format, private-use, unassigned, the
    fillers), every kind of whitespace and line break becomes one space, and
    `<` `>` and their look-alikes become `‹` `›`: no text can start a line of
    its own, hide words, or open or close a tag. Idempotent.
    """
    text = " ".join(text.split())
    # `isprintable` is False for every category that goes or becomes a space:
    # most text needs nothing more than its angles escaped.
    if not text.isprintable() or _NOT_AS_IS.search(text):
        text = _NON_ASCII.sub(_show, text)
        text = " ".join(_ASCII_UNSAFE.sub(_ascii, text).split())
    return text.replace("<", ANGLE_OPEN).replace(">", ANGLE_CLOSE)


def estimate_tokens(text: str) -> int:
    """Estimate how many tokens `text` costs an LLM (rounded up).

    No tokenizer is at hand for every model, so: 4 ASCII characters a token
    (English text in Llama 3 / Qwen / GPT tokenizers runs 4 to 4.5), and one
    token for every other character (accents, CJK, emoji), which errs high.
    """
    ascii_chars = len(text.encode("ascii", "ignore"))
    return math.ceil(ascii_chars / 4) + len(text) - ascii_chars


def cut_to_tokens(text: str, max_tokens: int, *, sentences: bool = False) -> str:
    """Keep as many words as fit in `max_tokens`, marked as cut (`…`).

    With `sentences`, whole sentences that fit are kept first, unmarked (a
    profile reads better ending on a full stop); only when not even the first
    one fits are words cut. Empty when not even one word fits.
    """
    if estimate_tokens(text) <= max_tokens:
        return text
    if sentences:
        kept = ""
        for sentence in (
            text.replace("! ", "!\n")
            .replace("? ", "?\n")
            .replace(". ", ".\n")
            .splitlines()
        ):
            candidate = f"{kept} {sentence}".strip()
            if estimate_tokens(candidate) > max_tokens:
                break
            kept = candidate
        if kept:
            return kept
    # The estimate only grows with words kept: search for the most that fit.
    words = text.split(" ")
    low, high = 0, len(words)
    while low < high:
        middle = (low + high + 1) // 2
        if estimate_tokens(" ".join(words[:middle]) + " …") <= max_tokens:
            low = middle
        else:
            high = middle - 1
    return " ".join(words[:low]) + " …" if low else ""
