"""Tests of the per-language keyword analysis, against real SQLite FTS5.

Each household example is searched the way the engine searches: the
memories' `index_terms` in an FTS5 column tokenized by `unicode61
remove_diacritics 2`, the question's `query_terms` OR'ed, and per word of
`compound_groups` the longest head (prefix) and tail (exact) that the
index's vocabulary holds. Ranked by bm25, the right memory comes first, and
the question's function words are not searched at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
import sqlite3
import sys
import threading
import unicodedata

from hypothesis import given, settings, strategies as st
import pytest
import snowballstemmer  # type: ignore[import-untyped]

from custom_components.memory.engine.languages.analysis import (
    ANALYSIS_VERSION,
    MAX_QUERY_TERMS,
    compound_groups,
    compound_parts,
    index_columns,
    index_terms,
    query_terms,
    query_terms_in,
)
from custom_components.memory.engine.languages.compounds import MAX_PARTS_PER_WORD
from custom_components.memory.engine.languages.tags import ANALYSED
from custom_components.memory.engine.languages.words import fold_char, stem

TOKENIZER = "unicode61 remove_diacritics 2"


@pytest.fixture(name="fts")
def fixture_fts() -> Iterator[sqlite3.Connection]:
    """Give an in-memory FTS5 table `t(x)` with its vocabulary views."""
    with closing(sqlite3.connect(":memory:")) as connection:
        connection.execute(
            f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{TOKENIZER}')"
        )
        connection.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
        connection.execute("CREATE VIRTUAL TABLE i USING fts5vocab(t, 'instance')")
        yield connection


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def search(
    fts: sqlite3.Connection, memories: list[str], question: str, language: str
) -> list[int]:
    """Rowids (0-based memory indexes) the question finds, best first."""
    fts.execute("DELETE FROM t")
    fts.executemany(
        "INSERT INTO t(rowid, x) VALUES (?, ?)",
        [(at, index_terms(text, language)) for at, text in enumerate(memories)],
    )
    vocabulary = [row[0] for row in fts.execute("SELECT term FROM v")]
    phrases = [_quoted(term) for term in query_terms(question, language)]
    for group in compound_groups(question, language):
        heads = [t for t, kind in group if kind == "prefix"]
        tails = [t for t, kind in group if kind == "exact"]
        head = next(
            (h for h in heads if any(v.startswith(h) for v in vocabulary)), None
        )
        tail = next((t for t in tails if t in vocabulary), None)
        if head is not None:
            phrases.append(_quoted(head) + "*")
        if tail is not None:
            phrases.append(_quoted(tail))
    if not phrases:
        return []
    rows = fts.execute(
        "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid",
        (" OR ".join(phrases),),
    )
    return [row[0] for row in rows]


# (language, memories, question, the memory it is about, its function words)
HOUSEHOLD: list[tuple[str, list[str], list[tuple[str, int, set[str]]]]] = [
    (
        "de",
        [
            "Leo feiert seinen Geburtstag am 14. Mai mit einer Gartenparty.",
            "Die Restmülltonne wird jeden zweiten Dienstag geleert.",
            "Der Schornsteinfeger kommt im März.",
            "Oma kommt jeden Sonntag zum Kaffee.",
            "Der Heizöltank im Keller wurde im Oktober gefüllt.",
            "Wann ist das Paket da? Es ist noch nicht da.",
        ],
        [
            ("Wann ist Leos Geburtstagsfeier?", 0, {"wann", "ist"}),
            ("Wann kommt die Müllabfuhr?", 1, {"wann", "die"}),
            ("Wie voll ist der Öltank?", 4, {"wie", "ist", "der"}),
        ],
    ),
    (
        "fr",
        [
            "Mia a cours de natation le mercredi à la piscine.",
            (
                "Quand il pleut, est-ce que le jardinier vient ? Ce que Paul en"
                " pense, c'est que oui."
            ),
            "L'eau du chauffe-eau est coupée le lundi.",
            "Paul est allergique aux arachides.",
        ],
        [
            ("Quand est-ce que Mia va nager ?", 0, {"quand", "est", "ce", "que"}),
            ("Qui est allergique aux arachides ?", 3, {"qui", "est", "aux"}),
        ],
    ),
    (
        "es",
        [
            "Mia es alérgica a los cacahuetes, no los come nunca.",
            "Mia puede usar pantallas una hora al día.",
            "El fontanero viene el jueves.",
        ],
        [("¿Qué no puede comer Mia?", 0, {"qué", "no", "puede", "que"})],
    ),
    (
        "nl",
        [
            "De stookolietank in de kelder is in oktober bijgevuld.",
            "De vuilnisbak wordt op dinsdag geleegd.",
            "Wanneer is de auto voor het laatst gewassen? Dat is in mei gedaan.",
        ],
        [("Wanneer is de olietank gevuld?", 0, {"wanneer", "is", "de"})],
    ),
    (
        "it",
        [
            "Mia va in piscina il martedì e il giovedì.",
            "Quando piove, chi porta fuori il cane? Lo porta Luca.",
            "La lavatrice fa rumore quando centrifuga.",
        ],
        [("Quando va in piscina Mia?", 0, {"quando", "in"})],
    ),
    (
        "pt",
        [
            "O aniversário da Ana é no dia 3 de maio.",
            "Quando chove, quem leva o cão à rua? É o Pedro.",
            "A máquina de lavar loiça avariou.",
        ],
        [("Quando é o aniversário da Ana?", 0, {"quando", "é", "o", "da"})],
    ),
    (
        "pl",
        [
            "Mia ma lekcje pływania w środy na basenie.",
            "Kiedy pada deszcz, kto wyprowadza psa na spacer? Tata.",
            "Pralka hałasuje przy wirowaniu.",
        ],
        [("Kiedy jest pływanie?", 0, {"kiedy", "jest"})],
    ),
    (
        "sv",
        [
            "Kattmaten står i skafferiet.",
            "Var står cykeln? Den står i garaget.",
            "Mormor fyller år den 3 juni.",
        ],
        [("Var står maten till katten?", 0, {"var", "till"})],
    ),
    (
        "da",
        [
            "Kattemaden står i køkkenskabet.",
            "Hvor er cyklen? Den er i garagen.",
            "Leo har fødselsdag den 3. maj.",
        ],
        [
            ("Hvor er maden til katten?", 0, {"hvor", "er", "til"}),
            ("Hvornår er Leos fødselsdag?", 2, {"hvornår", "er"}),
        ],
    ),
    (
        "no",
        [
            "Kattematen står i skapet på kjøkkenet.",
            "Hvor er sykkelen? Den er i garasjen.",
            "Leo har bursdag 3. mai.",
        ],
        [("Hvor er maten til katten?", 0, {"hvor", "er", "til"})],
    ),
    (
        "en",
        [
            "Leo's birthday party is in May, in the garden.",
            "Mia's birthday was last week.",
            "What is the wifi password? It is on the back of the router.",
        ],
        [("When are the birthday parties?", 0, {"when", "are", "the"})],
    ),
    (
        "zh",
        ["我女儿的生日是五月", "我们家的猫喜欢吃鱼", "周末我们去公园"],
        [("她的生日是什么时候", 0, set())],
    ),
    (
        "ja",
        ["娘の誕生日は五月です", "猫は魚が好きです", "週末は公園に行きます"],
        [("誕生日はいつ", 0, set())],
    ),
    (
        "ko",
        ["딸의 생일은 5월이다", "고양이는 생선을 좋아한다", "주말에 공원에 간다"],
        [("생일이 언제야", 0, set())],
    ),
]

CASES = [
    pytest.param(language, memories, question, expected, function_words, id=question)
    for language, memories, questions in HOUSEHOLD
    for question, expected, function_words in questions
]


@pytest.mark.parametrize(
    ("language", "memories", "question", "expected", "function_words"), CASES
)
def test_household_question_finds_its_memory_first(
    fts: sqlite3.Connection,
    language: str,
    memories: list[str],
    question: str,
    expected: int,
    function_words: set[str],
) -> None:
    """The right memory ranks first; no function word is searched."""
    terms = query_terms(question, language)
    assert terms
    assert not function_words & set(terms)
    assert search(fts, memories, question, language)[0] == expected


def test_a_name_outweighs_any_number_of_function_words(
    fts: sqlite3.Connection,
) -> None:
    """A memory sharing only function words with the question is not found."""
    memories = [
        "Quand est-ce que ce que tu dis est vrai ? Quand est-ce que c'est ?",
        "Mia aime le chocolat.",
    ]
    assert search(fts, memories, "Quand est-ce que Mia va nager ?", "fr") == [1]


def test_the_language_of_the_tag_decides() -> None:
    """A tag such as "de-CH" gets the German analysis, "xx-YY" the generic one."""
    assert query_terms("Wann ist die Müllabfuhr?", "de-CH") == ["mullabfuhr"]
    assert query_terms("Wann ist die Müllabfuhr?", "xx-YY") == [
        "wann",
        "ist",
        "die",
        "mullabfuhr",
    ]


def test_query_terms_in_two_languages() -> None:
    """A stop word of either language is searched in neither."""
    question = "Wann ist die Müllabfuhr? When is the garbage collection?"
    terms = query_terms_in(question, ["de-DE", "en"])
    assert not {"wann", "ist", "die", "when", "is", "the"} & set(terms)
    assert set(query_terms(question, "de")) - {"when", "is", "the"} <= set(terms)
    assert {"garbag", "collect"} <= set(terms)
    assert query_terms_in("Wann ist die Müllabfuhr?", ["de"]) == query_terms(
        "Wann ist die Müllabfuhr?", "de"
    )
    assert query_terms_in("the", []) == []


def test_generic_fallback_folds_without_stemming() -> None:
    """An unknown language: every word, folded, unstemmed, no stop words."""
    text = "Ñandú GRANDE, Ñandúes"
    assert index_terms(text, "gn") == "nandu grande nandues"
    assert query_terms("Ñandú", None) == ["nandu"]  # type: ignore[arg-type]
    assert index_terms("", "gn") == ""


def test_stemming_on_both_sides() -> None:
    """Inflections meet at the stem: the index is stemmed, not only the query."""
    assert query_terms("parties", "en") == index_terms("party", "en").split()
    assert query_terms("den Häusern", "de") == index_terms("das Haus", "de").split()
    assert query_terms("les piscines", "fr") == index_terms("la piscine", "fr").split()


def test_elision_and_apostrophes() -> None:
    """Elided articles go; a contraction that is a stop word goes whole."""
    assert query_terms("l'eau de l'aquarium", "fr") == ["eau", "aquarium"]
    assert query_terms("dell'acqua", "it") == ["acqua"]
    assert query_terms("Leo’s bike", "en") == ["leo", "bike"]
    assert query_terms("don't forget", "en") == ["forget"]


def test_numbers_are_kept() -> None:
    """Numbers are searchable as they are written, never stemmed."""
    assert index_terms("Tor 4711, am 14.05.2024", "de").split() == [
        "tor",
        "4711",
        "14",
        "05",
        "2024",
    ]


def test_only_stop_words_give_no_query() -> None:
    """A question of function words searches nothing."""
    assert query_terms("Was ist das?", "de") == []
    assert query_terms("¿Qué es eso?", "es") == []
    assert query_terms("?!  …", "en") == []


def test_query_terms_are_bounded_and_unique() -> None:
    """At most MAX_QUERY_TERMS terms, each once, in order."""
    text = " ".join(f"word{n} word{n}" for n in range(100))
    terms = query_terms(text, "en")
    assert terms == [f"word{n}" for n in range(MAX_QUERY_TERMS)]


def test_cjk_bigrams() -> None:
    """CJK runs become overlapping bigrams; a lone character stays itself."""
    assert index_terms("我女儿的生日", "zh") == "我女 女儿 儿的 的生 生日"
    assert index_terms("猫", "ja") == "猫"
    assert query_terms("生日", "en") == ["生日"]  # script decides, not language
    assert index_terms("iPhone手机", "zh") == "iphone 手机"


def test_compound_tails_in_the_index() -> None:
    """A compound's tails are indexed in compounding languages only."""
    terms = index_terms("Heizöltank", "de").split()
    assert {"oltank", "tank"} <= set(terms)
    assert index_terms("Heizöltank", "fr").split() == [terms[0]]
    assert "vul" in index_terms("bijgevuld", "nl").split()


def test_index_columns_keep_tails_apart() -> None:
    """The words' column has no tails; together they are `index_terms`."""
    words, tails = index_columns("Der Heizöltank ist voll", "de")
    assert words.split() == query_terms("Der Heizöltank ist voll", "de")
    assert {"oltank", "tank"} <= set(tails.split())
    assert index_terms("Der Heizöltank ist voll", "de") == f"{words} {tails}"
    assert index_columns("Le réservoir est plein", "fr")[1] == ""


def test_compound_parts() -> None:
    """Heads are prefixes without linking elements, tails exact, names bare."""
    parts = compound_parts("Wann ist Leos Geburtstagsfeier?", "de")
    assert ("leo", "exact") in parts
    assert ("geburtstag", "prefix") in parts
    assert (stem("feier", "de"), "exact") in parts
    assert ("mull", "prefix") in compound_parts("Müllabfuhr", "de")
    assert compound_parts("Quand est-ce que Mia va nager ?", "fr") == []
    assert compound_parts("Was ist das?", "de") == []


def test_compound_parts_are_bounded_per_word() -> None:
    """A very long word offers at most MAX_PARTS_PER_WORD parts."""
    word = "Donaudampfschifffahrtsgesellschaftskapitänsmütze"
    groups = compound_groups(word, "de")
    assert groups
    assert all(len(group) <= MAX_PARTS_PER_WORD for group in groups)
    assert len(compound_parts(word, "de")) <= 2 * MAX_PARTS_PER_WORD


@pytest.mark.parametrize(
    ("words", "shared"),
    [
        (["basen", "basenie", "basenu"], "basen"),
        (["pływanie", "pływania", "pływaniu"], "pływan"),
        (["urodziny", "urodzin", "urodzinach", "urodzinami"], "urodzin"),
        (["mleko", "mleka", "mlekiem"], "mlek"),
    ],
)
def test_polish_light_stemmer(words: list[str], shared: str) -> None:
    """Cases and numbers of a Polish noun share one stem."""
    assert {stem(word, "pl") for word in words} == {shared}


def test_every_analysed_language_has_stop_words_and_drops_them() -> None:
    """Each analysed language drops its own function words."""
    examples = {
        "en": "the",
        "de": "und",
        "nl": "het",
        "fr": "les",
        "es": "los",
        "it": "della",
        "pt": "dos",
        "pl": "się",
        "sv": "och",
        "da": "og",
        "no": "ikke",
        "fi": "että",
        "ru": "это",
    }
    assert set(examples) == ANALYSED
    for language, word in examples.items():
        assert query_terms(f"{word} Mia", language) == [
            stem("mia", language) if language != "pl" else "mia"
        ], language


def test_analysis_version_is_positive() -> None:
    """Stored rows compare their version with this one."""
    assert isinstance(ANALYSIS_VERSION, int)
    assert ANALYSIS_VERSION >= 1


def test_stemmers_are_safe_across_threads() -> None:
    """Threads stemming at once get the same stems as one thread alone."""
    words = [
        f"{base}{suffix}"
        for base in ("feier", "spiel", "lauf")
        for suffix in ("en", "ungen", "te", "test", "end", "s", "er")
    ]
    words += [f"{word}{n}x" for word in words for n in range(3)]
    german = snowballstemmer.stemmer("german")
    expected = {word: german.stemWord(word) for word in words}
    failures: list[str] = []

    def work() -> None:
        for _ in range(20):
            stem.cache_clear()
            try:
                failures.extend(
                    word for word in words if stem(word, "de") != expected[word]
                )
            except IndexError as error:  # what a shared stemmer does, at times
                failures.append(repr(error))

    threads = [threading.Thread(target=work) for _ in range(6)]
    # Switch threads as often as possible: one shared stemmer would give
    # wrong stems (and IndexErrors) here.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert failures == []


# -- every term is a fixed point of unicode61 ------------------------------------

LANGUAGES = [*sorted(ANALYSED), "zh", "ja", "ko", "th", "xx", ""]


def _tokens(fts: sqlite3.Connection, text: str) -> list[str]:
    """Read `text` as unicode61 does: its tokens in order."""
    fts.execute("DELETE FROM t")
    fts.execute("INSERT INTO t(rowid, x) VALUES (1, ?)", (text,))
    rows = fts.execute("SELECT term FROM i WHERE doc = 1 ORDER BY offset")
    return [row[0] for row in rows]


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=60), language=st.sampled_from(LANGUAGES))
def test_terms_are_unicode61_fixed_points(text: str, language: str) -> None:
    """unicode61 reads the emitted terms back as exactly those tokens."""
    with closing(sqlite3.connect(":memory:")) as fts:
        fts.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{TOKENIZER}')")
        fts.execute("CREATE VIRTUAL TABLE i USING fts5vocab(t, 'instance')")
        indexed = index_terms(text, language)
        assert _tokens(fts, indexed) == indexed.split()
        assert indexed == index_terms(text, language)  # deterministic
        for term in query_terms(text, language):
            assert _tokens(fts, term) == [term]
        for term, kind in compound_parts(text, language):
            assert kind in {"exact", "prefix"}
            assert _tokens(fts, term) == [term]


@settings(max_examples=100, deadline=None)
@given(
    words=st.lists(
        st.sampled_from(
            [
                "Straße",
                "İstanbul",
                "ﬁre",
                "Ωμέγα",
                "ὀδυσσεύς",
                "Ærø",
                "ŀ",
                "ǅemal",
                "Ångström",
                "naïve",
                "ＦＵＬＬ",
                "ガラス",
                "ﾊﾟﾝ",
                "한국어",
                "𝔘𝔫𝔦",
                "x_y",
                "l'été",
                "Heizöltank",
                "Øl",
                "Łódź",
                "ς",
                "Ⅻ",
                "①",
            ]
        ),
        max_size=8,
    ),
    language=st.sampled_from(LANGUAGES),
)
def test_tricky_words_are_fixed_points(words: list[str], language: str) -> None:
    """Ligatures, final sigma, Turkish İ, full-width, Hangul, Fraktur."""
    text = " ".join(words)
    with closing(sqlite3.connect(":memory:")) as fts:
        fts.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{TOKENIZER}')")
        fts.execute("CREATE VIRTUAL TABLE i USING fts5vocab(t, 'instance')")
        indexed = index_terms(text, language)
        assert _tokens(fts, indexed) == indexed.split()


def test_fold_agrees_with_unicode61_on_every_character(fts: sqlite3.Connection) -> None:
    """Every character `fold_char` can emit is a one-character unicode61 token.

    The exceptions in `analysis_words` were found this way; a SQLite with
    other Unicode tables fails here first.
    """
    emitted: set[str] = set()
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        for char in unicodedata.normalize("NFKC", chr(code)).lower():
            if char.isalnum():
                emitted.update(fold_char(char).replace(" ", ""))
    fts.executemany(
        "INSERT INTO t(rowid, x) VALUES (?, ?)", [(ord(c), c) for c in emitted]
    )
    read: dict[int, list[str]] = {}
    for term, doc in fts.execute("SELECT term, doc FROM i"):
        read.setdefault(doc, []).append(term)
    wrong = [c for c in emitted if read.get(ord(c)) != [c]]
    assert wrong == []
    assert len(emitted) > 100_000
