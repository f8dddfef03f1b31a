"""German words of a device command, as regular-expression parts."""

from __future__ import annotations

from typing import Final

from .phrases import TIMES, Phrases

PHRASES: Final = Phrases(
    lead=r"hey|hallo|ok|okay|bitte|jetzt|und|auch|dann|noch|mal|nun|also",
    command=r"""
        (?:(?:kannst|k[öo]nntest|w[üu]rdest)\s+du|
           (?:k[öo]nnen|k[öo]nnten|w[üu]rden)\s+sie)
           (?:\s+(?:bitte|mal|vielleicht|noch))*
           (?:\s+mir\s+(?:sagen|zeigen|verraten|geben|nennen))?|
        sage?\s+mir|zeige?\s+mir|gib\s+mir|nenne?\s+mir|verrate?\s+mir|
        schalte|schalt|mache?|stelle?|setze?|[öo]ffne|oeffne|schlie(?:ß|ss)e?|
        dimme?|spiele?|starte?|stoppe?|stopp|halt|pausiere|beende|fahre?|
        erh[öo]he|erhoehe|senke|verringere|reduziere|aktiviere|deaktiviere|
        sperre|verriegel?le|entriegel?le|f[üu]ge|fuege|schreibe?|zeige?|
        drehe?|lasse?(?=\s+(?:das|die|den|der|dem|ein|eine|alle|bitte|mal)\b)|
        l[öo]sche?|loesche|verl[äa]ngere|verk[üu]rze|schicke?|
        lauter|leiser|heller|dunkler|w[äa]rmer|k[äa]lter|weiter|
        n[äa]chste[rs]?|abbrechen|lautst[äa]rke|timer|
        wie\s+viel|wieviel|wie|was|wann|wo|welche[rsmn]?|wer|ist|sind|
        l[äa]uft|brennt|gibt\s+es|hat""",
    question=r"",
    greeting=r"""guten\s+(?:morgen|abend|tag)|gute\s+nacht|danke|sch[öo]n|
        vielen\s+dank|hallo|tsch[üu]ss?|servus|moin|vergiss\s+es|egal|
        schon\s+gut|super|prima|perfekt""",
    personal=r"""
        ich|mich|mir|dir|mein|meine[nmrs]?|wir|uns|unser|unsere[nmrs]?|
        merk\w*|erinner\w*|vergiss\s+nicht|nicht\s+vergessen|notier\w*|
        notiz\w*|vegetari\w*|vegan\w*|mag|m[öo]gen|liebe|lieben|liebt|
        hasse|hasst|bevorzug\w*|lieblings\w*|allergi\w*|geburtstag\w*|
        jahrestag\w*|hochzeitstag\w*|immer|nie|niemals|normalerweise|
        meistens|gew[öo]hnlich|[üu]blicherweise|frau|mann|ehefrau|ehemann|
        partner\w*|freund\w*|sohn|tochter|kinder|kindern|mama|mutter|papa|
        vater|bruder|schwester|oma|opa|tante|onkel|cousine?|baby|familie|
        nachbar\w*|hund|katze|wohne|wohnt|wohnen|
        arbeite|arbeitet|umgezogen|ab\s+jetzt|ab\s+sofort|von\s+nun\s+an|
        in\s+zukunft|nicht|kein\w*|soll|sollte|sollst|sollen|muss|m[üu]ssen|
        wenn|sobald|falls|weil|besprochen|vereinbart|abgemacht|denk\s+dran|
        denk\s+daran|urlaub|ferien|wochenends|am\s+wochenende|kaputt|
        jedes\s+mal|jede[nmrs]?\s+"""
    + TIMES
    + r"""|montags|dienstags|mittwochs|donnerstags|freitags|samstags|
        sonntags|morgens|abends|nachts|werktags""",
    owned=r"""(?:mein|unser)\w*\s+(?:
        timer|wecker|alarm|licht|lampe|k[üu]che|wohnzimmer|schlafzimmer|
        bad|badezimmer|b[üu]ro|arbeitszimmer|garage|garten|flur|keller|
        zimmer|haus|heizung|thermostat|ventilator|fernseher|musik|playlist|
        lautsprecher|rolll[äa]den|rollladen|jalousie|vorh[äa]ng|t[üu]r|
        fenster|auto|staubsauger|rasenm[äa]her|k[üu]hlschrank|ofen|
        sp[üu]lmaschine|waschmaschine|trockner|einkaufsliste)\w*""",
)
