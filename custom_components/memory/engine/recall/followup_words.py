"""The words that say an utterance carries on from the one before (`followups`).

Per language (`languages.language_code`): OPENERS start a follow-up ("and
…?", "what about …?", "und im Winter?", "et demain ?"), one or more words
long; REFERS point back at something said before wherever they stand
(third-person pronouns and possessives, "there", "then", "the same"). Lower
case, as `followups` cuts words. Articles that are also pronouns ("la", "le",
"die") are left out: they open every other sentence.
"""

from __future__ import annotations

from typing import Final


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _phrases(*phrases: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(phrase.split()) for phrase in phrases)


OPENERS: Final[dict[str, tuple[tuple[str, ...], ...]]] = {
    "en": _phrases(
        "and", "also", "but", "or", "plus", "what about", "how about", "same for"
    ),
    "de": _phrases(
        "und",
        "auch",
        "aber",
        "oder",
        "was ist mit",
        "wie ist es mit",
        "wie sieht es mit",
        "und was",
    ),
    "nl": _phrases("en", "ook", "maar", "of", "hoe zit het met", "wat met", "en wat"),
    "fr": _phrases(
        "et", "aussi", "mais", "ou", "qu'en est-il", "quid de", "pareil pour"
    ),
    "es": _phrases("y", "también", "pero", "o", "qué tal", "y qué", "lo mismo para"),
    "it": _phrases("e", "anche", "ma", "o", "che ne dici", "e per", "lo stesso per"),
    "pt": _phrases(
        "e", "também", "mas", "ou", "e quanto", "e o", "e a", "o mesmo para"
    ),
    "sv": _phrases(
        "och", "också", "men", "eller", "hur är det med", "vad sägs om", "samma för"
    ),
    "da": _phrases(
        "og", "også", "men", "eller", "hvad med", "hvad så med", "det samme for"
    ),
    "no": _phrases(
        "og", "også", "men", "eller", "hva med", "hva så med", "det samme for"
    ),
    "fi": _phrases("entä", "entäs", "ja", "myös", "mutta", "tai", "kuin myös"),
    "pl": _phrases("a", "i", "też", "także", "ale", "lub", "a co z", "to samo dla"),
    "ru": _phrases(
        "а", "и", "тоже", "также", "но", "или", "а как", "а что", "то же для"
    ),
}

REFERS: Final[dict[str, frozenset[str]]] = {
    "en": _words(
        "he she him her his hers they them their theirs it its there then that "
        "those these same too either instead"
    ),
    "de": _words(
        "er sie ihm ihn ihr ihre ihren ihrem ihrer ihnen sein seine seinen "
        "seinem seiner es dort dorthin da dann danach davor dabei damit davon "
        "dazu dafür daran darauf darüber dasselbe derselbe dieselbe gleiche "
        "auch"
    ),
    "nl": _words(
        "hij zij ze hem haar hun hen daar dan dezelfde hetzelfde ook zijn "
        "daarvan daarover"
    ),
    "fr": _words(
        "il elle ils elles lui leur leurs son sa ses là alors ça cela celui "
        "celle même aussi"
    ),
    "es": _words(
        "él ella ellos ellas su sus ahí allí entonces eso esa ese mismo misma también"
    ),
    "it": _words(
        "lui lei loro suo sua suoi sue lì là allora quello quella quelli "
        "stesso stessa anche"
    ),
    "pt": _words(
        "ele ela eles elas dele dela deles delas seu sua seus suas lá ali "
        "então isso esse essa mesmo mesma também"
    ),
    "sv": _words("han hon dem honom henne hans hennes deras där då sedan samma också"),
    "da": _words("han hun dem ham hende hans hendes deres der dér så samme også"),
    "no": _words("han hun dem ham henne hans hennes deres der da samme også"),
    "fi": _words("hän he häntä hänen heidän siellä silloin sitten sama myös"),
    "pl": _words(
        "on ona oni one jego jej ich niego niej nim nią tam wtedy ten ta tego "
        "tej sam sama samo też"
    ),
    "ru": _words(
        "он она они его её ее их него неё нее ним ней там тогда этот эта тот та тоже"
    ),
}
