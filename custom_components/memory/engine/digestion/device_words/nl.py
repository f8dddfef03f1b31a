"""Dutch words of a device command, as regular-expression parts."""

from __future__ import annotations

from typing import Final

from .phrases import TIMES, Phrases

PHRASES: Final = Phrases(
    lead=r"""h[ée]|hey|hoi|ok|ok[ée]|okay|alsjeblieft|alstublieft|
        a\.?u\.?b\.?|nu|en|ook|dan|even|graag|nou|zeg""",
    command=r"""
        (?:(?:kun|kan|wil|zou)\s+(?:je|jij)|(?:kunt|wilt|zou)\s+u)
          (?:\s+(?:even|alsjeblieft|alstublieft|misschien|nog))*
          (?:\s+me\s+(?:zeggen|vertellen|laten\s+(?:zien|horen)|geven|tonen))?|
        zeg\s+me|vertel\s+me|geef\s+me|toon\s+me|laat\s+me\s+(?:zien|horen)|
        zet|doe|schakel|open|sluit|dim|speel|stop|start|pauzeer|hervat|draai|
        verhoog|verlaag|activeer|deactiveer|vergrendel|ontgrendel|voeg|
        toon(?=\s+(?:de|het|een|alle)\b)|
        maak|annuleer|stuur|verkort|verleng|begin|demp|haal|verwijder|wis|
        stofzuig|maai|volgende|vorige|volume|timer|
        wat|hoe|hoeveel|is|waar|welke?|wie|staat|staan|brandt|branden""",
    question=r"zijn|wanneer",
    greeting=r"""goede?n?\s*(?:morgen|middag|avond|nacht)|welterusten|
        dank\s+je(?:\s+wel)?|dankjewel|dankje|dank\s+u(?:\s+wel)?|bedankt|
        hallo|hoi|doei|tot\s+ziens|laat\s+maar|maakt\s+niet\s+uit|prima|
        top|perfect""",
    personal=r"""
        ik|mij|me|mijn|m'n|wij|we|ons|onze|
        onthoud\w*|herinner\w*|vergeet|noteer|notitie|voorkeur|favoriet\w*|
        lievelings\w*|houd?\s+van|houden\s+van|hekel|allergisch|
        vegetari[ëe]r|veganist|verjaardag|jarig|trouwdag|altijd|nooit|
        meestal|gewoonlijk|normaal\s+gesproken|vrouw|man|echtgeno\w*|
        partner|zoon|dochter|kinderen|mama|moeder|papa|vader|broer|zus|
        zuster|vriend|vriendin|hond|kat|oma|opa|tante|oom|neef|baby|
        familie|buren|buurman|buurvrouw|woon|woont|wonen|werk|
        werkt|werken|verhuisd|voortaan|vanaf\s+nu|niet|geen|moet|moeten|
        als|zodra|omdat|want|aangezien|afgesproken|vakantie|doordeweeks|
        in\s+het\s+weekend|graag|kapot|defect|elke\s+keer|iedere\s+keer|
        (?:elke|iedere)\s+"""
    + TIMES
    + r"|'s\s+(?:ochtends|middags|avonds|nachts|maandags|zondags)",
    owned=r"""(?:mijn|m'n|onze|ons)\s+(?:
        timer|kookwekker|eierwekker|wekker|alarm|licht|lamp|keuken|
        woonkamer|slaapkamer|badkamer|kantoor|werkkamer|garage|tuin|gang|
        kelder|zolder|kamer|huis|verwarming|thermostaat|ventilator|tv|
        televisie|muziek|afspeellijst|speaker|rolluik|gordijn|deur|raam|
        auto|stofzuiger|grasmaaier|koelkast|oven|vaatwasser|wasmachine|
        droger|boodschappenlijst)\w*""",
)
