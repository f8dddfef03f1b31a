"""Singular and plural, verb and noun: one index term in every stemmed language.

The pairs are a household's words (issue #22): each language's singular /
plural pairs and verb / verbal-noun pairs must give the same term on the
index side and the query side, and a memory with one form is found by a
search with the other through a real store. Chinese and Japanese are not
stemmed (character pairs, no plural), so they have no pairs here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import snowballstemmer  # type: ignore[import-untyped]

from custom_components.memory.engine import MemoryStore, SearchQuery
from custom_components.memory.engine.languages.analysis import (
    index_columns,
    query_terms,
)
from custom_components.memory.engine.languages.plurals import base_form
from custom_components.memory.engine.languages.tags import ANALYSED, CJK
from custom_components.memory.engine.languages.words import SNOWBALL, stem
from tests.engine.conftest import contents, memory

# Singular / plural, space-separated "singular/plural".
PLURALS: dict[str, str] = {
    "en": "car/cars bike/bikes dog/dogs cat/cats key/keys room/rooms "
    "window/windows door/doors light/lights lamp/lamps bin/bins box/boxes "
    "dish/dishes glass/glasses bus/buses battery/batteries toy/toys "
    "plant/plants flower/flowers shoe/shoes sock/socks towel/towels "
    "knife/knives shelf/shelves leaf/leaves tomato/tomatoes potato/potatoes "
    "lunch/lunches birthday/birthdays pill/pills cup/cups chair/chairs "
    "blanket/blankets allergy/allergies family/families holiday/holidays "
    "child/children tooth/teeth wife/wives",
    "de": "Auto/Autos Kind/Kinder Haus/Häuser Hund/Hunde Katze/Katzen Tür/Türen "
    "Lampe/Lampen Tonne/Tonnen Flasche/Flaschen Glas/Gläser Tasse/Tassen "
    "Pflanze/Pflanzen Blume/Blumen Schuh/Schuhe Socke/Socken "
    "Handtuch/Handtücher Batterie/Batterien Termin/Termine "
    "Geburtstag/Geburtstage Nachbar/Nachbarn Arzt/Ärzte Buch/Bücher "
    "Stuhl/Stühle Tisch/Tische Decke/Decken Apfel/Äpfel Tomate/Tomaten "
    "Kartoffel/Kartoffeln Ei/Eier Sofa/Sofas Oma/Omas Baby/Babys "
    "Handy/Handys Foto/Fotos Kamera/Kameras Zimmer/Zimmern Woche/Wochen "
    "Monat/Monate Gabel/Gabeln Kürbis/Kürbisse Zeugnis/Zeugnisse Bus/Busse "
    "Pizza/Pizzas Kiwi/Kiwis",
    "nl": "fiets/fietsen auto/auto's kind/kinderen hond/honden kat/katten "
    "sleutel/sleutels kamer/kamers raam/ramen deur/deuren lamp/lampen "
    "bak/bakken fles/flessen bord/borden glas/glazen kop/koppen plant/planten "
    "bloem/bloemen schoen/schoenen sok/sokken handdoek/handdoeken "
    "batterij/batterijen verjaardag/verjaardagen dokter/dokters boek/boeken "
    "stoel/stoelen tafel/tafels deken/dekens appel/appels tomaat/tomaten "
    "cadeau/cadeaus ei/eieren foto/foto's oma/oma's baby/baby's "
    "afspraak/afspraken trein/treinen maand/maanden week/weken dag/dagen "
    "huis/huizen brief/brieven muis/muizen kast/kasten pan/pannen "
    "vork/vorken lepel/lepels mes/messen kussen/kussens pil/pillen",
    "fr": "vélo/vélos voiture/voitures chien/chiens chat/chats clé/clés "
    "chambre/chambres fenêtre/fenêtres porte/portes lampe/lampes "
    "poubelle/poubelles bouteille/bouteilles assiette/assiettes verre/verres "
    "tasse/tasses plante/plantes fleur/fleurs chaussure/chaussures "
    "chaussette/chaussettes serviette/serviettes pile/piles "
    "anniversaire/anniversaires voisin/voisins médecin/médecins livre/livres "
    "chaise/chaises pomme/pommes tomate/tomates cadeau/cadeaux "
    "gâteau/gâteaux jeu/jeux animal/animaux journal/journaux œuf/œufs "
    "enfant/enfants jouet/jouets radiateur/radiateurs pneu/pneus "
    "bureau/bureaux genou/genoux bijou/bijoux canapé/canapés frigo/frigos "
    "stylo/stylos piano/pianos photo/photos radio/radios "
    "fourchette/fourchettes couteau/couteaux cheval/chevaux travail/travaux "
    "ami/amis bébé/bébés",
    "es": "coche/coches bici/bicis perro/perros gato/gatos llave/llaves "
    "habitación/habitaciones ventana/ventanas puerta/puertas "
    "lámpara/lámparas cubo/cubos botella/botellas plato/platos vaso/vasos "
    "taza/tazas planta/plantas flor/flores zapato/zapatos "
    "calcetín/calcetines toalla/toallas pila/pilas vecino/vecinos "
    "médico/médicos libro/libros silla/sillas mesa/mesas manta/mantas "
    "manzana/manzanas tomate/tomates regalo/regalos juguete/juguetes "
    "niño/niños hijo/hijos huevo/huevos lápiz/lápices luz/luces pez/peces "
    "sofá/sofás radiador/radiadores rueda/ruedas neumático/neumáticos "
    "cita/citas tren/trenes mes/meses camión/camiones tenedor/tenedores "
    "cuchara/cucharas cuchillo/cuchillos cama/camas almohada/almohadas "
    "semana/semanas papá/papás bebé/bebés",
    "it": "macchina/macchine cane/cani gatto/gatti finestra/finestre porta/porte "
    "lampada/lampade bidone/bidoni bottiglia/bottiglie piatto/piatti "
    "tazza/tazze pianta/piante fiore/fiori scarpa/scarpe calzino/calzini "
    "pila/pile compleanno/compleanni vicino/vicini medico/medici libro/libri "
    "sedia/sedie tavolo/tavoli coperta/coperte mela/mele pomodoro/pomodori "
    "regalo/regali giocattolo/giocattoli figlio/figli bambino/bambini "
    "amico/amici gioco/giochi banca/banche lago/laghi divano/divani "
    "termosifone/termosifoni gomma/gomme appuntamento/appuntamenti "
    "treno/treni mese/mesi forchetta/forchette cucchiaio/cucchiai "
    "coltello/coltelli letto/letti cuscino/cuscini settimana/settimane "
    "bicicletta/biciclette uovo/uova",
    "pt": "carro/carros bicicleta/bicicletas cão/cães gato/gatos chave/chaves "
    "quarto/quartos janela/janelas porta/portas lâmpada/lâmpadas "
    "caixote/caixotes garrafa/garrafas prato/pratos copo/copos "
    "chávena/chávenas planta/plantas flor/flores sapato/sapatos meia/meias "
    "toalha/toalhas pilha/pilhas aniversário/aniversários vizinho/vizinhos "
    "médico/médicos livro/livros cadeira/cadeiras mesa/mesas "
    "cobertor/cobertores maçã/maçãs tomate/tomates presente/presentes "
    "brinquedo/brinquedos filho/filhos ovo/ovos pão/pães mão/mãos "
    "limão/limões avião/aviões botão/botões luz/luzes animal/animais "
    "jornal/jornais papel/papéis sofá/sofás mês/meses pneu/pneus "
    "consulta/consultas casa/casas garfo/garfos colher/colheres faca/facas "
    "cama/camas semana/semanas",
    "pl": "samochód/samochody rower/rowery kot/koty klucz/klucze pokój/pokoje "
    "okno/okna lampa/lampy kosz/kosze butelka/butelki talerz/talerze "
    "szklanka/szklanki kubek/kubki roślina/rośliny kwiat/kwiaty but/buty "
    "skarpetka/skarpetki ręcznik/ręczniki bateria/baterie lekarz/lekarze "
    "książka/książki krzesło/krzesła stół/stoły koc/koce jabłko/jabłka "
    "pomidor/pomidory prezent/prezenty zabawka/zabawki jajko/jajka "
    "córka/córki kanapa/kanapy kaloryfer/kaloryfery opona/opony "
    "miesiąc/miesiące dom/domy łóżko/łóżka poduszka/poduszki "
    "widelec/widelce łyżka/łyżki nóż/noże",
    "sv": "bil/bilar cykel/cyklar hund/hundar katt/katter nyckel/nycklar "
    "dörr/dörrar lampa/lampor tunna/tunnor flaska/flaskor "
    "tallrik/tallrikar kopp/koppar växt/växter blomma/blommor "
    "strumpa/strumpor handduk/handdukar batteri/batterier "
    "födelsedag/födelsedagar granne/grannar stol/stolar filt/filtar "
    "äpple/äpplen tomat/tomater present/presenter leksak/leksaker "
    "pojke/pojkar flicka/flickor soffa/soffor vecka/veckor månad/månader "
    "dag/dagar säng/sängar kudde/kuddar gaffel/gafflar sked/skedar "
    "kniv/knivar tid/tider läkare/läkarna bok/böcker sko/skor fot/fötter",
    "da": "bil/biler cykel/cykler hund/hunde kat/katte nøgle/nøgler "
    "værelse/værelser vindue/vinduer dør/døre lampe/lamper spand/spande "
    "flaske/flasker tallerken/tallerkener kop/kopper plante/planter "
    "blomst/blomster strømpe/strømper håndklæde/håndklæder "
    "batteri/batterier fødselsdag/fødselsdage nabo/naboer læge/læger "
    "stol/stole bord/borde tæppe/tæpper æble/æbler tomat/tomater "
    "gave/gaver dreng/drenge pige/piger sofa/sofaer radiator/radiatorer "
    "uge/uger måned/måneder dag/dage hus/huse seng/senge pude/puder "
    "gaffel/gafler ske/skeer kniv/knive aftale/aftaler bog/bøger barn/børn "
    "mand/mænd",
    "no": "bil/biler sykkel/sykler hund/hunder katt/katter nøkkel/nøkler "
    "vindu/vinduer dør/dører lampe/lamper dunk/dunker flaske/flasker "
    "tallerken/tallerkener kopp/kopper plante/planter blomst/blomster "
    "sokk/sokker batteri/batterier bursdag/bursdager nabo/naboer lege/leger "
    "stol/stoler teppe/tepper eple/epler tomat/tomater gave/gaver leke/leker "
    "gutt/gutter jente/jenter sofa/sofaer ovn/ovner uke/uker "
    "måned/måneder dag/dager seng/senger pute/puter gaffel/gafler "
    "skje/skjeer kniv/kniver avtale/avtaler bok/bøker håndkle/håndklær "
    "mann/menn",
    "fi": "auto/autot pyörä/pyörät koira/koirat kissa/kissat huone/huoneet "
    "ikkuna/ikkunat ovi/ovet lamppu/lamput pullo/pullot lasi/lasit "
    "kuppi/kupit kasvi/kasvit kukka/kukat kenkä/kengät sukka/sukat "
    "paristo/paristot syntymäpäivä/syntymäpäivät naapuri/naapurit "
    "lääkäri/lääkärit kirja/kirjat tuoli/tuolit pöytä/pöydät peitto/peitot "
    "omena/omenat tomaatti/tomaatit lahja/lahjat lelu/lelut muna/munat "
    "tyttö/tytöt sohva/sohvat patteri/patterit viikko/viikot "
    "päivä/päivät talo/talot sänky/sängyt tyyny/tyynyt "
    "haarukka/haarukat lusikka/lusikat kävely/kävelyt",
    "ru": "машина/машины велосипед/велосипеды собака/собаки кошка/кошки "
    "ключ/ключи комната/комнаты окно/окна дверь/двери лампа/лампы бак/баки "
    "бутылка/бутылки тарелка/тарелки стакан/стаканы чашка/чашки "
    "растение/растения ботинок/ботинки носок/носки полотенце/полотенца "
    "батарейка/батарейки сосед/соседи врач/врачи книга/книги стол/столы "
    "одеяло/одеяла яблоко/яблоки помидор/помидоры подарок/подарки "
    "игрушка/игрушки яйцо/яйца диван/диваны шина/шины неделя/недели "
    "месяц/месяцы дом/дома кровать/кровати подушка/подушки вилка/вилки "
    "ложка/ложки нож/ножи огурец/огурцы",
}

# A verb and its noun (or verbal noun), "verb/noun".
VERB_NOUNS: dict[str, str] = {
    "en": "clean/cleaning cook/cooking paint/painting swim/swimming "
    "walk/walking water/watering charge/charging wash/washing bake/baking "
    "shop/shopping feed/feeding garden/gardening",
    "de": "bezahlen/Bezahlung reinigen/Reinigung einkaufen/Einkäufe "
    "besuchen/Besuche abholen/Abholung bestellen/Bestellung "
    "einladen/Einladung waschen/Wäsche spielen/Spiel anrufen/Anruf "
    "reisen/Reise fragen/Frage arbeiten/Arbeit laufen/Lauf",
    "nl": "fietsen/fiets wandelen/wandeling betalen/betaling "
    "verwarmen/verwarming koken/kook werken/werk tekenen/tekening "
    "zwemmen/zwem bezoeken/bezoek schoonmaken/schoonmaak",
    "fr": "nager/nage cuisiner/cuisine ranger/rangement arroser/arrosage "
    "nettoyer/nettoyage réparer/réparation chauffer/chauffage "
    "jardiner/jardinage payer/paiement visiter/visite",
    "es": "cocinar/cocina lavar/lavado comprar/compra pasear/paseo "
    "pagar/pago cenar/cena desayunar/desayuno llamar/llamada",
    "it": "cucinare/cucina giocare/gioco pagare/pagamento pranzare/pranzo "
    "cenare/cena nuotare/nuoto cantare/canto ballare/ballo "
    "studiare/studio lavorare/lavoro",
    "pt": "cozinhar/cozinha jogar/jogo comprar/compra almoçar/almoço "
    "trabalhar/trabalho regar/rega visitar/visita",
    "pl": "sprzątać/sprzątanie pływać/pływanie gotować/gotowanie "
    "prać/pranie czytać/czytanie malować/malowanie grać/granie "
    "spacerować/spacer",
    "sv": "städa/städning tvätta/tvätt cykla/cykling "
    "betala/betalning träna/träning diska/disk läsa/läsning måla/målning "
    "handla/handling",
    "da": "rengøre/rengøring vaske/vask svømme/svømning cykle/cykling "
    "betale/betaling træne/træning læse/læsning male/maling",
    "no": "vaske/vask svømme/svømming sykle/sykling betale/betaling "
    "trene/trening lese/lesing male/maling rydde/rydding",
    "fi": "maksaa/maksu laulaa/laulu lukea/luku",
    "ru": "плавать/плавание платить/плата рисовать/рисование "
    "гулять/гуляние ужинать/ужин завтракать/завтрак обедать/обед "
    "играть/игра работать/работа",
}

STEMMED = sorted(ANALYSED)


def _pairs(table: dict[str, str], code: str) -> list[tuple[str, str]]:
    return [(one, other) for one, other in (p.split("/") for p in table[code].split())]


def _apart(code: str, pairs: list[tuple[str, str]]) -> list[str]:
    """Return the pairs whose index or query terms differ."""
    return [
        f"{one}/{other}: {index_columns(one, code)[0]} / {index_columns(other, code)[0]}"
        for one, other in pairs
        if index_columns(one, code)[0] != index_columns(other, code)[0]
        or query_terms(one, code) != query_terms(other, code)
        or not query_terms(one, code)
    ]


def test_every_stemmed_language_has_its_pairs() -> None:
    """Every stemmed language has 30 or more pairs; CJK languages none."""
    assert set(PLURALS) == set(VERB_NOUNS) == ANALYSED
    assert not CJK & ANALYSED
    for code in STEMMED:
        assert len(_pairs(PLURALS, code)) + len(_pairs(VERB_NOUNS, code)) >= 30


@pytest.mark.parametrize("code", STEMMED)
def test_singular_and_plural_share_a_term(code: str) -> None:
    """A singular and its plural are one term, in the index and in a query."""
    assert _apart(code, _pairs(PLURALS, code)) == []


@pytest.mark.parametrize("code", STEMMED)
def test_verb_and_noun_share_a_term(code: str) -> None:
    """A verb and its noun ("städa", "städning") are one term."""
    assert _apart(code, _pairs(VERB_NOUNS, code)) == []


@pytest.mark.parametrize(
    ("code", "forms"),
    [
        ("ru", ("плавание плавания плаванию плаванием плавании плаваний "
                "плаваниям плаваниями плаваниях плавать плавает")),
        ("ru", ("носок носка носку носком носке носки носков носкам "
                "носками носках")),
        ("pl", ("kubek kubka kubkowi kubkiem kubku kubki kubków kubkom "
                "kubkami kubkach")),
        ("sv", "cykel cykeln cyklar cyklarna"),
        ("sv", "gaffel gaffeln gafflar gafflarna"),
        ("da", "barn barnet børn børnene"),
        ("no", "nøkkel nøkkelen nøkler nøklene"),
        ("de", "Kürbis Kürbisse Kürbissen"),
        ("es", "lápiz lápices"),
        ("fi", "kenkä kengät kenkää"),
    ],
)  # fmt: skip
def test_every_form_of_a_word_has_one_stem(code: str, forms: str) -> None:
    """Cases, numbers and definite forms share the word's stem."""
    assert len({stem(form.lower(), code) for form in forms.split()}) == 1


# Words the plural rules must not join: a name and a noun, a season and a
# verb, a house and a verb, a moon and a man.
@pytest.mark.parametrize(
    ("code", "one", "other"),
    [
        ("es", "Lucía", "luz"),
        ("es", "verano", "ver"),
        ("es", "dulce", "dulces"),
        ("de", "Haus", "hauen"),
        ("de", "Preis", "Preise"),
        ("nl", "maan", "man"),
        ("fr", "garage", "gare"),
        ("sv", "far", "fa"),
    ],
)
def test_rules_keep_other_words_apart(code: str, one: str, other: str) -> None:
    """The rules join a word's forms, not words that only look alike."""
    same = query_terms(one, code) == query_terms(other, code)
    # "dulce" / "dulces" and "Preis" / "Preise" are one word: they stay joined.
    assert same == (one.lower() in {"dulce", "preis"})


@pytest.mark.parametrize("code", sorted(set(SNOWBALL)))
def test_the_rules_never_part_what_snowball_joined(code: str) -> None:
    """Two forms Snowball gave one stem still share one (rules only join)."""
    stemmer = snowballstemmer.stemmer(SNOWBALL[code])
    endings = ("", "s", "e", "en", "er", "a", "o", "i", "es", "ar", "y")
    forms = {
        word.lower() + ending
        for table in (PLURALS, VERB_NOUNS)
        for pair in _pairs(table, code)
        for word in pair
        for ending in endings
        if "'" not in word
    }
    # The irregular plurals read as their singular are the one exception.
    words = {word for word in forms if base_form(word, code) == word}
    by_snowball: dict[str, set[str]] = {}
    for word in words:
        by_snowball.setdefault(stemmer.stemWord(word), set()).add(stem(word, code))
    assert {root: stems for root, stems in by_snowball.items() if len(stems) > 1} == {}


SAMPLE = [
    ("en", "The spare keys hang by the door", "where is the key"),
    ("de", "Die Autos stehen in der Garage", "Wo steht das Auto?"),
    ("nl", "De fietsen staan in de schuur", "Waar staat de fiets?"),
    ("fr", "Les vélos sont dans le garage", "Où est le vélo ?"),
    ("es", "Los lápices de Mia están en el cajón", "¿Dónde está el lápiz?"),
    ("it", "I cucchiai sono nel cassetto", "Dov'è il cucchiaio?"),
    ("pt", "Os limões estão na fruteira", "Onde está o limão?"),
    ("pl", "Kubki stoją w szafce", "Gdzie jest kubek?"),
    ("sv", "Cyklarna står i förrådet", "Var står cykeln?"),
    ("da", "Tallerkenerne står i skabet", "Hvor er tallerkenen?"),
    ("no", "Nøklene henger ved døra", "Hvor er nøkkelen?"),
    ("fi", "Kengät ovat eteisessä", "Missä kenkä on?"),
    ("ru", "Носки лежат в комоде", "Где носок?"),
]


@pytest.mark.parametrize(("code", "content", "question"), SAMPLE)
async def test_a_plural_memory_is_found_by_the_singular(
    db_path: Path, code: str, content: str, question: str
) -> None:
    """A real store finds the plural's memory from a singular question, and back."""
    store = MemoryStore(db_path, language=code)
    await store.open()
    try:
        await store.add_many(
            [memory(content), memory("Mia's dentist is on Friday", language="en")]
        )
        hits = await store.search(SearchQuery(text=question, language=code))
        assert contents(hits) == [content]
        singular = await store.add(memory(question.rstrip("?؟ ")))
        back = await store.search(SearchQuery(text=content, language=code))
        assert singular.item.id in [hit.item.id for hit in back]
    finally:
        await store.close()
