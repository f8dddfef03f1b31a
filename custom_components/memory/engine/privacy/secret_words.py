"""The words of codes and passwords in every language the analysers support.

`secrets.py` finds a secret as a label ("code", "Passwort", "hasło",
"пароль", "密码"), perhaps what it is for ("of the gate", "do bramy",
"от сигнализации"), a verb or sign that gives its value ("is", "ist", "to",
"on", "är", "是", "は", ":") and the value: digits, a run of three or more
spoken digits ("vier fünf eins zwei"), or, after such a verb, a word of six
or more characters that is not one of the words that merely describe a
code ("falsch", "vergessen"). German, Dutch, Scandinavian and Finnish glue
the label to what it opens ("Garagencode", "alarmkoden", "ovikoodi"), and
Scandinavian adds the article at the end ("passordet"): a label may be the
tail of a longer word, unless that word is a harmless code ("Postcode",
"felkod", "virhekoodi"). Chinese and Japanese have no spaces: their labels
stand anywhere and the value follows directly ("车库密码是4512"); Korean
glues particles and endings to them ("비밀번호는 4512야").
"""

from __future__ import annotations

import re
from typing import Final

# Labels that may end a compound, each with the endings it takes: plural,
# case and the Scandinavian definite article ("koden", "passordet").
_COMPOUND_LABELS: Final = (
    r"codes?|coden?",  # en, de, nl, fr: Garagencode, alarmcode, digicode
    r"pin(?:kod|kode|koodi)(?:en|erna|er|ne|n|ni|a)?",  # sv, da, no, fi
    r"kod(?:en|er|erna)?",  # sv: larmkod, koden ("szkody" ends otherwise)
    r"kode(?:rne|ne|n|r)?",  # da, no: adgangskode, koden
    r"koodi(?:nsa|mme|ksi|lla|ni|si|n|a|t)?",  # fi: ovikoodi, koodini
    r"passw(?:o|ö)r(?:t|d)(?:ene|et|es|e|s)?",  # de, en, da: WLAN-Passwort
    r"kennw(?:o|ö)rt(?:es|e|s)?|geheimzahl(?:en)?|geheimnummer",  # de
    r"kombination(?:en)?",  # de, sv, da, no: Zahlenkombination
    r"wachtwoord(?:en)?",  # nl
    r"l(?:ö|o)senord(?:et|en)?",  # sv
    r"kodeord(?:ene|et)?|passord(?:ene|et)?",  # da, no
    r"salasana(?:mme|ni|si|n|a|t)?|tunnusluku(?:ni)?|tunnusluvun",  # fi
    r"код(?:ом|а|у|е|ы)?|пароль|пароля|паролю|паролем|пароле",  # ru: пин-код
)
# Labels that are whole words only: a longer word ending like them is
# something else (Polish "szkody" is damage, not a code).
_WORD_LABELS: Final = (
    r"pins?|kod|kodu|kodem|kodzie|has(?:ł|l)(?:o|a|em)|ha(?:ś|s)le",  # pl
    r"mot\s+de\s+passe|contrase(?:ñ|n)as?|c(?:ó|o)digos?|codice|senhas?",
    # a safe's combination
    r"combinations?|combinaison|combinaci(?:ó|o)n|combinazione|combinatie",
    r"combina(?:ç|c)(?:ã|a)o|kombinacja|kombinacji|комбинация|комбинации",
    r"palavra[-\s]passe|parola\s+d['’]ordine",
)
# Words that say what a code is for ("of the gate", "do bramy"); after one,
# up to three words may stand before the verb or the value.
_FOR_WORDS: Final = (
    r"of|for|to|on|at|in|"  # en
    r"f(?:ü|u)r|von|vom|der|des|zum|zur|am|an|"  # de
    r"van|voor|bij|"  # nl
    r"de|du|des|pour|"  # fr
    r"del|para|"  # es
    r"di|della|per|"  # it
    r"do|da|dos|das|"  # pt
    r"od|"  # pl
    r"till|f(?:ö|o)r|p(?:å|a)|til|"  # sv, da, no
    r"от|для|к|на|в|"  # ru
    # Possessives before what is owned: "die Geheimzahl meiner Bankkarte"
    r"meiner|meines|unserer|unseres|deiner|seiner|ihrer|"
    r"mojej|naszej|mojego|naszego|моей|моего|нашей|нашего"
)
# Possessives after it: "PIN-koden min er", "kod mój to".
_MINE: Final = (
    r"min|mitt|mine|din|ditt|v(?:å|a)r|v(?:å|a)rt|mit|dit|vores|sin|"
    r"m(?:ó|o)j|moja|moje|nasz|мой|моя|наш|наша"
)
# Verbs and signs that give a code its value ("is", "to", "on", "—").
_GIVES: Final = (
    r"[:=：]|—|–|"
    r"is|are|was|became|becomes?|set\s+to|(?:was\s+|has\s+)?changed?\s+to|"  # en
    r"ist|lautet|war|hei(?:ß|ss)t|wird|"  # de
    r"luidt|wordt|"  # nl
    r"est|c['’]est|"  # fr
    r"es|era|"  # es
    r"è|é|"  # it, pt
    r"to|jest|brzmi|"  # pl
    r"(?:ä|a)r|blir|var|lyder|"  # sv
    r"er|bliver|"  # da, no
    r"on|oli|"  # fi
    r"это|будет|был"  # ru
)
# "is now", "ist jetzt", "er nå", "ist übrigens".
_NOW: Final = (
    r"now|jetzt|nu|nå|nyt|maintenant|ahora|ora|agora|teraz|"
    r"теперь|сейчас|still|noch|immer\s+noch|fortfarande|stadig|yh(?:ä|a)|"
    r"by\s+the\s+way|btw|actually|übrigens|uebrigens|trouwens|d['’]ailleurs|"
    r"por\s+cierto|comunque|aliás|zresztą|förresten|forresten|muuten|кстати"
)
# Spoken digits, 0 to 9 (and the spoken alternatives), in each language.
_DIGIT_WORDS: Final = (
    r"zero|oh|one|two|three|four|five|six|seven|eight|nine|"  # en
    r"null|eins|ein|zwei|zwo|drei|vier|f(?:ü|u)nf|sechs|sieben|acht|neun|"  # de
    r"nul|een|(?:é|e)(?:é|e)n|twee|drie|vijf|zes|zeven|negen|"  # nl
    r"z(?:é|e)ro|un|une|deux|trois|quatre|cinq|sept|huit|neuf|"  # fr
    r"cero|uno|una|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|"  # es
    r"due|tre|quattro|cinque|sei|sette|otto|nove|"  # it
    r"um|duas|dois|tr(?:ê|e)s|quatro|sete|oito|"  # pt
    r"jeden|jedna|dwa|trzy|cztery|pi(?:ę|e)(?:ć|c)|sze(?:ś|s)(?:ć|c)|siedem|"
    r"osiem|dziewi(?:ę|e)(?:ć|c)|"  # pl
    r"noll|ett|en|tv(?:å|a)|fyra|fem|sex|sju|(?:å|a)tta|nio|"  # sv
    r"et|to|fire|seks|syv|otte|ni|(?:å|a)tte|"  # da, no
    r"nolla|yksi|kaksi|kolme|nelj(?:ä|a)|viisi|kuusi|seitsem(?:ä|a)n|"
    r"kahdeksan|yhdeks(?:ä|a)n|"  # fi
    r"ноль|нуль|один|одна|два|две|три|четыре|пять|шесть|семь|восемь|девять"
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words a code or password may be said to be that are not its value.
NOT_VALUES: Final = _words(
    # en (the labels of `secrets._LABELLED` have their own list too)
    "wrong changed expired invalid forgotten written stored secret private "
    "unknown different somewhere simple strong needed required missing correct "
    "printed hidden nowhere always inside outside behind actually really probably "
    # what may follow the verb before the value ("is now", "est maintenant")
    "maintenant toujours encore ahora todavía ancora adesso agora ainda teraz "
    "nadal fortfarande stadig fortsatt теперь сейчас "
    # de
    "falsch richtig korrekt vergessen geändert abgelaufen geheim unbekannt "
    "irgendwo notiert gespeichert sicher einfach schwierig anders derselbe "
    "dasselbe dieselbe gleich zurückgesetzt gesperrt aufgeschrieben "
    # nl
    "verkeerd vergeten veranderd gewijzigd verlopen onbekend ergens opgeschreven "
    "hetzelfde "
    # fr
    "faux oublié changé expiré inconnu quelque incorrect différent noté écrit "
    # es, it, pt
    "incorrecto incorrecta olvidado olvidada cambiado secreto sbagliato sbagliata "
    "dimenticato cambiato segreto errado errada esquecido esquecida mudou "
    "diferente alterado alterada mudado "
    # pl
    "błędne błędny zapomniane zapomniany zmienione zmieniony tajne tajny "
    "nieprawidłowe nieprawidłowy gdzieś zapisane zapisany inny inne prawidłowe "
    # sv
    "fel felaktigt glömt glömd ändrat ändrad hemligt hemlig okänt okänd "
    "någonstans samma nedskrivet utgånget annorlunda bytt "
    # da, no
    "forkert feil glemt ændret endret hemmelig hemmeligt ukendt ukjent samme "
    "skrevet nedskrevet udløbet utløpt anderledes annerledes byttet skiftet et "
    "sted noget noe "
    # fi
    "väärä väärin unohtunut unohdettu vaihdettu muuttunut salainen tuntematon "
    "jossain sama kirjoitettu vanhentunut erilainen oikea oikein "
    # ru
    "неверный неправильный забыт забыли изменён изменен секретный неизвестен "
    "где-то тот такой другой записан устарел сложный простой "
)
# A compound's first part that makes its code harmless: postal, error,
# discount, bar, QR and source codes ("Postcode", "felkod", "virhekoodi"),
# and words that merely end like a label ("decode", "skode").
HARMLESS_PREFIXES: Final = _words(
    "post zip bar qr de en uni op s area dress promo morse source country colour "
    "color error discount status airport flight postal fehler farb länder landes "
    "rabatt gutschein quell strich programm aktions maschinen fout korting "
    "kortings kleur streepjes bron land lands fel färg streck käll kläd fejl feil "
    "rabat streg strek kilde farve farge virhe alennus viiva lähde maa väri puku "
    "posti alue промо штрих "
)
# A word just before a label ("zip code", "QR-Code") or the first word of
# what it is for ("kod pocztowy", "код ошибки", "code d'erreur") that makes
# it harmless.
HARMLESS_WORDS: Final = _words(
    "zip postal post area country error status qr bar product promo discount "
    "airport flight dress source morse colour color language region postale "
    "pocztowy pocztowego błędu kreskowy rabatowy promocyjny kraju ошибки ошибка "
    "страны города региона товара erreur barres barras barre route fiscale fiscal "
    "couleur erro errore errori sconto descuento desconto área país pays paese "
    "postais référence reference fehler farb fel fejl feil virhe штрих промо "
)


def _alternation(parts: tuple[str, ...] | str) -> str:
    return parts if isinstance(parts, str) else "|".join(parts)


# A word of letters (hyphens and apostrophes inside): "Tablet-PIN", "d'accès".
_WORD: Final = r"[^\W\d_](?:[^\W\d_]|['’\-](?=[^\W\d_]))*(?![\w])"
# Months: "the password in March 2024" is a date, not a code for March.
_MONTHS: Final = (
    r"jan(?:uary|uar|uari|vier|eiro)?|feb(?:ruary|ruar|ruari)?|f(?:é|e)vrier|"
    r"fevereiro|febbraio|febrero|march|m(?:ä|a)rz|maart|mars|marts|marzo|"
    r"mar(?:ç|c)o|april|avril|abril|aprile|may|mai|mei|maj|mayo|maggio|maio|"
    r"june?|juni|juin|junio|giugno|junho|july|juli|juillet|julio|luglio|julho|"
    r"aug(?:ust|usti|ustus)?|ao(?:û|u)t|agosto|sept?(?:ember)?|septembre|"
    r"septiembre|settembre|setembro|o[ck]t(?:ober|obre)?|ottobre|outubro|"
    r"octubre|nov(?:ember|embre)?|novembro|noviembre|de[cz](?:ember)?|"
    r"d(?:é|e)cembre|diciembre|dicembre|dezembro|gennaio|enero"
)
# Not a word of what a code is for: a verb that gives the value, a digit,
# a month.
_NOT_TAIL: Final = rf"(?!(?:{_GIVES}|{_DIGIT_WORDS}|{_NOW}|{_MONTHS})(?![\w]))"
# A value: spoken digits, digits with spaces between, a word holding a
# digit (three digits, or digits and letters, when no verb or sign gives
# it: "Kod do bramy zmieniliśmy 3 maja" is a date), or, after a verb or sign and at the end of
# what is said, a word of six or more characters ("Passordet er sommerfugl",
# not "Salasana on jääkaapin ovessa").
_TOKEN: Final = r"""[^\s"'`,;!?«»„“”]*\d(?:[^\s"'`,;«»„“”]*[^\s"'`,;.!?:«»„“”])?"""  # noqa: S105 - a pattern
_VALUE: Final = rf"""
    (?P<value>
        (?:\b(?:{_DIGIT_WORDS})\b|\d+)(?:[\s,\-]+(?:\b(?:{_DIGIT_WORDS})\b|\d+)){{2,}}
            (?![^\W\d_])
      | \d{{1,6}}(?:[ \-]\d{{1,6}})+\b
      | (?(gives){_TOKEN}|(?=\S*\d\S*\d\S*\d|\S*[^\W\d_]\S*\d|\S*\d\S*[^\W\d_]){_TOKEN})
      | (?(gives)
            (?!(?:{"|".join(sorted(NOT_VALUES, key=len, reverse=True))})(?![\w\-]))
            (?![\[])[^\s"'`,;.!?«»„“”]{{6,}}(?=\s*(?:$|[,.;:!?)»“”"]))
        |(?!))
    )
"""
WORDED: Final = re.compile(
    rf"""(?ix)
    (?<![\w\-])
    (?:
        (?P<prefix>(?:[^\W\d_]+-)*[^\W\d_]*?)(?:{_alternation(_COMPOUND_LABELS)})
      | (?:{_alternation(_WORD_LABELS)})
      | codes?\s+(?:secret|pin|d['’]acc(?:è|e)s)  # fr
      | (?:[^\W\d_]+-)+pins?  # "Tablet-PIN" (a bare tail "pin" is "Chopin")
    )
    (?![\w])
    # What the code is for: "for the gate", "do bramy", or (Russian, with
    # no preposition) one word: "код домофона".
    (?P<tail>
        # "for the gate", "do bramy", "de l'alarme", "koden min"
        (?:\s+(?:{_FOR_WORDS})(?![\w])|\s+(?:dell|dall|d|l)['’])
        (?:\s*(?<![^\s'’]){_NOT_TAIL}{_WORD}){{1,5}}?
      | \s+(?:{_MINE})(?![\w])
        # a bare word or two before a colon or a dash: "Codice allarme:"
      | (?:\s+{_NOT_TAIL}{_WORD}){{1,2}}(?=\s*[:=：—–])
        # Russian and Polish say it in the genitive: "код домофона",
        # "kod alarmu", "PIN tabletu babci"
      | (?:\s+{_NOT_TAIL}(?:[а-яё]+|[^\W\d_]+(?:u|a|y|i|ów|ego|iej))(?![\w])){{1,2}}
        # a name before the verb: "mot de passe Netflix est"
      | \s+(?-i:[A-Z])[\w\-]*(?=\s+(?:{_GIVES})(?![\w]))
    )?
    (?P<sep>
        (?:\s+(?:{_NOW})(?![\w]))?  # "ahora es", "agora é"
        \s*(?P<gives>(?:{_GIVES})(?![\w]))?
        (?:\s+(?:{_NOW})(?![\w]))?
        \s*(?:["'`«»„“”‚‘]\s*)?
    )
    {_VALUE}
    """
)
# Something that opens with a number: "the key box opens with 2580",
# "la caja fuerte se abre con 8-0-3-6". Three digits at least.
OPENS: Final = re.compile(
    rf"""(?ix)
    (?<![\w])
    (?:
        (?:opens?|opened|unlocks?|unlocked)\s+with
      | (?:öffnet|öffnen|aufgeht)\s+(?:sich\s+)?mit|geht\s+mit(?=\s+[\d\-\s]+\s+auf)
      | (?:gaat\s+open|opent|openen)\s+met
      | s['’]ouvre\s+avec|ouvre\s+avec
      | (?:se\s+)?abre(?:-se)?\s+c(?:on|om)
      | si\s+apre\s+con|apre\s+con
      | (?:öppnas|öppnar|går\s+upp)\s+med|(?:åbnes|åbner|åpnes|åpner)\s+med
      | otwiera\s+się(?:\s+kodem|\s+szyfrem)?
      | (?:aukeaa|avautuu)(?:\s+koodilla|\s+numerolla)?
      | открывается(?:\s+кодом|\s+кодом|\s+паролем)?
    )
    (?:\s+(?:the\s+)?(?:code|number|pin)\b)?
    \s*
    (?P<value>
        (?:\b(?:{_DIGIT_WORDS})\b|\d+)(?:[\s,\-]+(?:\b(?:{_DIGIT_WORDS})\b|\d+)){{2,}}
            (?![^\W\d_])
      | \d{{1,6}}(?:[ \-]\d{{1,6}})+\b
      | \d{{3,}}(?![\w])
    )
    """
)
# A part of every label of `WORDED` and verb of `OPENS`, lower-cased: a text
# with none of them (most) is not searched by those two at all.
HINTS: Final = _words(
    "cod kod kood pin pass kennw contrase geheim kombina combina wachtw senord "
    "salasan tunnusl код парол комбина has haś digo senha parola open unlock "
    "öffne aufgeht geht ouvre abre apre öppna går åbne åpne otwiera aukeaa "
    "avautuu открыва"
)


# Chinese, Japanese and Korean: the label, what gives its value, the value.
CJK: Final = re.compile(
    r"""(?x)
    (?P<label>
        密码|密碼|口令|验证码|驗證碼|门禁码|門禁碼|开门码|開門碼|安全码|安全碼|暗码|
        暗証番号|暗証コード|パスワード|パスコード|合言葉|ロック番号|コード|
        비밀번호|비번|암호|패스워드|핀\s?번호|인증\s?번호|도어락\s?번호|코드
    )
    (?P<sep>\s*
        (?P<gives>是|为|為|改成了?|改为|改為|设为|設為|设置为|設置為|变成了?|
           は|が|を|も|은|는|이|가|을|를|도|[:：=])?
        \s*(?:[「『“"]\s*)?
    )
    (?P<value>
        [零〇一二三四五六七八九幺两兩]{3,}
      | [공영일이삼사오육칠팔구]{3,}(?=야|이야|입니다|예요|이에요|[\s.,!?]|$)
      | [0-9０-９A-Za-z!@#$%^&*_\-.]*[0-9０-９][0-9０-９A-Za-z!@#$%^&*_\-]*
      | (?(gives)[A-Za-z][A-Za-z!@#$%^&*_\-]{5,}|(?!))
    )
    (?=$|[\s。．、，,.!！?？」』”"）)]|です|だ|で|に|。
        # Korean endings: "4512야", "4512입니다", "8642로 바꿨어" (not "4자리")
        |(?:입니다|이에요|예요|에요|이야|야|이다|이고|이며|이라고|라고|으로|로|요|고)(?![가-힣]))
    """
)
# Digits or spoken digits that go on after a value of digits: "4 5 1 2".
CONTINUED: Final = re.compile(rf"(?i)(?:[ \-]+(?:\d+|(?:{_DIGIT_WORDS}))(?![\w]))+")
# A value that may go on like that.
DIGIT: Final = re.compile(rf"(?i)\d+|(?:{_DIGIT_WORDS})")
# Before a CJK label: what makes "コード" or "코드" a harmless code.
CJK_HARMLESS: Final = re.compile(
    r"(?:エラー|QR|ＱＲ|バー|カラー|ドレス|ソース|国|地域|郵便|에러|오류|바|QR|우편)\s?$"
)
