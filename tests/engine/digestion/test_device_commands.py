"""Device commands in the languages beside English, and across them.

German, French, Spanish, Italian, Dutch, Portuguese, Polish, Swedish, Danish.

Digestion skips a conversation of device commands only, so a false skip
loses a personal statement for good while a missed skip costs one LLM call:
the "not a command" tables are the ones that must never fail.
"""

from __future__ import annotations

import pytest

from custom_components.memory.engine.digestion.device_commands import is_device_command
from custom_components.memory.engine.digestion.queue import (
    SkipReason,
    Transcript,
    skip_reason,
)

COMMANDS: dict[str, list[str]] = {
    "de": [
        "Schalte das Licht in der Küche ein",
        "Schalt bitte die Stehlampe aus",
        "Mach das Licht im Flur aus",
        "Bitte stelle die Heizung auf 21 Grad",
        "Öffne die Garage",
        "Schließe alle Rollläden",
        "Dimme das Licht im Wohnzimmer auf 30 Prozent",
        "Spiele Musik im Bad",
        "Kannst du bitte das Licht im Flur ausmachen?",
        "Wie warm ist es im Wohnzimmer",
        "Ist die Haustür abgeschlossen?",
        "Wann geht heute die Sonne unter?",
        "Was ist die Temperatur draußen?",
        "Setz Milch auf die Einkaufsliste",
        "Guten Morgen",
        "Danke schön",
        "Kannst du mir sagen, wie spät es ist?",
    ],
    "fr": [
        "Allume la lumière de la cuisine",
        "Éteins toutes les lumières",
        "Eteins la lampe du salon s'il te plaît",
        "Ouvre les volets",
        "Ferme la porte du garage",
        "Mets le chauffage à 20 degrés",
        "Règle le thermostat sur 19",
        "Baisse le son",
        "Peux-tu allumer la lumière du couloir ?",
        "Tu peux me dire la température dehors ?",
        "Quelle est la température dans la chambre ?",
        "Est-ce que la porte d'entrée est fermée ?",
        "Qu’est-ce qu’il y a sur la liste de courses ?",
        "Combien fait-il dehors ?",
        "Dis-moi quelle heure il est",
        "Bonjour",
        "Merci beaucoup",
    ],
    "es": [
        "Enciende la luz de la cocina",
        "Apaga todas las luces",
        "Apágala, por favor",
        "Abre la puerta del garaje",
        "Cierra las persianas del salón",
        "Pon la calefacción a 21 grados",
        "Ponme música relajante",
        "Sube el volumen",
        "Baja la persiana del dormitorio",
        "¿Puedes encender la luz del pasillo?",
        "¿Me pones las noticias?",
        "¿Qué temperatura hace en el salón?",
        "¿Cuál es la humedad del baño?",
        "¿Está encendida la luz del jardín?",
        "Dime la hora",
        "Por favor, cierra la puerta principal",
        "Gracias",
        "Buenas noches",
    ],
    "it": [
        "Accendi la luce in cucina",
        "Spegni tutte le luci",
        "Spegnila per favore",
        "Apri il cancello",
        "Chiudi le tapparelle della camera",
        "Metti il riscaldamento a 20 gradi",
        "Alza il volume",
        "Abbassa le tapparelle",
        "Imposta il termostato a 19 gradi",
        "Puoi accendere la luce del bagno?",
        "Mi accendi la luce in salotto?",
        "Dimmi che ore sono",
        "Che temperatura c'è in soggiorno?",
        "Qual è l'umidità in bagno?",
        "È accesa la luce del garage?",
        "Per favore chiudi la porta",
        "Grazie",
        "Buonanotte",
    ],
    "nl": [
        "Zet het licht in de keuken aan",
        "Doe de lampen in de woonkamer uit",
        "Schakel de ventilator in",
        "Open de garagedeur",
        "Sluit de gordijnen",
        "Dim de lampen naar 40 procent",
        "Speel muziek in de badkamer",
        "Zet alsjeblieft de verwarming op 20 graden",
        "Kun je de lampen in de gang uitdoen?",
        "Wat is de temperatuur in de slaapkamer?",
        "Hoe warm is het buiten?",
        "Is de voordeur op slot?",
        "Hoe laat is het",
        "Staat de verwarming aan?",
        "Zeg me hoe laat het is",
        "Goedemorgen",
        "Dank je wel",
    ],
    "pt": [
        "Liga a luz da cozinha",
        "Desliga todas as luzes",
        "Acende a luz da sala",
        "Apaga a luz do quarto",
        "Abre o portão",
        "Fecha as persianas",
        "Põe o aquecimento a 21 graus",
        "Coloca música na sala",
        "Liga a luz no corredor, por favor",
        "Pode ligar a luz do banheiro?",
        "Você pode me dizer a temperatura lá fora?",
        "Qual é a temperatura na sala?",
        "Está acesa a luz da garagem?",
        "Que horas são?",
        "Me diz a previsão do tempo",
        "Obrigado",
        "Boa noite",
    ],
    "pl": [
        "Włącz światło w przedpokoju",
        "Wyłącz wszystkie światła",
        "Zgaś lampę w sypialni, proszę",
        "Otwórz bramę",
        "Zamknij rolety w salonie",
        "Ustaw ogrzewanie na 21 stopni",
        "Puść muzykę w łazience",
        "Możesz włączyć światło w kuchni?",
        "Czy możesz mi powiedzieć, która jest godzina?",
        "Jaka jest temperatura na zewnątrz?",
        "Czy drzwi do garażu są zamknięte?",
        "Ile stopni jest w sypialni?",
        "Co jest na liście zakupów?",
        "Powiedz mi, jaka będzie pogoda",
        "Anuluj mój minutnik",
        "Dzień dobry",
        "Dziękuję bardzo",
    ],
    "sv": [
        "Tänd lampan i hallen",
        "Släck alla lampor",
        "Stäng av taklampan i sovrummet, tack",
        "Öppna garageporten",
        "Dra ner persiennerna i vardagsrummet",
        "Ställ värmen på 21 grader",
        "Spela musik i badrummet",
        "Kan du tända lampan i köket?",
        "Kan du säga vad klockan är?",
        "Vad är det för temperatur ute?",
        "Är garagedörren stängd?",
        "Hur varmt är det i sovrummet?",
        "Vad står på inköpslistan?",
        "Berätta för mig hur vädret blir",
        "Avbryt min timer",
        "God morgon",
        "Tack så mycket",
    ],
    "da": [
        "Tænd lyset i gangen",
        "Sluk alle lys",
        "Sluk loftlampen i soveværelset, tak",
        "Åbn garageporten",
        "Rul persiennerne ned i stuen",
        "Sæt varmen til 21 grader",
        "Spil musik på badeværelset",
        "Kan du tænde lyset i køkkenet?",
        "Kan du sige mig, hvad klokken er?",
        "Hvad er temperaturen udenfor?",
        "Er garagedøren lukket?",
        "Hvor varmt er det i soveværelset?",
        "Hvad står der på indkøbslisten?",
        "Fortæl mig, hvordan vejret bliver",
        "Annuller min timer",
        "Godmorgen",
        "Mange tak",
    ],
}

PERSONAL: dict[str, list[str]] = {
    "de": [
        "Mach dir eine Notiz: meine Tochter ist allergisch gegen Nüsse",
        "Merk dir, dass ich keinen Kaffee trinke",
        "Schalte das Licht nie vor sieben Uhr an",
        "Mach die Heizung immer um sechs an, wir stehen früh auf",
        "Stell die Heizung auf 19, mein Mann friert sonst nicht",
        "Ich wohne seit März in Hamburg",
        "Erinnere mich morgen an den Zahnarzt",
        "Wie jeden Montag kommt um neun die Putzfrau",
        "Spiele jeden Morgen Radio in der Küche",
        "Kannst du dir merken, dass Anna Vegetarierin ist?",
        "Öffne die Rollläden, wenn die Sonne aufgeht",
        "Unser Hund heißt Bello",
        "Was mag meine Frau zum Geburtstag?",
        "Wie besprochen kommt der Klempner am Montag",
        "Sind bis Sonntag im Urlaub",
        "Heiz das Bad am Wochenende auf 23 Grad",
    ],
    "fr": [
        "Allume toujours la lumière quand je rentre",
        "Souviens-toi que ma fille est allergique aux arachides",
        "Rappelle-moi d'appeler le plombier",
        "Je préfère le chauffage à 19 degrés la nuit",
        "Ferme les volets chaque soir à 21 heures",
        "N'éteins jamais la lampe du salon",
        "Mets le chauffage à 22, mon père arrive demain",
        "Notre chat s'appelle Minou",
        "J'aime la musique classique le matin",
        "Est-ce que tu peux te souvenir que Paul est végétarien ?",
        "Quand ma mère vient, mets le chauffage à 22",
        "Éteins la lumière du couloir lorsque tout le monde dort",
        "Allume le chauffage en semaine à 6 heures",
        "Mets le linge à sécher parce que Marie part demain",
    ],
    "es": [
        "Pon la calefacción a 19 grados siempre que venga mi madre",
        "Recuerda que mi hija es alérgica a los frutos secos",
        "Apaga la luz del pasillo cuando nos vayamos a dormir",
        "Enciende la luz del porche todas las noches a las ocho",
        "Soy vegetariano desde hace un año",
        "Me gusta dormir con la persiana subida",
        "Nunca apagues el router",
        "Abre las persianas cada mañana a las siete",
        "Esta es la habitación de Lucía",
        "Está en el hospital el abuelo",
        "Pon música, mi marido llega en diez minutos",
        "¿Me recuerdas que el lunes viene el fontanero?",
        "No enciendas la calefacción antes de noviembre",
        "Pon la calefacción a 19 entre semana",
        "Baja la persiana porque a Lucía le molesta la luz",
    ],
    "it": [
        "Ricorda che mia figlia è allergica alle noci",
        "Accendi sempre la luce quando arrivo",
        "Spegni la luce, mio figlio dorme",
        "Di solito ceniamo alle otto",
        "Mi piace il caffè senza zucchero",
        "Non spegnere mai il frigorifero del garage",
        "Alza le tapparelle ogni mattina alle sette",
        "Abito a Milano con mio marito",
        "Mi ricordi di chiamare la nonna?",
        "È il compleanno di Marco domani",
        "Metti la musica quando torna la mamma",
        "Preferisco il riscaldamento a 19 gradi",
        "Metti in conto che Luca arriva sabato",
        "Accendi la luce alle 7 nei giorni feriali",
        "Che bello, Marco si sposa a giugno",
    ],
    "nl": [
        "Onthoud dat mijn dochter allergisch is voor noten",
        "Zet de verwarming altijd op 19 graden 's nachts",
        "Doe het licht nooit uit in de gang",
        "Ik werk op dinsdag thuis",
        "Zet de verwarming hoger als mijn moeder komt",
        "Onze kat heet Pluis",
        "Open de gordijnen elke ochtend om zeven uur",
        "Kun je onthouden dat Sam vegetariër is?",
        "Wat vindt mijn vrouw lekker?",
        "Speel muziek zodra ik thuiskom",
        "Herinner me eraan de planten water te geven",
        "Zijn fiets staat in de schuur",
        "Zet de verwarming lager omdat Sanne het warm heeft",
        "Zet de verwarming doordeweeks op 19",
    ],
    "pt": [
        "Lembra que a minha filha é alérgica a amendoim",
        "Liga sempre o aquecimento quando eu chegar",
        "Não desligues o router à noite",
        "Eu prefiro a luz mais fraca à noite",
        "Abre as persianas todas as manhãs às sete",
        "Moro em Lisboa com o meu marido",
        "Gosto do quarto a 19 graus",
        "É o aniversário da Ana amanhã",
        "Está de férias a minha mãe",
        "Acende a luz, o meu filho tem medo do escuro",
        "Pode lembrar que o Pedro é vegetariano?",
        "Desliga a luz da sala quando todos forem dormir",
        "Abre a janela porque o Rui fuma",
        "Liga o aquecimento nos dias úteis às sete",
    ],
    "pl": [
        "Zapamiętaj, że moja córka jest uczulona na orzechy",
        "Włączaj zawsze światło, kiedy wracam",
        "Nigdy nie wyłączaj lodówki w garażu",
        "Ustaw ogrzewanie na 22, mama przyjeżdża jutro",
        "Mieszkam w Gdańsku od marca",
        "Przypomnij mi jutro o dentyście",
        "Otwieraj rolety codziennie o siódmej",
        "Włącz światło na ganku co wieczór",
        "Nasz kot ma na imię Filemon",
        "Co lubi moja żona na urodziny?",
        "Zgaś światło w korytarzu, gdy wszyscy śpią",
        "Wyłącz ogrzewanie, bo jedziemy na urlop",
        "Zamknij drzwi na noc",
        "Włączaj ogrzewanie w dni robocze o szóstej",
    ],
    "sv": [
        "Kom ihåg att min dotter är allergisk mot nötter",
        "Tänd alltid lampan när jag kommer hem",
        "Stäng aldrig av kylskåpet i garaget",
        "Ställ värmen på 22, mamma kommer i morgon",
        "Jag bor i Göteborg sedan mars",
        "Påminn mig om tandläkaren i morgon",
        "Öppna persiennerna varje morgon klockan sju",
        "Vår katt heter Måns",
        "Vad gillar min fru på sin födelsedag?",
        "Släck i hallen om alla sover",
        "Stäng av värmen eftersom vi åker på semester",
        "Lås ytterdörren på natten",
        "Sätt på värmen klockan sex på vardagarna",
        "Spela radio i köket på tisdagar",
    ],
    "da": [
        "Husk at min datter er allergisk over for nødder",
        "Tænd altid lyset, når jeg kommer hjem",
        "Sluk aldrig køleskabet i garagen",
        "Sæt varmen til 22, mor kommer i morgen",
        "Jeg bor i Aarhus siden marts",
        "Påmind mig om tandlægen i morgen",
        "Åbn persiennerne hver morgen klokken syv",
        "Vores kat hedder Mis",
        "Hvad kan min kone lide til sin fødselsdag?",
        "Sluk lyset i gangen, hvis alle sover",
        "Sluk varmen, fordi vi tager på ferie",
        "Lås hoveddøren om natten",
        "Tænd varmen klokken seks på hverdage",
        "Spil radio i køkkenet om tirsdagen",
    ],
}


def _rows(table: dict[str, list[str]]) -> list[tuple[str, str]]:
    return [(language, text) for language, texts in table.items() for text in texts]


@pytest.mark.parametrize(("language", "text"), _rows(COMMANDS))
def test_device_commands(language: str, text: str) -> None:
    """Imperatives, polite requests and questions about the home are skipped."""
    assert is_device_command(text), language


@pytest.mark.parametrize(("language", "text"), _rows(PERSONAL))
def test_personal_statements_are_not_commands(language: str, text: str) -> None:
    """Anything about a person or how things should be is worth an LLM call."""
    assert not is_device_command(text), language


@pytest.mark.parametrize(
    "text",
    [
        # Curly apostrophes, as phones type them, are apostrophes.
        "Qu’est-ce qu’il y a au programme ?",
        "C’è luce in cucina?",
        # A question word of a language that needs a question mark.
        "¿Hay leche en la nevera?",
        "¿Como está el tiempo hoy?",
    ],
)
def test_punctuation(text: str) -> None:
    """Apostrophes of any shape, and question marks where they decide."""
    assert is_device_command(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Words that open questions and statements alike need a "?".
        ("¿Está encendida la luz del jardín?", True),
        ("Está encendida la luz del jardín", False),
        ("È accesa la luce del garage?", True),
        ("È accesa la luce del garage", False),
        ("¿Hay leche en la nevera?", True),
        ("Hay leche en la nevera", False),
        ("Quando apre la farmacia?", True),
        ("Quando arriva Marco, accendi la luce", False),
        # A noun that is also an imperative: a rule, not a command.
        ("Règle le thermostat sur 19", True),
        ("Règle de la maison : pas de télé après 21 heures", False),
        ("Regola di casa: niente televisione a cena", False),
    ],
)
def test_ambiguous_openers(text: str, *, expected: bool) -> None:
    """Openers that also start statements count only where they must ask."""
    assert is_device_command(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Danke schön!", True),
        ("Merci beaucoup", True),
        ("Guten Morgen, wie warm ist es draußen?", True),
        ("Buenas noches", True),
        ("Danke, das Paket kommt übrigens am Freitag", False),
        ("Gracias, el fontanero viene el jueves", False),
        ("Grazie, domani viene l'idraulico", False),
        ("Thanks, the plumber comes on Friday", False),
    ],
)
def test_greetings(text: str, *, expected: bool) -> None:
    """A greeting or thanks is a command alone or before one, not before news."""
    assert is_device_command(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Spegni la luce in cucina, per favore", True),
        ("Zet de verwarming op 20, alsjeblieft", True),
        ("Mach das Licht an. Und schließ die Rollläden", True),
        ("Apaga la luz, Lucía tiene examen mañana", False),
        ("Éteins la lumière, Julie a un examen demain", False),
        ("Doe het licht uit. Sanne heeft morgen een examen", False),
        ("Turn off the light - Lena has an exam tomorrow", False),
    ],
)
def test_second_clause(text: str, *, expected: bool) -> None:
    """A clause after a command must be a command or a courtesy too."""
    assert is_device_command(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # "my" before a thing of the home only says whose it is.
        ("Stoppe meinen Timer in der Küche", True),
        ("Arrête mon minuteur", True),
        ("Cancela mi temporizador del salón", True),
        ("Cancella il mio timer", True),
        ("Annuleer mijn kookwekker", True),
        ("Cancela o meu temporizador", True),
        ("Pause my timer in the kitchen", True),
        # Before a person it does not.
        ("Accendi la luce nella camera di mia figlia", False),
        ("Schalte das Licht in meinem Zimmer aus, meine Tochter schläft", False),
        ("Stop my timer, my wife is asleep", False),
    ],
)
def test_owned_things(text: str, *, expected: bool) -> None:
    """A possessive is personal unless it owns a room, a device or a timer."""
    assert is_device_command(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Italian "i" is an article, English "I" a person.
        ("Spegni i faretti del giardino", True),
        ("turn on the heating so i can sleep", False),
        # French "son" is a sound, English "son" a person.
        ("Baisse le son", True),
        ("Turn on the light, son", False),
        # Spanish "qué" asks; "que" does not without a question mark.
        ("Qué hora es", True),
        ("Que venga el fontanero el lunes", False),
        # Portuguese "no" is "in the", Spanish "no" a rule.
        ("Liga a luz no quarto", True),
        ("Enciende la luz y no la apagues", False),
        # Names that are imperatives elsewhere: French "lance", Dutch "toon".
        ("Lance is coming over on Friday", False),
        ("Toon komt zaterdag eten", False),
        ("Lasse kommt morgen zum Essen", False),
        # Danish "er" (is) asks only with a question mark: German "er" is "he".
        ("Er ist seit gestern krank", False),
        ("Er der nogen vinduer åbne", True),
        # Danish "os" (us) would be Portuguese "the"; Swedish "om" Dutch "at".
        ("Liga os candeeiros da sala", True),
        ("Zet de verwarming om zeven uur aan", True),
        ("Släck lampan om det blir ljust", False),
        # Danish "vis" (show) is Dutch "fish", "spring" (skip) English.
        ("Vis eten we op vrijdag", False),
        ("Spring break starts on Monday", False),
        # Danish "mit" (my) is German "with".
        ("Spiele Musik mit Spotify im Bad", True),
        # Polish "jak" asks at the start, and is "when" after it.
        ("Jak jest pogoda na jutro?", True),
        ("Zamknij garaż, jak tylko wrócę", False),
    ],
)
def test_words_of_two_languages(text: str, *, expected: bool) -> None:
    """All languages are matched at once without one's words spoiling another's."""
    assert is_device_command(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # No verb, or the verb left out before its particle.
        ("Licht im Flur aus", True),
        ("Wohnzimmer Licht an", True),
        ("licht im flur aus", True),
        ("Rollläden runter, bitte", True),
        ("Lamp in de keuken uit", True),
        ("Gordijnen dicht", True),
        ("Heizung im Bad höher", True),
        ("Kitchen lights off", True),
        ("Fan on please", True),
        # A verb of state, a person's doing, a time: a statement or a rule.
        ("Mias Licht bleibt an", False),
        ("Das Licht im Keller war an", False),
        ("Lena macht das Licht aus", False),
        ("Heute Abend Licht an", False),
        ("Abends Licht aus", False),
        ("Het licht op zolder blijft aan", False),
        ("De achterdeur staat open", False),
        ("The porch light stays on", False),
        ("Tom turns the lights off", False),
        ("Lights off at night", False),
        ("Papa Licht aus", False),
        # Over six words: left to the LLM (a missed skip costs one call).
        ("Licht im Flur und in der Küche aus", False),
    ],
)
def test_short_commands(text: str, *, expected: bool) -> None:
    """A verbless command of a few plain words of the home is a command."""
    assert is_device_command(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A time of day makes a command a standing rule, worth remembering.
        ("Lock the door at night", False),
        ("Turn on the coffee machine in the morning", False),
        ("Ferme la porte à clé le soir", False),
        ("Cierra con llave por la noche", False),
        ("Chiudi a chiave la sera", False),
        ("Fecha a porta à chave à noite", False),
        # Without one it is a command now.
        ("Lock the door", True),
        ("Ferme la porte à clé", True),
        ("Cierra la puerta con llave", True),
        ("Turn on the night light", True),
    ],
)
def test_times_of_day_make_a_rule(text: str, *, expected: bool) -> None:
    """A time of day ("at night", "le soir") makes a rule, not a one-off."""
    assert is_device_command(text) is expected


def _transcript(*messages: str, tools: tuple[str, ...] = ()) -> Transcript:
    return Transcript(
        text="\n".join(messages),
        message_ids=frozenset(range(len(messages))),
        user_messages=messages,
        speakers=("person.anna",),
        tool_names=tools,
    )


def test_skip_reason_in_german() -> None:
    """German device commands only are skipped; one personal fact keeps it."""
    commands = ("Schalte das Licht im Flur ein", "Wie warm ist es im Wohnzimmer?")
    assert skip_reason(_transcript(*commands), min_user_words=3) is (
        SkipReason.DEVICE_COMMANDS
    )
    mixed = (*commands, "Meine Tochter ist allergisch gegen Nüsse")
    assert skip_reason(_transcript(*mixed), min_user_words=3) is None


def test_skip_reason_after_intents() -> None:
    """Intents alone skip a plain request, not one that says something personal."""
    intents = ("HassTurnOn",)
    plain = _transcript("Es ist dunkel hier, die Lampe bitte", tools=intents)
    assert skip_reason(plain, min_user_words=3) is SkipReason.DEVICE_COMMANDS
    personal = _transcript(
        "Il fait sombre, ma fille lit ici, la lampe s'il te plaît", tools=intents
    )
    assert skip_reason(personal, min_user_words=3) is None
    # "me" that only says who asks does not make a request personal.
    asked = _transcript(
        "¿Me pones la lámpara del salón?", "Todo oscuro aquí", tools=intents
    )
    assert skip_reason(asked, min_user_words=3) is SkipReason.DEVICE_COMMANDS
