"""Words that make a request a standing rule, not a one-off command.

"Turn on the porch light when it gets dark", "lock the door every night",
"lock the door at night": each says how things should be, which digestion
must not skip. All languages in one list each.
"""

from __future__ import annotations

from typing import Final

from .phrases import TIMES

# "when" in the middle of a request makes it a rule ("turn on the porch
# light when it gets dark"); at the start it may only ask. Polish "jak" is
# "how" at the start and "when" / "as soon as" after it.
WHEN: Final = r"when|quand|cuando|quando|wanneer|kiedy|gdy|jak|när|når"
HABIT_EVERY: Final = r"(?:every|each)\s+" + TIMES
# Times of day of a standing rule: "lock the door at night" is no one-off.
NIGHTLY: Final = r"""(?:
    at\s+night|in\s+the\s+(?:evenings?|mornings?)|overnight|
    le\s+(?:soir|matin)|la\s+nuit|(?:par|pendant)\s+la\s+nuit|
    por\s+las?\s+(?:noches?|ma[ñn]anas?|tardes?)|de\s+noche|
    la\s+(?:sera|notte|mattina)|di\s+(?:sera|notte)|
    [àa]\s+noite|de\s+noite|de\s+manh[ãa]|
    w\s+nocy|nocą|na\s+noc|wieczorem|rano|rankiem|nattetid|
    på\s+(?:natten|nätterna|kvällen|kvällarna|morgonen|morgnarna)|
    om\s+(?:natten|kvällen|kvällarna|morgonen|aftenen|morgenen))"""
