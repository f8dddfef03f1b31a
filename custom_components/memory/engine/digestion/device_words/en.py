"""English words of a device command, as regular-expression parts."""

from __future__ import annotations

from typing import Final

from .phrases import Phrases

PHRASES: Final = Phrases(
    lead=r"hey|ok|okay|please|now|and|also|then",
    command=r"""
        (?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)?
        (?:
            turn|switch|set|open|close|shut|lock|unlock|dim|brighten|start|
            stop|pause|resume|unpause|play|replay|activate|deactivate|
            toggle|raise|lower|increase|decrease|arm|disarm|run|cancel|mute|
            unmute|skip|next|previous|make\s+it|put\s+on|change|adjust|heat|
            cool|enable|disable|add|remove|delete|return|clean|vacuum|
            volume|what(?:'s|\s+is|\s+are)?|is|are|how|when|which|
            show(?:\s+me)?|tell\s+me|give\s+me
        )""",
    question=r"",
    greeting=r"""good\s+(?:morning|night|evening|afternoon)|thanks?|
        thank\s+you|(?:so|very)\s+much|a\s+lot|hello|hi|goodbye|bye|
        never\s*mind|cheers|great|perfect""",
    personal=r"""
        (?-i:I)|i(?=\s+(?:am|have|had|was|will|would|want|need|like|love|
            hate|prefer|think|live|work|don't|do|can|usually|always|never|
            get|go|feel|just)\b)|
        i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|our|ours|us|
        remember|remind|prefer|preference|favou?rite|like|likes|love|loves|
        hate|hates|allergic|birthday|anniversary|usually|always|never|
        wife|husband|partner|(?<!le\s)(?<!du\s)(?<!au\s)son|daughter|kid|
        kids|children|mom|mum|dad|mother|father|brother|sister|friend|dog|
        cat|grandma|grandpa|granny|grandmother|grandfather|aunt|uncle|cousin|
        baby|family|neighbou?rs?|girlfriend|boyfriend|nanny|moved|live|
        lives|work|works|vegetarian|vegan|from\s+now\s+on|
        don't|do\s+not|should|shouldn't|whenever|if|every\s+time|because|
        'cause|agreed|vacation|holidays?|weekdays|weekends|broken""",
    owned=r"""(?:my|our)\s+(?:
        timers?|alarms?|lights?|lamps?|kitchen|living\s+room|bedroom|
        bathroom|office|garage|garden|hall(?:way)?|basement|attic|room|
        house|home|heating|thermostat|fan|tv|television|music|playlist|
        speakers?|blinds|curtains|shutters|front\s+door|door|windows?|car|
        vacuum|mower|fridge|oven|dishwasher|washing\s+machine|washer|dryer|
        media|ceiling\s+light|porch|shopping\s+list|to-?do\s+list)""",
)
