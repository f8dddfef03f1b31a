"""French words of a device command, as regular-expression parts."""

from __future__ import annotations

from typing import Final

from .phrases import TIMES, Phrases

# Infinitives of device verbs, after "can you" or alone ("Allumer la lumière").
_FR_VERBS: Final = r"""(?:
    allumer|[ée]teindre|ouvrir|fermer|mettre|remettre|r[ée]gler|baisser|monter|
    augmenter|diminuer|jouer|lancer|arr[êe]ter|d[ée]marrer|activer|
    d[ée]sactiver|verrouiller|d[ée]verrouiller|couper|ajouter|dire|donner|
    montrer|passer|annuler|supprimer|nettoyer|reprendre|stopper)"""

PHRASES: Final = Phrases(
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
    + TIMES
    + r"|tou(?:te)?s\s+les\s+"
    + TIMES,
    owned=r"""(?:mon|ma|mes|notre|nos)\s+(?:
        minuteurs?|minuteries?|alarmes?|r[ée]veil|lumi[èe]res?|lampes?|
        cuisine|salon|chambre|salle\s+de\s+bain|bureau|garage|jardin|
        couloir|cave|grenier|pi[èe]ce|maison|chauffage|thermostat|
        ventilateur|t[ée]l[ée]|musique|playlist|enceintes?|volets|stores|
        rideaux|porte|fen[êe]tres?|voiture|aspirateur|tondeuse|frigo|four|
        lave-vaisselle|lave-linge|liste\s+de\s+courses)""",
)
