"""Italian words of a device command, as regular-expression parts."""

from __future__ import annotations

from typing import Final

from .phrases import CLITIC, TIMES, Phrases

# Infinitives of device verbs, after "can you" or alone ("Spegnere la luce").
_IT_VERBS: Final = r"""(?:
    accendere|spegnere|aprire|chiudere|mettere|alzare|abbassare|impostare|
    regolare|attivare|disattivare|avviare|fermare|riprodurre|bloccare|
    sbloccare|aggiungere|mostrare|dire|dare|cambiare|aumentare|diminuire|
    annullare|togliere|cancellare|stoppare|riprendere|rimuovere)"""

PHRASES: Final = Phrases(
    lead=r"""ehi|hey|ok|okay|per\s+favore|per\s+piacere|ora|adesso|e|anche|
        poi|allora|dai|senti""",
    command=r"""
        (?:mi\s+)?(?:puoi|potresti|pu[òo]|potrebbe|vuoi)\s+(?:mi\s+)?
          (?:per\s+favore\s+)?"""
    + _IT_VERBS
    + CLITIC
    + r"""|
        mi\s+(?:accendi|spegni|apri|chiudi|metti|alzi|abbassi|dici|dai|fai|
             mostri|imposti|attivi|togli|passi)|"""
    + _IT_VERBS
    + CLITIC
    + r"""|
        (?:accendi|spegni|apri|chiudi|metti|alza|abbassa|attiva|disattiva|
           avvia|ferma|riproduci|suona|aumenta|diminuisci|blocca|sblocca|
           aggiungi|mostra|annulla|cambia|togli|passa|cancella|crea|
           riavvia|riprendi|continua|interrompi|rimuovi|riporta|pulisci|
           stoppa|torna|vai)"""
    + CLITIC
    + r"""|
        (?:dim|dam|fam)(?:mi|me|lo|la|le|ne)|
        (?:imposta|regola)(?=\s+(?:il|la|lo|i|gli|le)\b|\s+l')|
        prossim[oa]|volume|timer|
        cosa|che\s+cosa|qual[ei]?|quant[oaie]|a\s+che\s+ora""",
    question=r"che|è|c'è|ci\s+sono|come|quando|dove|chi",
    greeting=r"""ciao|buon\s*giorno|buona\s*sera|buona\s*notte|grazie|mille|
        arrivederci|lascia\s+(?:perdere|stare)|niente|basta|perfetto|
        va\s+bene""",
    personal=r"""
        io|mi|me|mio|mia|miei|mie|noi|nostr[oaie]|
        ricord\w*|dimentic\w*|annota|prendi\s+nota|prefer\w*|piace|
        piacciono|amo|adoro|odio|al?lergic\w*|vegetarian[oaie]|vegan[oaie]|
        compleanno|anniversario|sempre|mai|di\s+solito|solitamente|
        generalmente|moglie|marito|compagn[oa]|fidanzat[oa]|figli[oa]?|
        figlie|bambin[oaie]|mamma|madre|pap[àa]|padre|fratell[oi]|
        sorell[ae]|amic[oa]|amici|amiche|cane|gatto|nonn[oa]|zi[oa]|
        cugin[oaie]|famiglia|vicin[oaie]|sto|ho|
        abbiamo|siamo|abito|abita|abitiamo|vivo|vive|viviamo|lavoro|lavora|
        lavoriamo|trasferit\w*|voglio|vogliamo|d'ora\s+in\s+(?:poi|avanti)|
        da\s+ora\s+in\s+poi|non|deve|devono|dovrebbe|bisogna|perch[ée]|
        poich[ée]|siccome|d'accordo|concordato|vacanz[ae]|ferie|
        giorni\s+feriali|fine\s+settimana|in\s+conto|tieni\s+presente|
        a\s+mente|rott[oaie]|guast[oaie]|ogni\s+volta|
        ogni\s+"""
    + TIMES
    + r"|tutt[ie]\s+(?:i|le)\s+"
    + TIMES,
    owned=r"""(?:mi[oae]|miei|nostr[oaie])\s+(?:
        timer|sveglia|allarme|luc[ei]|lampad\w+|cucina|soggiorno|salotto|
        camera|bagno|ufficio|studio|garage|giardino|corridoio|cantina|
        soffitta|stanza|casa|riscaldamento|termostato|ventilatore|tv|
        televisione|musica|playlist|cass[ae]|tapparelle|tende|porta|
        finestr[ae]|macchina|auto|aspirapolvere|robot|tagliaerba|frigo|
        forno|lavastoviglie|lavatrice|asciugatrice|lista\s+della\s+spesa)""",
)
