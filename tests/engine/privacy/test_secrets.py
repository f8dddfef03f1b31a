"""Secrets are redacted from transcripts and kept out of memories."""

from __future__ import annotations

from typing import Final

import pytest

from custom_components.memory.engine import MemoryStore, SearchQuery, Signal
from custom_components.memory.engine.languages.analysis import query_finds
from custom_components.memory.engine.privacy.secrets import (
    REDACTED,
    found_without_secrets,
    has_secret,
    redact_secrets,
    redacted,
)
from tests.engine.conftest import memory


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("The alarm code is 4512", "4512"),
        ("the door code: 0000#", "0000#"),
        ("My PIN is 1234", "1234"),
        ("pin 9876 for the card", "9876"),
        ("The wifi password is hunter22", "hunter22"),
        ("password: correct-horse-battery", "correct-horse-battery"),
        ("my passcode = 'abc123'", "abc123"),
        ("the garage code becomes 7731", "7731"),
        ("set the gate code to 2468", "2468"),
        ("API key sk-proj-abcdefghijklmnop1234", "sk-proj-abcdefghijklmnop1234"),
        ("use key AKIAIOSFODNN7EXAMPLE please", "AKIAIOSFODNN7EXAMPLE"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghij"),
        (
            "bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
            "eyJhbGci",
        ),
        ("the access token is Zx9Qw8Er7Ty6Ui5Op4", "Zx9Qw8Er7Ty6Ui5Op4"),
        (
            "keep f3a9c2e18b7d4a6f9e0c1b2a3d4e5f60a1b2 safe",
            "f3a9c2e18b7d4a6f9e0c1b2a3d4e5f60a1b2",
        ),
        (
            "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----",
            "MIIEvQIBADANBg",
        ),
        # Households that speak to Assist in other languages.
        ("Das WLAN-Passwort ist Sonnenblume77", "Sonnenblume77"),
        ("Der Türcode lautet 4711", "4711"),
        ("Le mot de passe est soleil2024", "soleil2024"),
        ("La contraseña es girasol99", "girasol99"),
        ("El código de la alarma: 2580", "2580"),
        ("Il codice è 1357", "1357"),
        ("Het wachtwoord is nu tulp1234", "tulp1234"),
        ("A senha é 8642", "8642"),
    ],
)
def test_secrets_are_redacted(text: str, secret: str) -> None:
    """Labelled codes and passwords, and well-known key formats, are removed."""
    redacted, count = redact_secrets(text)
    assert secret not in redacted
    assert REDACTED in redacted
    assert count >= 1
    assert has_secret(text)
    assert not has_secret(redacted)


@pytest.mark.parametrize(
    "text",
    [
        "Anna lives in Portland",
        "The zip code is 97201",
        "My postal code: 10115",
        "The code is wrong again",
        "Mia's password is forgotten",
        "The dentist appointment is at 3 pm on Tuesday",
        "Ben's birthday is 1990-05-04",
        "We have 2 cats and 1 dog",
        "I forgot my password",
        "Turn on the kitchen light",
        # A label must be a whole word, not the start of one.
        "Mia loves pineapple pizza",
        "Ben is codependent on coffee",
        "Anna found a recipe on Pinterest",
        "Das Passwort ist falsch",
        "Die Postleitzahl ist 10115",
        "Le code postal est 75001",
        "",
    ],
)
def test_ordinary_text_is_kept(text: str) -> None:
    """What merely mentions codes, or holds numbers, stays as it is."""
    assert redact_secrets(text) == (text, 0)
    assert not has_secret(text)


def test_counts_each_secret() -> None:
    """Every secret is counted; the words around them stay."""
    redacted, count = redact_secrets(
        "Alarm code 1234, wifi password sunflower99 and I like tea"
    )
    assert count == 2
    assert redacted == (
        f"Alarm code {REDACTED}, wifi password {REDACTED} and I like tea"
    )


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("The garage door code is 7731", "The garage door code is [redacted]"),
        (
            "My PIN is 1234 and the wifi password is hunter22, says Ben",
            "My PIN is [redacted] and the wifi password is [redacted], says Ben",
        ),
        (
            "Der Türcode lautet 4711, sagt Anna",
            "Der Türcode lautet [redacted], sagt Anna",
        ),
        ("Das WLAN-Passwort ist Sonnenblume77", "Das WLAN-Passwort ist [redacted]"),
        ("Le code de la porte est 7731", "Le code de la porte est [redacted]"),
        (
            "Le mot de passe du wifi est soleil2024",
            "Le mot de passe du wifi est [redacted]",
        ),
        ("El código de la alarma es 2580", "El código de la alarma es [redacted]"),
        ("El código del garaje es 2580", "El código del garaje es [redacted]"),
        ("La contraseña es girasol99", "La contraseña es [redacted]"),
        ("Il codice del cancello è 1357", "Il codice del cancello è [redacted]"),
        (
            "La password della porta è girasole99",
            "La password della porta è [redacted]",
        ),
        ("Il codice dell'allarme è 1357", "Il codice dell'allarme è [redacted]"),
        ("De code van de garage is 7731", "De code van de garage is [redacted]"),
        ("Het wachtwoord is nu tulp1234", "Het wachtwoord is nu [redacted]"),
        ("O código do portão é 8642", "O código do portão é [redacted]"),
        ("A senha é 8642", "A senha é [redacted]"),
    ],
)
def test_redaction_keeps_the_rest(text: str, shown: str) -> None:
    """Only the value goes: what the secret is for stays readable, in every language.

    So an agent can say "I know the garage code but cannot tell it here".
    Redacting again changes nothing more.
    """
    assert redacted(text) == shown
    assert redacted(shown) == shown
    assert not has_secret(shown)


@pytest.mark.parametrize(
    "text",
    [
        "Mia is allergic to nuts",
        "The zip code is 97201",
        "Le code postal est 75001",
        "",
    ],
)
def test_redaction_leaves_ordinary_text_alone(text: str) -> None:
    """A text with no secret comes back as it was (its embedding cache key too)."""
    assert redacted(text) == text


@pytest.mark.parametrize(
    ("query", "text", "language", "found"),
    [
        ("7731", "The garage door code is 7731", "en", False),
        ("is it 7731?", "The garage door code is 7731", "en", False),
        ("garage 7731", "The garage door code is 7731", "en", True),
        ("garage 0000", "The garage door code is 7731", "en", True),
        ("codes", "The garage door code is 7731", "en", True),
        ("4711", "Der Türcode lautet 4711", "de", False),
        ("türcode", "Der Türcode lautet 4711", "de", True),
        ("soleil2024", "Le mot de passe est soleil2024", "fr", False),
        ("passe", "Le mot de passe est soleil2024", "fr", True),
        ("nuts", "Mia is allergic to nuts", "en", True),
        ("bins", "Mia is allergic to nuts", "en", False),
        # As German search matches them: a plural finds its singular, a
        # compound's tail finds the compound...
        ("Garagen", "Der Code der Garage ist 4512", "de", True),
        ("Garagencodes", "Der Garagencode ist 4512", "de", True),
        ("Code", "Der Garagencode ist 4512", "de", True),
        # ...and a stop word of the language finds nothing: "ist 4512"
        # guesses the code, and English analysis took "ist" for a word.
        ("ist 4512", "Der Garagencode ist 4512", "de", False),
        ("est-ce 7731 ?", "Le code du portail est 7731", "fr", False),
        ("les vélos ?", "Le vélo est dans le garage, code 7731", "fr", True),
    ],
)
def test_found_without_secrets(
    query: str, text: str, language: str, *, found: bool
) -> None:
    """A query finds a text by its other words, never by the secret's value."""
    assert found_without_secrets(query, text, language) is found


def test_found_without_secrets_in_the_query_language() -> None:
    """A query's stop words are those of its own language as well as the text's."""
    text = "The war museum's door code is 4512"
    assert found_without_secrets("war es 4512?", text, "en")  # "war": a word of it
    assert not found_without_secrets("war es 4512?", text, "en", query_language="de")
    assert found_without_secrets("Museum 4512", text, "en", query_language="de")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("My pass\u200bword is hunter22", "My password is [redacted]"),
        ("Anna's bike lock co\u00adde is 5521", "Anna's bike lock code is [redacted]"),
        ("the P\u2060I\u2060N is 1234", "the PIN is [redacted]"),
        ("door code\u200d is 7731\ufeff", "door code is [redacted]"),
        ("garage code is 77\U000e003131", "garage code is [redacted]"),
    ],
)
def test_hidden_characters_hide_no_secret(text: str, shown: str) -> None:
    """A character that shows nothing cannot split a label or a value.

    Recall, the search tool and embeddings redact with this function too, not
    only digestion: a zero-width space inside "password" must not let the
    value reach a satellite or an embedding provider.
    """
    assert redacted(text) == shown
    assert has_secret(text)


@pytest.mark.parametrize(
    "text",
    [
        "Das Passwort steht auf dem Zettel am Kühlschrank",
        "Der Code für das Gartentor ist derselbe wie letztes Jahr",
        "Het wachtwoord staat op de router",
        "Le code du portail est sur le frigo",
        "La contraseña está en la nevera",
        "Hasło jest na lodówce",
        "Lösenordet står på routern",
        "Koden står på køleskabet",
        "Salasana on jääkaapin ovessa",
        "Пароль записан на холодильнике",
        "密码在冰箱上",
        "パスワードは冷蔵庫に貼ってある",
        "The PIN was changed on Monday",
        "Der Code wurde am 3. Mai geändert",
        "Kod do bramy zmieniliśmy 3 maja",
        "Код поменяли 3 мая",
        "Koodi vaihdettiin 3. toukokuuta",
        "Das Passwort hat 12 Zeichen",
        "Hasło ma 12 znaków",
        "Пароль из 12 символов",
        "密码有12位",
        "暗証番号は4桁です",
        "De postcode is 1234 AB",
        "Der Barcode auf der Packung ist 4006381333931",
        "Diskmaskinen visar felkod E15",
        "Astianpesukone näyttää virhekoodin E15",
        "Посудомойка показывает код ошибки E15",
        "El lavavajillas muestra el código de error E15",
        "The bakery opens at 7 and the season opens with 3 games",
        "Der Laden öffnet um 8 Uhr",
        "La tienda abre a las 9",
        "We changed the wifi password in March 2024",
        "Das Passwort läuft am 31.12.2026 ab",
        "The Spotify password is shared by 4 people",
    ],
)
def test_mentions_without_a_value_are_kept(text: str) -> None:
    """Where a code is, when it changed, how long it is: no value, in any language.

    Nor a harmless code glued to its kind ("Postcode", "felkod", "код ошибки").
    """
    assert redact_secrets(text) == (text, 0)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Das Garagentor hat den Code 4512", "Das Garagentor hat den Code [redacted]"),
        ("Der Alarmanlagen-Code ist 7 7 8 8", "Der Alarmanlagen-Code ist [redacted]"),
        ("Le code de l'interphone est 12B34", "Le code de l'interphone est [redacted]"),
        ("Passordet til PC-en er katt2020", "Passordet til PC-en er [redacted]"),
        ("Tietokoneen salasana on kissa2020", "Tietokoneen salasana on [redacted]"),
        ("Пароль от компьютера kotik2020", "Пароль от компьютера [redacted]"),
        ("Pinkoden är ett två tre fyra", "Pinkoden är [redacted]"),
        ("电脑密码是abc12345，别告诉别人", "电脑密码是[redacted]，别告诉别人"),
        ("パソコンのパスワードはneko2020です", "パソコンのパスワードは[redacted]です"),
        ("The code is 4 5 1 2, says Ben", "The code is [redacted], says Ben"),
        ("Der Türcode ist übrigens 5823", "Der Türcode ist übrigens [redacted]"),
        ("The alarm code changed to 9034", "The alarm code changed to [redacted]"),
        (
            "Mon mot de passe Netflix est Renard2023",
            "Mon mot de passe Netflix est [redacted]",
        ),
        (
            "Die Kombination vom Tresor ist 4-4-9-1",
            "Die Kombination vom Tresor ist [redacted]",
        ),
        (
            "The key box opens with 2580, for Ben",
            "The key box opens with [redacted], for Ben",
        ),
        ("La caja fuerte se abre con 8-0-3-6", "La caja fuerte se abre con [redacted]"),
        ("De kluis gaat open met 7725", "De kluis gaat open met [redacted]"),
    ],
)
def test_codes_in_every_language(text: str, shown: str) -> None:
    """Compounds, spoken and spaced digits, values glued to CJK: the value goes."""
    assert redacted(text) == shown
    assert redacted(shown) == shown


FINDS_CASES: Final = [
    ("Garagen", "de", "Der Code der Garage ist 4512", "de"),
    ("Code", "de", "Der Garagencode ist 4512", "de"),
    ("ist es", "de", "Der Garagencode ist 4512", "de"),
    ("voetbal", "nl", "Leo heeft voetbaltraining op zaterdag", "nl"),
    ("training", "nl", "Leo heeft voetbaltraining op zaterdag", "nl"),
    ("Sommer", "de", "Der Sommerurlaub ist gebucht", "de"),
    ("Haus", "de", "Die Hausaufgaben sind fertig", "de"),
    ("vélos", "fr", "Le vélo est dans le garage", "fr"),
    ("est-ce", "fr", "Le vélo est dans le garage", "fr"),
    ("garage", "en", "The garage door code is 7731", "en"),
    ("bins", "en", "Mia is allergic to nuts", "en"),
    ("car", "en", "Mia has a career in law", "en"),
]


@pytest.mark.parametrize(("query", "spoken", "text", "language"), FINDS_CASES)
async def test_query_finds_as_keyword_search_does(
    store: MemoryStore, query: str, spoken: str, text: str, language: str
) -> None:
    """`found_without_secrets` reads words as the store's keyword search finds them."""
    stored = await store.add(memory(text, language=language))
    hits = await store.search(SearchQuery(text=query, language=spoken))
    found = [hit.item.id for hit in hits if Signal.KEYWORD in hit.matched]
    languages = [spoken, store.language]
    assert query_finds(query, languages, text, language) is (found == [stored.item.id])
