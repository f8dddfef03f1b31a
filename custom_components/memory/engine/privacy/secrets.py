"""Secrets that must never become memories: codes, passwords, PINs, keys, tokens.

Digestion redacts them from a transcript before it goes to an LLM, and drops
any candidate memory that still holds one afterwards; profiles are filtered
the same way. Every text sent to an embedding provider is redacted first
(`providers.EmbeddingProvider.embed`), and a memory recalled to a speaker
who is not identified in its scope shows "[redacted]" where its value was.
Patterns are deliberately greedy: a false positive loses a memory that can
be said again, a false negative keeps a secret forever. Labels are known in
every language the analysers support, and in Chinese, Japanese and Korean
(`secret_words.py`): compounds ("Garagencode", "ovikoodi"), spoken digits
("vier fünf eins zwei") and values glued to the label ("密码是4512").
`tests/engine/data/secrets/` holds the sentences it is measured on.
"""

from __future__ import annotations

from collections.abc import Iterator
import re
from typing import Final

from ..languages import query_finds
from ..text import visible
from .secret_words import (
    CJK,
    CJK_HARMLESS,
    CONTINUED,
    DIGIT,
    HARMLESS_PREFIXES,
    HARMLESS_WORDS,
    HINTS,
    NOT_VALUES,
    OPENS,
    WORDED,
)

REDACTED: Final = "[redacted]"
# Raise when the detector finds secrets it did not find before: vectors of
# stored rows made from what it now redacts are made again
# (`secret_recheck.py`). 2: every analysed language, Chinese, Japanese, Korean.
DETECTOR_VERSION: Final = 2

# "password is hunter2", "the alarm code: 4512", "PIN 1234", "wifi key = x".
_LABELLED: Final = re.compile(
    r"""(?ix)
    \b(?:
        pass(?:word|code|phrase)?s? | pwd | pins? | pin\s*codes? |
        (?:alarm|door|gate|garage|safe|lock|entry|access|security|wi-?fi|
           network|unlock|secret|verification|one[-\s]?time|otp|2fa|mfa|
           recovery|backup|bank|card|cvv|cvc)\s*(?:codes?|keys?|pins?|words?|
           combinations?) |
        codes? | api[-_\s]?keys? | access[-_\s]?keys? | secret[-_\s]?keys? |
        private[-_\s]?keys? | (?:access|bearer|auth|api|refresh|session)?[-_\s]?tokens? |
        secrets? | credentials? | cvv | cvc |
        # German, French, Spanish, Italian, Dutch, Portuguese: password, PIN
        # and code words of households that talk to Assist in those.
        passw(?:o|ö)rt | kennwort | geheimzahl | zugangscode | alarmcode |
        t(?:ü|u)rcode | mot\s+de\s+passe | code\s+secret | contrase(?:ñ|n)a |
        c(?:ó|o)digo | clave | parola\s+d[’']?ordine | codice | wachtwoord |
        toegangscode | senha | pincode
    )\b  # a whole word: "pineapple" and "codependent" are not labels
    # "code of the safe", "código de la alarma", "Code der Haustür". A whole
    # word: "del cancello" is not "de" followed by "l cancello".
    (?:\s+(?:(?:of|for|de|du|des|der|van|da|do|di|del|della)\b|dell['’])
        (?:\s+(?:the|la|le|les|het|de|die|das|il|a|o)|\s+l['’])?\s*[^\W\d_]+)?
    (?P<sep>
        \s*(?:[:=]|\bis\b|\bare\b|\bwas\b|\bof\b|\bto\b|\bset\s+to\b|\bbecomes?\b|
            \bist\b|\blautet\b|\best\b|\bes\b|\b[eèé]\b|\bis\s+nu\b)?\s*
        (?:["'`]\s*)?
    )
    (?P<value>[^\s"'`,;]*\d[^\s"'`,;]*|[A-Za-z0-9!@#$%^&*()_+\-=./\\|<>?~]{6,})
    """
)
# Words a labelled value may be that are not secrets ("the code is wrong").
_NOT_VALUES: Final = frozenset(
    {
        "wrong",
        "right",
        "correct",
        "incorrect",
        "changed",
        "expired",
        "invalid",
        "missing",
        "unknown",
        "working",
        "broken",
        "somewhere",
        "written",
        "stored",
        "saved",
        "secret",
        "private",
        "different",
        "required",
        "needed",
        "because",
        "something",
        "anything",
        "nothing",
        "please",
        "remember",
        "forgotten",
        "forgot",
        "becomes",
        "changes",
        "protected",
        # The same in the other languages the labels cover, and the verbs
        # that may stand between a label and its value ("Code lautet 4711").
        "lautet",
        "postal",
        "postale",
        "falsch",
        "richtig",
        "korrekt",
        "vergessen",
        "incorrecto",
        "incorrecta",
        "olvidado",
        "olvidada",
        "sbagliato",
        "sbagliata",
        "vergeten",
        "errado",
        "errada",
        "esquecido",
        "esquecida",
    }
)
# Well-known key and token formats, with or without a label.
_SHAPED: Final = re.compile(
    r"""(?x)
    \b(?:
        sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,} |          # OpenAI / Anthropic
        AIza[0-9A-Za-z_\-]{30,} |                       # Google
        gh[pousr]_[A-Za-z0-9]{30,} |                    # GitHub
        github_pat_[A-Za-z0-9_]{30,} |
        xox[abprs]-[A-Za-z0-9-]{10,} |                  # Slack
        AKIA[0-9A-Z]{16} |                              # AWS access key id
        eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}  # JWT
    )
    | -----BEGIN[A-Z ]*PRIVATE\ KEY-----[\s\S]*?(?:-----END[A-Z ]*PRIVATE\ KEY-----|$)
    | \b(?=[A-Za-z0-9_\-]{32,}\b)(?=[A-Za-z_\-]*\d)(?=[0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{32,}\b
    """
)


# "zip code 97201" and "error code 404" are not secrets.
_HARMLESS_CODES: Final = re.compile(
    r"(?i)\b(?:zip|postal|post|area|country|error|status|colou?r|dress|language|"
    r"region|source|qr|bar|product|promo|discount|airport|flight)\s*$"
)


_LETTERS: Final = re.compile(r"[^\W\d_]+")
_CLAUSE_ENDS: Final = re.compile(r"""\s*(?:$|[,.;:!?)»“”"'`])""")


def _labelled_spans(text: str) -> Iterator[tuple[int, int]]:
    """Values after the English and Romance labels of `_LABELLED`."""
    for match in _LABELLED.finditer(text):
        value = match.group("value")
        if value.lower().strip(".!?") in _NOT_VALUES | NOT_VALUES:
            continue
        gives = match.group("sep").strip().strip("\"'`")
        if not any(c.isdigit() for c in value) and (
            not gives or not _CLAUSE_ENDS.match(text, match.end("value"))
        ):
            # A word right after a label is its object, not a value: "the
            # code of the alarm", "code word". Values without digits need
            # an "is", ":" or "=", and end what is said: "the password is
            # shared by 4 people" says how it is used.
            continue
        if _HARMLESS_CODES.search(text, max(0, match.start() - 20), match.start()):
            continue
        # "código de error E15", "codice di errore E15"
        said = _LETTERS.findall(text[match.start() : match.start("value")])
        if any(word.lower() in HARMLESS_WORDS for word in said):
            continue
        yield _continued(text, *match.span("value"))


def _continued(text: str, start: int, end: int) -> tuple[int, int]:
    """Extend a value of digits over the digits said after it: "1 3 5 7"."""
    if DIGIT.fullmatch(text, start, end) and (more := CONTINUED.match(text, end)):
        return start, more.end()
    return start, end


def _harmless_prefix(prefix: str) -> bool:
    """Whether a compound's first part makes its code harmless ("Postcode")."""
    part = prefix.lower().replace("-", "")
    return part in HARMLESS_PREFIXES or any(
        part.endswith(harmless) for harmless in HARMLESS_PREFIXES if len(harmless) > 3
    )


def _worded_spans(text: str) -> Iterator[tuple[int, int]]:
    """Values after the labels of every language, compounds included."""
    for match in WORDED.finditer(text):
        if _harmless_prefix(match.group("prefix") or ""):
            continue
        before = _LETTERS.findall(text[max(0, match.start() - 20) : match.start()])
        said = [*before[-1:], *_LETTERS.findall(match.group("tail") or "")]
        if any(word.lower() in HARMLESS_WORDS for word in said):
            continue
        yield match.span("value")


def _cjk_spans(text: str) -> Iterator[tuple[int, int]]:
    """Values after Chinese, Japanese and Korean labels, spaced or not."""
    for match in CJK.finditer(text):
        if not CJK_HARMLESS.search(text[max(0, match.start() - 4) : match.start()]):
            yield _continued(text, *match.span("value"))


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping spans as one: two rules finding the same value count once."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def redact_secrets(text: str) -> tuple[str, int]:
    """Return `text` with every secret replaced by "[redacted]", and how many.

    Characters that show nothing are removed first: a zero-width space or a
    soft hyphen inside "password" or "code" must not hide what follows.
    """
    text, count = _SHAPED.subn(REDACTED, visible(text))
    spans = [*_labelled_spans(text), *_cjk_spans(text)]
    lowered = text.lower()
    if any(hint in lowered for hint in HINTS):
        spans.extend(_worded_spans(text))
        spans.extend(match.span("value") for match in OPENS.finditer(text))
    spans = _merged(spans)
    redacted: list[str] = []
    position = 0
    for start, end in spans:
        redacted.append(text[position:start])
        redacted.append(REDACTED)
        position = end
    redacted.append(text[position:])
    return "".join(redacted), count + len(spans)


def redacted(text: str) -> str:
    """Return `text` with its secret values replaced, every other word kept.

    "The garage door code is 7731" becomes "The garage door code is
    [redacted]": whoever reads it learns there is a code, not the code.
    Redacting twice changes nothing more.
    """
    return redact_secrets(text)[0]


def found_without_secrets(
    query: str, text: str, language: str, *, query_language: str | None = None
) -> bool:
    """Whether `query` has a word of `text` other than its secret values.

    A keyword search for "7731" finds "The garage door code is 7731" by the
    code alone: shown redacted, the hit would still tell a guesser that the
    guess was right. Matched the way keyword search matches words
    (`analysis.query_finds`): the text in its `language`, the query in
    that one and in `query_language`, whose stop words ("ist", "est") are
    no words of the text.
    """
    languages = [language] if query_language is None else [query_language, language]
    return query_finds(query, languages, redacted(text), language)


def has_secret(text: str) -> bool:
    """Whether `text` holds anything `redact_secrets` would remove."""
    return redact_secrets(text)[1] > 0
