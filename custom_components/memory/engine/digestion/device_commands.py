"""Which messages are device commands, in ten languages at once.

Digestion skips a conversation of nothing but device commands ("turn on the
kitchen light", "Schalte das Licht ein"): it is not worth an LLM call. A
false skip loses a personal statement for good while a missed skip costs one
call, so every table (`device_words`, one module per language) leans towards
"not a command"; this module builds the patterns from them and matches.
"""

from __future__ import annotations

import re
from typing import Final

from .device_words import (
    HABIT_EVERY,
    LANGUAGES,
    NIGHTLY,
    SHORT_DE,
    SHORT_EN_NL,
    WHEN,
    Phrases,
)

_WORD: Final = re.compile(r"\w+", re.UNICODE)


def _alternatives(parts: list[str]) -> str:
    return "|".join(f"(?:{part})" for part in parts if part.strip())


def _command_pattern(languages: list[Phrases]) -> re.Pattern[str]:
    """Match the opening of a command in any of `languages`."""
    leads = _alternatives([phrases.lead for phrases in languages])
    commands = _alternatives([phrases.command for phrases in languages])
    questions = _alternatives([phrases.question for phrases in languages])
    greetings = _alternatives([phrases.greeting for phrases in languages])
    # A greeting is a command only on its own: "thanks, the plumber comes on
    # Friday" tells something.
    return re.compile(
        rf"""(?isx)^[\s¿¡"'«“„]*
        (?:(?:{leads}|{greetings})[\s,.!]+)*
        (?:
            (?:{commands})(?!\w)
          | (?:{questions})(?!\w)(?=.*\?)
          | (?:{greetings})[\s,.!?]*$
        )"""
    )


def _personal_pattern(languages: list[Phrases]) -> re.Pattern[str]:
    """Find a personal word of any of `languages`."""
    words = _alternatives([phrases.personal for phrases in languages])
    return re.compile(
        rf"""(?ix)
        (?<!\w)(?:{words}|{HABIT_EVERY}|{NIGHTLY})(?!\w)
        | \w[\s,]+(?:{WHEN})\b"""
    )


def _polite_pattern(languages: list[Phrases]) -> re.Pattern[str]:
    """Match nothing but politeness: "please", "por favor", "danke schön"."""
    polite = _alternatives(
        [phrases.lead for phrases in languages]
        + [phrases.greeting for phrases in languages]
    )
    return re.compile(rf"(?isx)^[\s,.!?]*(?:(?:{polite})[\s,.!?]*)+$")


def _owned_pattern(languages: list[Phrases]) -> re.Pattern[str]:
    """Find a thing of the home after "my" in any of `languages`."""
    owned = _alternatives([phrases.owned for phrases in languages])
    return re.compile(rf"(?ix)(?<!\w)(?:{owned})(?!\w)")


_ALL: Final = list(LANGUAGES.values())
_COMMAND: Final = _command_pattern(_ALL)
_PERSONAL: Final = _personal_pattern(_ALL)
_OWNED: Final = _owned_pattern(_ALL)
_POLITE: Final = _polite_pattern(_ALL)
# Where a request goes on with another clause or sentence.
_CLAUSE_BREAK: Final = re.compile(r"[,;:.!?]+(?=\s|$)|\s[-–—]+\s")
# Home Assistant's built-in intents: a tool call of these is a device command.
_INTENT_TOOL: Final = re.compile(r"^(?:Hass|Get(?:LiveContext|DateTime)|todo_)")
# Device commands are short.
MAX_COMMAND_WORDS: Final = 14

# A short command with no verb, or with its verb left out before a
# separable particle: "Kitchen lights off", "Licht im Flur aus", "Lamp in de
# keuken uit". Every word before the particle must be a plain word of the
# home (English and Dutch: a closed list) or, in German, a capitalised noun
# that is not a verb, a time or a pronoun: "The porch light stays on", "Mias
# Licht bleibt an" and "Lena macht das Licht aus" tell something.
_SHORT_MAX_WORDS: Final = 6
_SHORT: Final = re.compile(
    rf"""(?x)^[\s"'«“„]*(?:
        (?i:(?:{SHORT_EN_NL}\s+){{1,5}}
            (?:on|off|up|down|aan|uit|open|dicht|omhoog|omlaag|hoger|lager))
      | (?:{SHORT_DE}\s+){{1,5}}
        (?i:an|aus|ein|auf|zu|hoch|runter|heller|dunkler|lauter|leiser|
            w[äa]rmer|k[äa]lter|h[öo]her|hoeher|niedriger)
    )(?i:[\s,]+(?:please|bitte|alsjeblieft|alstublieft))?[\s.!?]*$"""
)


def _personal_after_command(text: str) -> tuple[bool, bool]:
    """Whether `text` opens like a command, and says something personal.

    Neither the opening nor a thing of the home after "my" counts as
    personal: "tell me", Spanish "¿me pones música?", Italian "mi accendi
    la luce?" and "stop my timer" only say who asks.
    """
    text = text.replace("’", "'").replace("ʼ", "'")
    head = _COMMAND.match(text)
    rest = _OWNED.sub(" ", text[head.end() :] if head else text)
    return head is not None, _PERSONAL.search(rest) is not None


def _tells_more(text: str) -> bool:
    """Whether a clause after the first is neither a command nor a courtesy.

    "Turn off the light, Lena has an exam tomorrow" tells something worth
    remembering with no personal word in it; "..., please" does not.
    """
    for clause in _CLAUSE_BREAK.split(text)[1:]:
        if len(_WORD.findall(clause)) <= 2 or _POLITE.match(clause):
            continue
        if not _COMMAND.match(clause):
            return True
    return False


def is_device_command(text: str) -> bool:
    """Tell a short imperative or question about the home, nothing personal."""
    words = _WORD.findall(text)
    if not words or len(words) > MAX_COMMAND_WORDS:
        return False
    command, personal = _personal_after_command(text)
    if not command and len(words) <= _SHORT_MAX_WORDS:
        command = _SHORT.match(text) is not None
    return command and not personal and not _tells_more(text)


def says_something_personal(text: str) -> bool:
    """Whether `text` tells about someone or how things should be.

    The opening of a command and a thing of the home after "my" do not
    count: "tell me", "stop my timer".
    """
    return _personal_after_command(text)[1]


def is_intent_tool(name: str) -> bool:
    """Whether a tool is one of Home Assistant's built-in intents."""
    return _INTENT_TOOL.match(name) is not None


def word_count(text: str) -> int:
    """Words in `text`, as the command length limit counts them."""
    return len(_WORD.findall(text))
