"""Secrets that must never become memories: codes, passwords, PINs, keys, tokens.

Digestion redacts them from a transcript before it goes to an LLM, and drops
any candidate memory that still holds one afterwards; profiles are filtered
the same way. Patterns are deliberately greedy: a false positive loses a
memory that can be said again, a false negative keeps a secret forever.
"""

from __future__ import annotations

import re
from typing import Final

REDACTED: Final = "[redacted]"

# "password is hunter2", "the alarm code: 4512", "PIN 1234", "wifi key = x".
_LABELLED: Final = re.compile(
    r"""(?ix)
    \b(?:
        pass(?:word|code|phrase)?s? | pwd | pins? | pin\s*codes? |
        (?:alarm|door|gate|garage|safe|lock|entry|access|security|wi-?fi|
           network|unlock|secret|verification|one[-\s]?time|otp|2fa|mfa|
           recovery|backup|bank|card|cvv|cvc)\s*(?:codes?|keys?|pins?|words?) |
        codes? | api[-_\s]?keys? | access[-_\s]?keys? | secret[-_\s]?keys? |
        private[-_\s]?keys? | (?:access|bearer|auth|api|refresh|session)?[-_\s]?tokens? |
        secrets? | credentials? | cvv | cvc
    )\b  # a whole word: "pineapple" and "codependent" are not labels
    (?P<sep>
        \s*(?:[:=]|\bis\b|\bare\b|\bwas\b|\bof\b|\bto\b|\bset\s+to\b|\bbecomes?\b)?\s*
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


def redact_secrets(text: str) -> tuple[str, int]:
    """Return `text` with every secret replaced by "[redacted]", and how many."""
    text, shaped = _SHAPED.subn(REDACTED, text)
    count = shaped
    redacted: list[str] = []
    position = 0
    for match in _LABELLED.finditer(text):
        value = match.group("value")
        if value.lower().strip(".!?") in _NOT_VALUES:
            continue
        if _HARMLESS_CODES.search(text, max(0, match.start() - 20), match.start()):
            continue
        redacted.append(text[position : match.start("value")])
        redacted.append(REDACTED)
        position = match.end("value")
        count += 1
    redacted.append(text[position:])
    return "".join(redacted), count


def has_secret(text: str) -> bool:
    """Whether `text` holds anything `redact_secrets` would remove."""
    return redact_secrets(text)[1] > 0
