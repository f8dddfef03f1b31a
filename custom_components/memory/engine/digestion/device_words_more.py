"""The words that tell a device command in Polish, Swedish and Danish.

Data only, like `device_words` (which holds the first seven languages and
the note on how every table leans towards "not a command"); kept apart so
each module stays short. `device_commands` matches all ten languages at
once.

Beside that note: a word of one of these languages must not be plain in
another. So Danish "er" (is) opens a command only in a question (it is
German "he"), Danish "os" (us) is not personal (it is Portuguese "the"),
and Swedish "om" (if) only with what follows it (Dutch "om" is "at").
Polish imperfective imperatives ("włączaj", "zamykaj") say "always do" and
are left out: only the perfective ones ("włącz", "zamknij") open a command.
"""

from __future__ import annotations

from typing import Final

from .device_words import Phrases

# Polish infinitives after "can you" ("Możesz zgasić światło?").
_PL_VERBS: Final = r"""(?:
    włączyć|wyłączyć|zapalić|zgasić|otworzyć|zamknąć|ustawić|zmienić|
    podnieść|opuścić|zwiększyć|zmniejszyć|podgłośnić|ściszyć|przyciszyć|
    uruchomić|zatrzymać|wstrzymać|wznowić|puścić|odtworzyć|zagrać|pokazać|
    powiedzieć|podać|dodać|usunąć|anulować|zablokować|odblokować|wyciszyć|
    rozjaśnić|przyciemnić|odkurzyć|posprzątać)"""
# Times after "co" (every): "co tydzień", "co rano".
_PL_TIMES: Final = r"""(?:
    dzień|dnia|rano|wieczór|noc|tydzień|weekend|miesiąc|rok|godzinę|
    poniedziałek|wtorek|środę|czwartek|piątek|sobotę|niedzielę)"""

MORE_LANGUAGES: Final[dict[str, Phrases]] = {
    "pl": Phrases(
        lead=r"hej|halo|ok|okej|proszę|teraz|i|też|także|potem|no|to",
        command=r"""
            (?:czy\s+)?(?:możesz|mógłbyś|mogłabyś|możecie|
                mógłby\s+pan|mogłaby\s+pani)(?:\s+proszę)?\s+(?:mi\s+)?"""
        + _PL_VERBS
        + r"""|
            (?:włącz|wyłącz|zapal|zgaś|otwórz|zamknij|ustaw|przestaw|zmień|
               podnieś|opuść|zwiększ|zmniejsz|podgłośnij|ścisz|przycisz|
               uruchom|zatrzymaj|wstrzymaj|wznów|puść|odtwórz|zagraj|pokaż|
               powiedz|podaj|dodaj|dołóż|usuń|skasuj|anuluj|zablokuj|odblokuj|
               wycisz|rozjaśnij|przyciemnij|odkurz|posprzątaj|przywróć|wróć|
               zastopuj|uśpij|przełącz|sprawdź|zakończ|przerwij)(?:\s+mi)?|
            następn\w*|poprzedni\w*|głośniej|ciszej|jaśniej|ciemniej|cieplej|
            zimniej|głośność|
            jak(?:a|i|ie|ą|iego|iej)?|ile|któr[aey]|którego|gdzie|kto|czy|kiedy|
            co(?!\s+"""
        + _PL_TIMES
        + r""")""",
        question=r"",
        greeting=r"""dzięki|dziękuję|dziękuje|bardzo|cześć|dzień\s+dobry|
            dobry\s+wieczór|dobranoc|do\s+widzenia|nieważne|nie\s+ważne|
            super|świetnie|idealnie|pa""",
        personal=r"""
            ja|mnie|mi|mną|mój|moja|moje|moi|moją|mojego|mojej|moim|moich|my|
            nas|nam|nasz\w*|pamiętaj\w*|zapamiętaj\w*|przypomni\w*|zapisz|
            zanotuj|wol[ęi]|wolimy|lubi\w*|lubię|kocha\w*|kocham|uwielbia\w*|
            nienawidz\w*|nie\s+cierpi\w*|ulubion\w*|uczulon\w*|alergi\w*|
            wegetaria\w*|wegan\w*|urodzin\w*|rocznic\w*|imienin\w*|zawsze|
            nigdy|zwykle|zazwyczaj|przeważnie|żona|żony|żonie|mąż|męża|mężem|
            partner\w*|syn\w*|córk\w*|dzieci|dzieck\w*|mama|mamy|mamie|matk\w*|
            tata|taty|tacie|ojc\w*|ojciec|brat\w*|siostr\w*|przyjaci\w*|
            kolega|koleżank\w*|pies|psa|psem|kot|kota|kotem|babci\w*|dziad\w*|
            ciocia|ciotk\w*|wujek|wujk\w*|kuzyn\w*|rodzin\w*|sąsiad\w*|
            mieszka\w*|pracuj\w*|przeprowadzi\w*|od\s+teraz|od\s+dzi(?:ś|siaj)|
            nie|powinien|powinna|powinno|powinni|musi|muszą|trzeba|należy|
            jeśli|jeżeli|bo|ponieważ|dlatego|umówi\w*|urlop\w*|wakacj\w*|
            zepsu\w*|nie\s+działa|każd\w*|codziennie|co\s+"""
        + _PL_TIMES
        + r"""|w\s+(?:poniedziałki|wtorki|środy|czwartki|piątki|soboty|
            niedziele|weekendy|dni\s+robocze|święta)|we\s+wtorki|weekendami""",
        owned=r"""(?:mój|moja|moje|moim|mojej|mojego|moją|moich|moi|nasz\w*)\s+(?:
            minutnik|timer|licznik|stoper|budzik|alarm|światł|lamp|kuchni|
            salon|sypialni|łazienk|biur|garaż|ogr[óo]d|korytarz|piwnic|strych|
            pok[óo]j|dom|ogrzewani|termostat|wentylator|telewizor|muzyk|
            playlist|głośnik|rolet|żaluzj|zasłon|drzwi|okn|samoch|odkurzacz|
            kosiark|lodówk|piekarnik|zmywark|pralk|suszark|list\w*\s+zakupów)\w*""",
    ),
    "sv": Phrases(
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
    ),
    "da": Phrases(
        lead=r"hej|hallo|ok|okay|nu|og|også|så|lige|venligst",
        command=r"""
            (?:(?:kan|vil|gider)\s+(?:du|I)(?:\s+(?:lige|venligst|godt))*\s+)?
            (?:
                tænd(?:e)?|sluk(?:ke)?|sæt(?:te)?|luk(?:ke)?|åbn(?:e)?|åben|
                skru(?:e)?|hæv(?:e)?|sænk(?:e)?|start(?:e)?|stop(?:pe)?|stope|
                pause|spil(?:le)?|afspil(?:le)?|lås(?:e)?|dæmp(?:e)?|
                aktiv[ée]r(?:e)?|deaktiv[ée]r(?:e)?|vise|vis\s+mig|
                sig(?:e)?(?:\s+mig)?|fortæl(?:le)?(?:\s+mig)?|giv\s+mig|
                tilføj(?:e)?|fjern(?:e)?|slet(?:te)?|skift(?:e)?|ændr(?:e)?|
                indstil(?:le)?|juster(?:e)?|annuller(?:e)?|afbryd(?:e)?|
                genoptag(?:e)?|fortsæt(?:te)?|kør(?:e)?|rul(?:le)?|læg|
                støvsug(?:e)?|rengør|rens|spring\s+(?:over|tilbage|frem)|
                midlertidig|
                næste|forrige|lydstyrke(?:n)?|
                hvad|hvordan|hvor(?:\s+meget|\s+mange)?|hvilken|hvilket|hvilke|
                hvem|hvornår|er\s+der
            )""",
        question=r"er|findes",
        greeting=r"""tak|tusind\s+tak|mange\s+tak|god\s*morgen|god\s*aften|
            god\s*nat|goddag|hej\s*hej|farvel|glem\s+det|lige\s+meget|
            det\s+er\s+fint|super|perfekt|fint|fedt|skønt""",
        personal=r"""
            jeg|mig|min|mine|vi|vores|husk\w*|påmind\w*|glem\s+ikke|
            noter|skriv\s+ned|foretrækker|kan\s+lide|elsker|hader|yndlings\w*|
            favorit\w*|allergisk\w*|vegetar\w*|veganer\w*|fødselsdag\w*|
            bryllupsdag\w*|jubilæum\w*|altid|aldrig|plejer|normalt|som\s+regel|
            konen|kone|hustru|manden|kæreste\w*|partner\w*|søn|sønnen|sønner|
            datter|datteren|døtre|børn\w*|barn\w*|moren|faren|mormor|farmor|
            morfar|farfar|broren|bror|søster\w*|vennen|venner|veninde\w*|
            hund\w*|katten|katte\w*|moster|faster|onkel|kusine|fætter|baby|
            familie\w*|nabo\w*|bor|arbejder|flyttet|flyttede|fremover|
            fra\s+nu\s+af|ikke|skal|skulle|bør|burde|hvis|fordi|eftersom|
            aftalt|ferie\w*|i\s+stykker|virker\s+ikke|hver|hvert|
            (?:man|tirs|ons|tors|fre|lør|søn)dage(?:ne)?|
            om\s+(?:man|tirs|ons|tors|fre|lør|søn)dagen|hverdage(?:ne)?|
            weekender(?:ne)?|i\s+weekenden?""",
        owned=r"""(?:min|mit|mine|vores)\s+(?:
            timer|nedtælling|æggeur|vækkeur|alarm|lys|lampe|køkken|stue|
            soveværelse|badeværelse|kontor|garage|have|gang|kælder|loft|
            værelse|hus|hjem|varme|radiator|termostat|ventilator|fjernsyn|tv|
            musik|playliste|højttaler|persienne|gardin|rullegardin|dør|
            hoveddør|vindue|bil|støvsuger|robotstøvsuger|plæneklipper|
            køleskab|ovn|opvaskemaskine|vaskemaskine|tørretumbler|
            indkøbsliste)\w*""",
    ),
}
# "when" in the middle of a request makes it a rule (see `device_words.WHEN`);
# Polish "jak" is "how" at the start and "when" / "as soon as" after it.
MORE_WHEN: Final = r"kiedy|gdy|jak|när|når"
# Times of day of a standing rule (see `device_words.NIGHTLY`).
MORE_NIGHTLY: Final = r"""(?:
    w\s+nocy|nocą|na\s+noc|wieczorem|rano|rankiem|nattetid|
    på\s+(?:natten|nätterna|kvällen|kvällarna|morgonen|morgnarna)|
    om\s+(?:natten|kvällen|kvällarna|morgonen|aftenen|morgenen))"""
