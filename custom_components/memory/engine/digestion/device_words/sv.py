"""Swedish words of a device command, as regular-expression parts.

Swedish "om" (if) counts only with what follows it: Dutch "om" is "at".
"""

from __future__ import annotations

from typing import Final

from .phrases import Phrases

PHRASES: Final = Phrases(
    lead=r"hej|hallå|ok|okej|snälla|vänligen|nu|och|också|sen|sedan|då",
    command=r"""
        (?:(?:kan|kunde|skulle|vill)\s+(?:du|ni)\s+
           (?:(?:snälla|vänligen)\s+)?)?
        (?:
            tänd(?:a)?|släck(?:a)?|sätt(?:a)?|stäng(?:a)?|öppna|höj(?:a)?|
            sänk(?:a)?|öka|minska|starta|stoppa|stopp|pausa|spela|
            lås(?:a)?|dimma|dämpa|aktivera|avaktivera|inaktivera|
            visa(?:\s+mig)?|säg(?:a)?(?:\s+mig)?|berätta(?:\s+för\s+mig)?|
            ge\s+mig|lägg(?:a)?|ta\s+bort|ändra|ställ(?:a)?|slå|skruva|
            vrid|fortsätt(?:a)?|återuppta|avbryt(?:a)?|radera|dra|fäll|
            hissa|tysta|dammsug(?:a)?|städa|gå\s+tillbaka|backa|hoppa|
            byt(?:a)?|
            nästa|föregående|volym(?:en)?|
            vad|hur|vilken|vilket|vilka|när|var|vart|vem|är|finns\s+det
        )""",
    question=r"",
    greeting=r"""tack|tack\s+så\s+mycket|tusen\s+tack|god\s+(?:morgon|kväll|
        natt|dag)|godnatt|godmorgon|hej\s*då|hejdå|hej|hallå|strunt\s+i\s+det|
        glöm\s+det|strunt\s+samma|strunta\s+i\s+det|toppen|perfekt|bra|
        super""",
    personal=r"""
        jag|mig|mej|min|mitt|mina|vi|oss|vår|vårt|våra|kom\s+ihåg|
        påminn\w*|minns|glöm\s+inte|anteckna|notera|föredrar|gillar|
        älskar|hatar|tycker\s+om|favorit\w*|allergisk\w*|vegetarian\w*|
        vegan\w*|födelsedag\w*|fyller\s+år|årsdag\w*|bröllopsdag\w*|alltid|
        aldrig|brukar|oftast|vanligtvis|frun|hustru\w*|mannen|maken|makan|
        sambo\w*|partner\w*|sonen|söner|dotter|dottern|döttrar|barn\w*|
        mamma\w*|pappa\w*|bror|brodern|syster\w*|vännen|vänner|kompis\w*|
        hund\w*|katt\w*|mormor|morfar|farmor|farfar|moster|faster|
        morbror|farbror|kusin\w*|bebis\w*|familj\w*|grann\w*|bor|jobbar|
        arbetar|flyttade|flyttat|hädanefter|från\s+och\s+med\s+nu|
        framöver|inte|ej|borde|bör|måste|ska|ifall|om\s+(?:det|någon|
        ingen|alla|allt|jag|vi|du|hon|han|ni|man)|eftersom|för\s+att|därför|överens|
        semester\w*|trasig\w*|sönder|varje|varannan|
        (?:mån|tis|ons|tors|fre|lör|sön)dagar(?:na)?|helger(?:na)?|
        vardagar(?:na)?""",
    owned=r"""(?:min|mitt|mina|vår|vårt|våra)\s+(?:
        timer|tidur|äggklock|väckarklock|alarm|larm|lamp|ljus|belysning|
        kök|vardagsrum|sovrum|badrum|kontor|garage|trädgård|hall|källare|
        vind|rum|hus|hem|värme|element|termostat|fläkt|tv|teve|musik|
        spellist|högtalare|persienn|gardin|rullgardin|dörr|ytterdörr|
        fönster|bil|dammsugare|gräsklippare|kylskåp|ugn|diskmaskin|
        tvättmaskin|torktumlare|inköpslist|handlingslist)\w*""",
)
