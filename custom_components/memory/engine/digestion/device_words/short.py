"""Plain words of the home in short commands with no verb: "Kitchen lights off".

English and Dutch are a closed list; German also takes a capitalised noun
that is not a verb, a time or a pronoun (`device_commands._SHORT`).
"""

from __future__ import annotations

from typing import Final

# Plain words of the home before a separable particle, for short commands
# with no verb (`device_commands._SHORT`).
SHORT_EN_NL: Final = r"""(?:
    the|all|a|and|in|of|please|hey|ok|okay|now|
    lights?|lamps?|ceiling|desk|floor|table|night|reading|led|strip|kitchen|
    living|room|bedroom|bathroom|hall(?:way)?|garage|office|porch|garden|
    basement|attic|upstairs|downstairs|dining|stairs|front|back|patio|study|
    laundry|door|doors|gate|windows?|tv|television|fans?|heating|heater|
    radio|music|speakers?|blinds|shutters|curtains|volume|ac|air|
    conditioning|thermostat|vacuum|coffee|machine|kettle|sound|boiler|
    de|het|een|op|van|alle|alles|en|nu|even|alsjeblieft|boven|beneden|
    licht(?:en)?|lamp(?:en|je|jes)?|plafondlamp|buitenlamp|verwarming|
    gordijn(?:en)?|rolluik(?:en)?|raam|ramen|deur(?:en)?|poort|televisie|
    ventilator|muziek|keuken|woonkamer|slaapkamer|badkamer|gang|hal|zolder|
    kelder|tuin|kantoor|overloop|eetkamer|werkkamer|wc|toilet|afzuigkap|
    airco|stofzuiger|zonnescherm)"""
SHORT_DE: Final = r"""(?:
    (?i:der|die|das|den|dem|des|im|in|am|vom|von|zum|zur|beim|alle|alles|
       ganze[nmrs]?|und|bitte|mal|jetzt|oben|unten|licht(?:er)?|lampen?|
       heizung|rolll[äa]den|rollos?|jalousien?|fenster|t[üu]r|tor|
       fernseher|radio|musik|ventilator|k[üu]che|wohnzimmer|schlafzimmer|
       bad|badezimmer|flur|keller|garten|b[üu]ro)|
    (?!(?:Bleib\w*|Blieb\w*|Ist|Sind|War|Waren|Wird|Werden|Wurde\w*|
         Geh\w*|Ging\w*|Komm\w*|Kam\w*|Steh\w*|Stand\w*|Hat|Haben|
         Hatte\w*|Muss|Soll\w*|Darf|Kann|Macht|L[äa]ss\w*|Heute|Morgen|
         Abend|Nacht|Mittag|Fr[üu]h|Sp[äa]ter|Gleich|Wieder|Noch|Schon|
         Uhr|Montag|Dienstag|Mittwoch|Donnerstag|Freitag|Samstag|Sonntag|
         Wochenende|Er|Sie|Es|Ihr|Man|Jemand|Nur|Ab|Bis|Um|Seit|Nach|
         Vor)(?!\w))
    [A-ZÄÖÜ][^\W\d_]*)"""
