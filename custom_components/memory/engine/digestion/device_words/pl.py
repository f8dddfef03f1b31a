"""Polish words of a device command, as regular-expression parts.

Polish imperfective imperatives ("włączaj", "zamykaj") say "always do" and
are left out: only the perfective ones ("włącz", "zamknij") open a command.
"""

from __future__ import annotations

from typing import Final

from .phrases import Phrases

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

PHRASES: Final = Phrases(
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
)
