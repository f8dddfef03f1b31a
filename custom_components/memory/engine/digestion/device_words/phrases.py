"""What one language's words of a device command are: `Phrases`, and shared parts.

Every language's words (`device_words/<code>.py`) fill one `Phrases`;
`device_commands` matches all the languages at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

# A message is a device command when it opens with an imperative or a
# question about the home (after a politeness) and says nothing personal
# after that opening. All languages are matched at once, so a household
# that switches language needs no setting: a word that is personal in one
# language and plain in another only costs an LLM call, while a skipped
# personal statement is lost for good. So every list leans one way: openers
# are plain words of commands, personal words are many. An accent is
# optional where leaving it out changes nothing ("eteins") and required
# where it changes the meaning: Spanish "qué" asks, "que" may not; Italian
# "è" is a verb, "e" a conjunction.


@dataclass(frozen=True, slots=True)
class Phrases:
    """One language's words, as alternatives of a verbose regular expression."""

    lead: str
    """Politeness or filler before a command: "please", "bitte", "por favor"."""
    command: str
    """Opens a command or a question about the home."""
    question: str
    """Opens one only in a question (the text has a "?"): Spanish "está"."""
    greeting: str
    """Thanks, greetings, "never mind": a whole message, or before a command."""
    personal: str
    """Someone telling about themselves, their people, or how things should be."""
    owned: str
    """A thing of the home after "my": "my timer", "mein Wohnzimmer"."""


# A clitic after an imperative or infinitive: "apágala", "spegnila", "liga-a".
CLITIC: Final = r"(?:me|te|la|lo|las|los|le|les|li|ne|ci|nos)?"
# Times of a habit, after "every", "jeden", "chaque", "cada", "ogni", "elke".
TIMES: Final = r"""(?:
    day|morning|evening|night|week|weekend|weekday|workday|month|year|monday|
    tuesday|wednesday|thursday|friday|saturday|sunday|
    tag|werktag|morgen|abend|nacht|woche|wochenende|monat|jahr|montag|
    dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|
    jour|matin|soir|nuit|semaine|week-end|mois|an|ann[ée]e|lundi|mardi|
    mercredi|jeudi|vendredi|samedi|dimanche|
    d[íi]a|ma[ñn]ana|tarde|noche|semana|fin\s+de\s+semana|mes|a[ñn]o|lunes|
    martes|mi[ée]rcoles|jueves|viernes|s[áa]bado|domingo|
    giorno|giorni|mattin[ae]|ser[ae]|nott[ei]|settimana|fine\s+settimana|mese|
    anno|luned[ìi]|marted[ìi]|mercoled[ìi]|gioved[ìi]|venerd[ìi]|sabato|
    domenica|
    dag|werkdag|ochtend|middag|avond|maand|jaar|maandag|dinsdag|woensdag|
    donderdag|vrijdag|zaterdag|zondag|
    manh[ãa]|noite|m[êe]s|ano|segunda|ter[çc]a|quarta|quinta|sexta
)(?:s|es)?"""
