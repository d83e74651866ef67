"""A fifth set of dialogs, 34 turns in the eight languages, written at the start of stop 32
before any of its fixes: so its first run says how the reading and the checks carry over to
sentences nobody tuned them on (typos, missing accents, slang, "not X but Y", budgets carried
into a follow-up, general questions).

Same rules as `world.py`: each turn states what a reply must respect, judged on the catalog
rows of its cards, in euros.
"""

from __future__ import annotations

from sommelier.evaluation.dialogs import Dialog, Expect, Say, off

BLIND: tuple[Dialog, ...] = (
    # German
    (
        Say(
            "Hab Lust auf nen trockenen Riesling, so bis 25 €",
            language="de",
            expect=Expect(grapes=("riesling",), max_price=25, not_sweet=True),
        ),
        Say(
            "Gibt's auch was Österreichisches?",
            language="de",
            expect=Expect(countries=("austria",)),
        ),
    ),
    off("Wie lange hält sich ein offener Rotwein im Kühlschrank?", "de"),
    (
        Say(
            "Kein Rotwein bitte, was passt zu Sushi?",
            language="de",
            expect=Expect(not_types=("red",)),
        ),
    ),
    # Spanish
    (
        Say(
            "Busco un tinto argentino para un asado, como mucho 20 euros",
            language="es",
            expect=Expect(types=("red",), countries=("argentina",), max_price=20),
        ),
        Say(
            "¿Y otro por el estilo pero de Chile?",
            language="es",
            expect=Expect(types=("red",), countries=("chile",)),
        ),
    ),
    off("¿Se puede cocinar con un vino que lleva una semana abierto?", "es"),
    (
        Say(
            "Algo con burbujas que no sea cava, para brindar",
            language="es",
            expect=Expect(types=("sparkling",), not_countries=("spain",)),
        ),
    ),
    # French
    (
        Say(
            "Je cherche un blanc sec pour des huitres, 20 euros max",
            language="fr",
            expect=Expect(types=("white",), max_price=20, not_sweet=True),
        ),
        Say(
            "Autre chose, mais pas de France",
            language="fr",
            expect=Expect(types=("white",), not_countries=("france",)),
        ),
    ),
    off("C'est quoi la différence entre un champagne et un crémant ?", "fr"),
    (
        Say(
            "Un rouge italien pour des lasagnes",
            language="fr",
            expect=Expect(types=("red",), countries=("italy",)),
        ),
    ),
    # Italian
    (
        Say(
            "Mi serve un rosso corposo per la fiorentina, massimo 60 euro",
            language="it",
            expect=Expect(types=("red",), max_price=60),
        ),
        Say("Qualcosa che costi meno?", language="it", expect=Expect(types=("red",), cheaper=True)),
    ),
    off("Quanti gradi ha di solito un prosecco?", "it"),
    (
        Say(
            "Niente bollicine, un bianco fresco per il pesce",
            language="it",
            expect=Expect(types=("white",)),
        ),
    ),
    # Portuguese
    (
        Say(
            "Quero um espumante para o Réveillon até 40 euros",
            language="pt",
            expect=Expect(types=("sparkling",), max_price=40),
        ),
    ),
    off("Vinho tinto faz mesmo bem ao coração?", "pt"),
    (
        Say(
            "Tem algum vinho do Porto?",
            language="pt",
            expect=Expect(types=("fortified",), countries=("portugal",)),
        ),
    ),
    (
        Say(
            "Um branco da Nova Zelandia pra acompanhar salada",
            language="pt",
            expect=Expect(types=("white",), countries=("new zealand",)),
        ),
    ),
    # Russian
    (
        Say(
            "Посоветуй белое сухое к рыбе, не дороже 20 евро",
            language="ru",
            expect=Expect(types=("white",), max_price=20, not_sweet=True),
        ),
        Say("А подешевле есть?", language="ru", expect=Expect(types=("white",), cheaper=True)),
    ),
    off("Правда, что вино нужно хранить лёжа?", "ru"),
    (
        Say(
            "Хочу что-нибудь испанское, только не красное",
            language="ru",
            expect=Expect(countries=("spain",), not_types=("red",)),
        ),
    ),
    # Dutch
    (
        Say(
            "Ik zoek een rode wijn uit Italie voor pasta, max 25 euro",
            language="nl",
            expect=Expect(types=("red",), countries=("italy",), max_price=25),
        ),
        Say(
            "Heb je ook iets goedkopers?",
            language="nl",
            expect=Expect(types=("red",), cheaper=True),
        ),
    ),
    off("Op welke temperatuur schenk je een rosé?", "nl"),
    (
        Say(
            "Geen Franse wijn, wel iets mousserends voor een feestje",
            language="nl",
            expect=Expect(types=("sparkling",), not_countries=("france",)),
        ),
    ),
    # English
    (Say("yo got any decent malbec for under a tenner", expect=Expect(relaxed=True)),),
    (
        Say(
            "not a fan of oaky chardonnay, what white would u pick for roast chicken",
            expect=Expect(types=("white",)),
        ),
    ),
    off("whats the quickest way to chill a bottle?", "en"),
    (Say("Anything Lebanese?", expect=Expect(countries=("lebanon",))),),
    (
        Say("A rose for a picnic, nothing pricey", expect=Expect(types=("rosé",))),
        Say("And a white one like that?", expect=Expect(types=("white",))),
    ),
)
