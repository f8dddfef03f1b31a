"""The words that tell a device command, per language, as regular-expression parts.

Data only: `device_commands` builds its patterns from these tables. Every
table leans towards "not a command" (see the note below).
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
_CLITIC: Final = r"(?:me|te|la|lo|las|los|le|les|li|ne|ci|nos)?"
_CLITIC_PT: Final = r"(?:-(?:o|a|os|as|lo|la|los|las))?"
# Infinitives of device verbs, after "can you" or alone ("Allumer la lumière").
_FR_VERBS: Final = r"""(?:
    allumer|[ée]teindre|ouvrir|fermer|mettre|remettre|r[ée]gler|baisser|monter|
    augmenter|diminuer|jouer|lancer|arr[êe]ter|d[ée]marrer|activer|
    d[ée]sactiver|verrouiller|d[ée]verrouiller|couper|ajouter|dire|donner|
    montrer|passer|annuler|supprimer|nettoyer|reprendre|stopper)"""
_ES_VERBS: Final = r"""(?:
    encender|apagar|abrir|cerrar|poner|subir|bajar|activar|desactivar|
    bloquear|desbloquear|reproducir|pausar|parar|detener|decir|dar|mostrar|
    cambiar|ajustar|a[ñn]adir|agregar|quitar|silenciar|cancelar|programar|
    aumentar|indicar|continuar|reanudar|eliminar|borrar)"""
_IT_VERBS: Final = r"""(?:
    accendere|spegnere|aprire|chiudere|mettere|alzare|abbassare|impostare|
    regolare|attivare|disattivare|avviare|fermare|riprodurre|bloccare|
    sbloccare|aggiungere|mostrare|dire|dare|cambiare|aumentare|diminuire|
    annullare|togliere|cancellare|stoppare|riprendere|rimuovere)"""
_PT_VERBS: Final = r"""(?:
    ligar|desligar|acender|apagar|abrir|fechar|p[ôo]r|colocar|aumentar|
    diminuir|baixar|subir|ativar|activar|desativar|desactivar|trancar|
    destrancar|tocar|pausar|parar|mudar|ajustar|definir|adicionar|mostrar|
    dizer|dar|cancelar|alterar|eliminar|retomar|continuar|reduzir|suspender)"""
# Times of a habit, after "every", "jeden", "chaque", "cada", "ogni", "elke".
_TIMES: Final = r"""(?:
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

LANGUAGES: Final[dict[str, Phrases]] = {
    "en": Phrases(
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
    ),
    "de": Phrases(
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
        + _TIMES
        + r"""|montags|dienstags|mittwochs|donnerstags|freitags|samstags|
            sonntags|morgens|abends|nachts|werktags""",
        owned=r"""(?:mein|unser)\w*\s+(?:
            timer|wecker|alarm|licht|lampe|k[üu]che|wohnzimmer|schlafzimmer|
            bad|badezimmer|b[üu]ro|arbeitszimmer|garage|garten|flur|keller|
            zimmer|haus|heizung|thermostat|ventilator|fernseher|musik|playlist|
            lautsprecher|rolll[äa]den|rollladen|jalousie|vorh[äa]ng|t[üu]r|
            fenster|auto|staubsauger|rasenm[äa]her|k[üu]hlschrank|ofen|
            sp[üu]lmaschine|waschmaschine|trockner|einkaufsliste)\w*""",
    ),
    "fr": Phrases(
        lead=r"""h[ée]|hey|ok|okay|alors|et|maintenant|aussi|puis|stp|svp|
            s'il\s+te\s+pla[îi]t|s'il\s+vous\s+pla[îi]t|dis|bon|euh""",
        command=r"""
            (?:(?:est-ce\s+que\s+)?(?:tu|vous)\s+
                 (?:peux|pourrais|pouvez|pourriez|veux|voudrais|voulez|voudriez)|
               (?:peux|pourrais|pouvez|pourriez|veux|voudrais|voulez|voudriez)
                 -(?:tu|vous))
              (?:\s+(?:s'il\s+te\s+pla[îi]t|s'il\s+vous\s+pla[îi]t|stp|svp))?
              \s+(?:(?:me|le|la|les)\s+|m'|l')?"""
        + _FR_VERBS
        + r"""|
            (?:dis|montre|donne|mets|joue|passe|lis)-moi|"""
        + _FR_VERBS
        + r"""|
            allume|[ée]teins|[ée]teint|ouvre|ferme|mets|remets|
            r[èe]gle(?=\s+(?:le|la|les)\b|\s+l')|baisse|
            monte(?=\s+(?:le|la|les)\b|\s+l')|augmente|diminue|
            joue|lance(?=\s+(?:le|la|les|un|une|du|de)\b|\s+l')|arr[êe]te|
            d[ée]marre|active|d[ée]sactive|verrouille|
            d[ée]verrouille|coupe|passe|ajoute|montre|supprime|enl[èe]ve|annule|
            nettoie|range|reprends|continue|dis|suivante?|pr[ée]c[ée]dente?|
            volume|qu'est-ce|est-ce|quel(?:le)?s?|combien|comment|où|qui|
            y\s+a-t-il|il\s+est\s+quelle|c'est\s+quoi""",
        question=r"quand|c'est",
        greeting=r"""bonjour|bonsoir|bonne\s+(?:nuit|soir[ée]e|journ[ée]e)|salut|
            merci|beaucoup|au\s+revoir|laisse\s+tomber|c'est\s+bon|parfait|
            super|d'accord""",
        personal=r"""
            je|j'\w+|moi|me|m'\w+|mon|ma|mes|nous|notre|
            souv[ei]n\w*|rappel\w*|retien\w*|note[rs]?|oubli\w*|pr[ée]f[èée]r\w*|
            aime|aimes|aimons|aiment|adore|adorons|d[ée]test\w*|favori\w*|
            allergi\w*|v[ée]g[ée]tarien\w*|v[ée]gan\w*|anniversaire|toujours|
            jamais|d'habitude|habituellement|g[ée]n[ée]ralement|souvent|femme|
            mari|conjoint\w*|fils|filles?|enfants?|maman|m[èe]re|papa|p[èe]re|
            fr[èe]re|s(?:œ|oe)ur|amie?s?|copain|copine|tante|oncle|cousine?|
            b[ée]b[ée]|famille|voisine?s?|grand-m[èe]re|grand-p[èe]re|mamie|
            papi|chien|chat|habite|
            habitons|travaille|travaillons|d[ée]m[ée]nag\w*|d[ée]sormais|
            dor[ée]navant|[àa]\s+partir\s+de\s+maintenant|ne|n'\w+|doit|
            doivent|devrait|faut|lorsque|d[èe]s\s+que|parce\s+que|puisque|
            convenu|sache[zs]?|vacances|en\s+semaine|le\s+week-end|
            cass[ée]e?s?|en\s+panne|
            chaque\s+fois|chaque\s+"""
        + _TIMES
        + r"|tou(?:te)?s\s+les\s+"
        + _TIMES,
        owned=r"""(?:mon|ma|mes|notre|nos)\s+(?:
            minuteurs?|minuteries?|alarmes?|r[ée]veil|lumi[èe]res?|lampes?|
            cuisine|salon|chambre|salle\s+de\s+bain|bureau|garage|jardin|
            couloir|cave|grenier|pi[èe]ce|maison|chauffage|thermostat|
            ventilateur|t[ée]l[ée]|musique|playlist|enceintes?|volets|stores|
            rideaux|porte|fen[êe]tres?|voiture|aspirateur|tondeuse|frigo|four|
            lave-vaisselle|lave-linge|liste\s+de\s+courses)""",
    ),
    "es": Phrases(
        lead=r"""oye|hey|ok|vale|venga|por\s+favor|ahora|y|tambi[ée]n|luego|
            entonces|a\s+ver|bueno""",
        command=r"""
            (?:me\s+)?(?:puedes|podr[íi]as|puede|podr[íi]a|quieres)\s+(?:me\s+)?
              (?:por\s+favor\s+)?"""
        + _ES_VERBS
        + _CLITIC
        + r"""|
            me\s+(?:pones|pondr[íi]as|enciendes|apagas|abres|cierras|subes|
                 bajas|dices|dir[íi]as|das|pasas|quitas|activas|muestras)|"""
        + _ES_VERBS
        + _CLITIC
        + r"""|
            (?:enci[ée]nde|ap[áa]ga|[áa]bre|ci[ée]rra|pon|s[úu]be|b[áa]ja|
               act[íi]va|desact[íi]va|bloqu[ée]a|desbloqu[ée]a|reprod[úu]ce|
               pausa|reanuda|det[ée]n|c[áa]mbia|aj[úu]sta|aum[ée]nta|
               dismin[úu]ye|a[ñn][áa]de|agr[ée]ga|mu[ée]stra|qu[íi]ta|
               sil[ée]ncia|canc[ée]la|ind[íi]ca|contin[úu]a|devu[ée]lve|
               elim[íi]na|b[óo]rra|
               enci[ée]nda|ap[áa]gue|[áa]bra|ci[ée]rre|p[óo]nga|s[úu]ba|
               b[áa]je|act[íi]ve|desact[íi]ve|canc[ée]le|mu[ée]stre|
               a[ñn][áa]da|agr[ée]gue|ind[íi]que|d[íi]ga)"""
        + _CLITIC
        + r"""|
            (?:di|da)(?:me|nos|le|les|lo|la)|siguiente|volumen|
            qué|a\s+qué|en\s+qué|cu[áa]l(?:es)?|cu[áa]nt[oa]s?|cuándo|cómo|
            d[óo]nde|qui[ée]n(?:es)?|hay\s+alg[úu]n[oa]?s?""",
        question=r"que|est[áa]|hay|cuando|como",
        greeting=r"""hola|buen[oa]s\s+(?:d[íi]as|tardes|noches)|buen\s+d[íi]a|
            (?:muchas\s+)?gracias|adi[óo]s|hasta\s+(?:luego|ma[ñn]ana)|
            olv[íi]dalo|d[ée]jalo|da\s+igual|nada|perfecto|genial|vale""",
        personal=r"""
            yo|me|mi|mis|mí|conmigo|nosotr[oa]s|nuestr[oa]s?|
            recuerd\w*|recu[ée]rd\w*|acu[ée]rd\w*|olvid\w*|apunta|anota|nota|
            prefi[ée]r\w*|prefer\w*|gusta|gustan|encanta|encantan|odio|
            favorit\w*|vegetarian[oa]s?|vegan[oa]s?|al[ée]rgic\w*|
            cumplea[ñn]os|aniversario|siempre|nunca|jam[áa]s|normalmente|
            generalmente|suele|solemos|suelo\s+\w+(?:ar|er|ir)|esposa|esposo|
            marido|mujer|pareja|novi[oa]|hij[oa]s?|ni[ñn][oa]s|mam[áa]|madre|
            pap[áa]|padre|herman[oa]s?|amig[oa]s?|perro|gato|abuel[oa]s?|
            t[íi][oa]s?|prim[oa]s?|beb[ée]|familia|vecin[oa]s?|
            soy|estoy|tengo|vivo|vive|vivimos|trabajo|trabaja|trabajamos|
            mud[ée]|mudamos|somos|estamos|tenemos|quiero|queremos|necesito|
            a\s+partir\s+de\s+ahora|de\s+ahora\s+en\s+adelante|
            no\s+(?:me|te|se|lo|la|los|las|le|les|\w+(?:es|as))|debe|
            deber[íi]a|hay\s+que|tiene\s+que|tienes\s+que|siempre\s+que|
            porque|ya\s+que|acordado|quedamos|vacaciones|entre\s+semana|
            d[íi]as\s+laborables|fines\s+de\s+semana|ten\s+en\s+cuenta|
            rot[oa]s?|estropead[oa]s?|
            cada\s+vez|cada\s+"""
        + _TIMES
        + r"|tod[oa]s\s+l[oa]s\s+"
        + _TIMES
        + r"|los\s+(?:lunes|martes|mi[ée]rcoles|jueves|viernes|s[áa]bados|domingos)",
        owned=r"""(?:mis?|nuestr[oa]s?)\s+(?:
            temporizador(?:es)?|cuenta\s+atr[áa]s|alarmas?|despertador|luz|
            luces|l[áa]mparas?|cocina|sal[óo]n|sala|dormitorio|habitaci[óo]n|
            cuarto|ba[ñn]o|oficina|despacho|garaje|jard[íi]n|pasillo|s[óo]tano|
            casa|calefacci[óo]n|termostato|ventilador|tele|televisi[óo]n|
            m[úu]sica|lista\s+de\s+(?:la\s+)?compra|altavoz|persianas?|
            cortinas?|puerta|ventanas?|coche|aspiradora|cortac[ée]sped|nevera|
            horno|lavavajillas|lavadora|secadora)""",
    ),
    "it": Phrases(
        lead=r"""ehi|hey|ok|okay|per\s+favore|per\s+piacere|ora|adesso|e|anche|
            poi|allora|dai|senti""",
        command=r"""
            (?:mi\s+)?(?:puoi|potresti|pu[òo]|potrebbe|vuoi)\s+(?:mi\s+)?
              (?:per\s+favore\s+)?"""
        + _IT_VERBS
        + _CLITIC
        + r"""|
            mi\s+(?:accendi|spegni|apri|chiudi|metti|alzi|abbassi|dici|dai|fai|
                 mostri|imposti|attivi|togli|passi)|"""
        + _IT_VERBS
        + _CLITIC
        + r"""|
            (?:accendi|spegni|apri|chiudi|metti|alza|abbassa|attiva|disattiva|
               avvia|ferma|riproduci|suona|aumenta|diminuisci|blocca|sblocca|
               aggiungi|mostra|annulla|cambia|togli|passa|cancella|crea|
               riavvia|riprendi|continua|interrompi|rimuovi|riporta|pulisci|
               stoppa|torna|vai)"""
        + _CLITIC
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
        + _TIMES
        + r"|tutt[ie]\s+(?:i|le)\s+"
        + _TIMES,
        owned=r"""(?:mi[oae]|miei|nostr[oaie])\s+(?:
            timer|sveglia|allarme|luc[ei]|lampad\w+|cucina|soggiorno|salotto|
            camera|bagno|ufficio|studio|garage|giardino|corridoio|cantina|
            soffitta|stanza|casa|riscaldamento|termostato|ventilatore|tv|
            televisione|musica|playlist|cass[ae]|tapparelle|tende|porta|
            finestr[ae]|macchina|auto|aspirapolvere|robot|tagliaerba|frigo|
            forno|lavastoviglie|lavatrice|asciugatrice|lista\s+della\s+spesa)""",
    ),
    "nl": Phrases(
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
        + _TIMES
        + r"|'s\s+(?:ochtends|middags|avonds|nachts|maandags|zondags)",
        owned=r"""(?:mijn|m'n|onze|ons)\s+(?:
            timer|kookwekker|eierwekker|wekker|alarm|licht|lamp|keuken|
            woonkamer|slaapkamer|badkamer|kantoor|werkkamer|garage|tuin|gang|
            kelder|zolder|kamer|huis|verwarming|thermostaat|ventilator|tv|
            televisie|muziek|afspeellijst|speaker|rolluik|gordijn|deur|raam|
            auto|stofzuiger|grasmaaier|koelkast|oven|vaatwasser|wasmachine|
            droger|boodschappenlijst)\w*""",
    ),
    "pt": Phrases(
        lead=r"""ei|hey|ok|por\s+favor|se\s+faz\s+favor|agora|e|tamb[ée]m|depois|
            ent[ãa]o|v[áa]|bom""",
        command=r"""
            (?:me\s+)?(?:(?:voc[êe]|tu)\s+)?
              (?:pode|podes|poderia|podia|podias|consegue|consegues|quer|queres)
              \s+(?:me\s+)?(?:por\s+favor\s+)?"""
        + _PT_VERBS
        + r"""(?:-(?:me|o|a|os|as|lo|la|los|las))?|
            me\s+(?:diz|diga|mostra|mostre|d[áa]|d[êe]|fala|fale|conta|conte|
                 p[õo]e|coloca|toca)|
            (?:diz|d[áa]|mostra|mostre|diga|conta)-me|"""
        + _PT_VERBS
        + _CLITIC_PT
        + r"""|
            (?:liga|ligue|desliga|desligue|acende|acenda|apaga|apague|abre|abra|
               fecha|feche|p[õo]e|ponha|coloca|coloque|aumenta|aumente|diminui|
               diminua|baixa|baixe|sobe|suba|ativa|activa|ative|desativa|
               desactiva|desative|tranca|tranque|destranca|toca|toque|pausa|
               retoma|muda|mude|ajusta|ajuste|adiciona|adicione|acrescenta|
               mostra|mostre|cancela|define|altera|reduz|elimina|continua|
               suspende)"""
        + _CLITIC_PT
        + r"""|
            para(?=\s+(?:o|a|os|as)\s)|pr[óo]xim[oa]|volume|
            qual|quais|o\s+que|quant[oa]s?|onde|quem|que\s+horas|
            como\s+est[áa]|h[áa]\s+alg[uú]\w*""",
        question=r"que|é|est[áa]|como|quando|h[áa]|tem|s[ãa]o",
        greeting=r"""ol[áa]|oi|bom\s+dia|boa\s+(?:tarde|noite)|
            (?:muito\s+)?obrigad[oa]|valeu|tchau|adeus|at[ée]\s+logo|esquece|
            deixa\s+(?:pra|para)\s+l[áa]|deixa\s+estar|perfeito|[óo]timo""",
        personal=r"""
            eu|me|mim|comigo|meu|minha|meus|minhas|nós|noss[oa]s?|a\s+gente|
            lembr\w*|esque[çc]\w*|anot[ae]|nota|prefir\w*|prefer\w*|gosto|
            gosta|gostamos|gostam|adoro|amo|odeio|favorit\w*|vegetarian[oa]s?|
            vegan[oa]s?|al[ée]rgic\w*|anivers[áa]rio|sempre|nunca|normalmente|
            geralmente|costum\w*|espos[ao]|marido|mulher|companheir\w*|
            namorad\w*|filh[oa]s?|crian[çc]as?|m[ãa]e|pai|pais|irm[ãa]o?s?|
            amig[oa]s?|c[ãa]o|cachorro|gato|av[óô]|ti[oa]s?|prim[oa]s?|
            beb[éê]|fam[íi]lia|vizinh[oa]s?|sou|estou|tenho|moro|mora|
            moramos|vivo|trabalho|trabalha|trabalhamos|mudei|mudamos|somos|
            estamos|temos|quero|queremos|preciso|a\s+partir\s+de\s+agora|
            daqui\s+(?:para|pra)\s+(?:a\s+)?frente|n[ãa]o|deve|devem|deveria|
            tem\s+que|tem\s+de|sempre\s+que|porque|j[áa]\s+que|visto\s+que|
            combinad[oa]|combinamos|f[ée]rias|dias\s+[úu]teis|
            fins\s+de\s+semana|avariad[oa]s?|estragad[oa]s?|toda\s+vez|
            cada\s+vez|cada\s+"""
        + _TIMES
        + r"|tod[oa]s\s+[oa]s\s+"
        + _TIMES,
        owned=r"""(?:meu|minha|meus|minhas|noss[oa]s?)\s+(?:
            temporizador(?:es)?|alarmes?|despertador|luz|luzes|candeeiros?|
            l[âa]mpadas?|cozinha|sala|quarto|casa\s+de\s+banho|banheiro|
            escrit[óo]rio|garagem|jardim|corredor|cave|por[ãa]o|s[óo]t[ãa]o|
            casa|aquecimento|termostato|ventoinha|ventilador|tv|televis[ãa]o|
            m[úu]sica|playlist|coluna|persianas?|cortinas?|porta|janelas?|
            carro|aspirador|frigor[íi]fico|geladeira|forno|lista\s+de\s+compras)""",
    ),
}
# "when" in the middle of a request makes it a rule ("turn on the porch
# light when it gets dark"); at the start it may only ask.
WHEN: Final = r"when|quand|cuando|quando|wanneer"
HABIT_EVERY: Final = r"(?:every|each)\s+" + _TIMES
# Times of day of a standing rule: "lock the door at night" is no one-off.
NIGHTLY: Final = r"""(?:
    at\s+night|in\s+the\s+(?:evenings?|mornings?)|overnight|
    le\s+(?:soir|matin)|la\s+nuit|(?:par|pendant)\s+la\s+nuit|
    por\s+las?\s+(?:noches?|ma[ñn]anas?|tardes?)|de\s+noche|
    la\s+(?:sera|notte|mattina)|di\s+(?:sera|notte)|
    [àa]\s+noite|de\s+noite|de\s+manh[ãa])"""


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
