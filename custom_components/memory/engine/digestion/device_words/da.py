"""Danish words of a device command, as regular-expression parts.

Danish "er" (is) opens a command only in a question (it is German "he"),
and Danish "os" (us) is not personal (it is Portuguese "the").
"""

from __future__ import annotations

from typing import Final

from .phrases import Phrases

PHRASES: Final = Phrases(
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
)
