"""Dialogs in eight languages, and English the word lists never saw: typos, slang, currencies,
negations, budgets carried across turns, off-topic questions.

Written for the evaluation, independently of the word lists (catalog/lexicon/), so that
passing them says something about people nobody tuned for. Each turn states what a reply must
respect (`Expect`), judged on the catalog rows of the cards it shows, and the language the reply
must be written in. Prices are the starter catalog's euros; a budget in another currency is
judged at its value in euros (`Expect.max_price`).
"""

from __future__ import annotations

from sommelier.evaluation.dialogs import OFF, Dialog, Expect, Say

GERMAN: tuple[Dialog, ...] = (
    (
        Say(
            "Hallo! Ich suche einen trockenen Rotwein zu Lammkeule, höchstens 25 Euro.",
            language="de",
            expect=Expect(types=("red",), max_price=25),
        ),
        Say("Gibt's auch was Günstigeres?", language="de", expect=Expect(cheaper=True)),
    ),
    (
        Say(
            "Was passt zu Spargel? Bitte keinen Rotwein.",
            language="de",
            expect=Expect(not_types=("red",)),
        ),
    ),
    (
        Say(
            "Mein Budget liegt bei 15 Euro. Ein Weißer aus Deutschland oder Österreich?",
            language="de",
            expect=Expect(types=("white",), max_price=15, countries=("germany", "austria")),
        ),
    ),
    (
        Say(
            "Wie hoch ist eigentlich die Zugspitze?", wine_request=False, language="de", expect=OFF
        ),
        Say(
            "Na gut, dann einen Sekt für Silvester",
            language="de",
            expect=Expect(types=("sparkling",)),
        ),
    ),
)

SPANISH: tuple[Dialog, ...] = (
    (
        Say(
            "Busco un vino blanco para una paella de marisco, no más de 20 €",
            language="es",
            expect=Expect(types=("white",), max_price=20),
        ),
        Say(
            "¿Y algo de Portugal?",
            language="es",
            expect=Expect(countries=("portugal",), max_price=20),
        ),
    ),
    (
        Say(
            "Nada de vinos franceses, quiero un tinto potente para un asado",
            language="es",
            expect=Expect(types=("red",), not_countries=("france",)),
        ),
    ),
    (
        Say(
            "Un espumoso baratito para brindar en la oficina",
            language="es",
            expect=Expect(types=("sparkling",), max_price=20),
        ),
    ),
    (Say("¿Quién ganó el mundial de 2010?", wine_request=False, language="es", expect=OFF),),
    (Say("¿Tienes vinos de Georgia?", language="es", expect=Expect(relaxed=True)),),
)

FRENCH: tuple[Dialog, ...] = (
    (
        Say(
            "Je cherche un vin rouge léger pour accompagner un poulet rôti",
            language="fr",
            expect=Expect(types=("red",)),
        ),
        Say("Un peu moins cher ?", language="fr", expect=Expect(cheaper=True)),
    ),
    (
        Say(
            "Un champagne pour un anniversaire, mais pas plus de 50 euros",
            language="fr",
            expect=Expect(types=("sparkling",), max_price=50),
        ),
    ),
    (
        Say(
            "J'aime pas trop les vins sucrés. Un blanc d'Alsace ?",
            language="fr",
            expect=Expect(types=("white",), not_sweet=True),
        ),
    ),
    (
        Say(
            "Quelle est la capitale de l'Australie ?", wine_request=False, language="fr", expect=OFF
        ),
        Say(
            "Bon, alors un vin australien pour un barbecue",
            language="fr",
            expect=Expect(countries=("australia",)),
        ),
    ),
)

ITALIAN: tuple[Dialog, ...] = (
    (
        Say(
            "Mi consigli un rosso per la pizza margherita? Massimo 15 euro",
            language="it",
            expect=Expect(types=("red",), max_price=15),
        ),
        Say(
            "Qualcosa di diverso, magari non italiano",
            language="it",
            expect=Expect(not_countries=("italy",)),
        ),
    ),
    (
        Say(
            "Vorrei un bianco secco, niente di francese",
            language="it",
            expect=Expect(types=("white",), not_countries=("france",), not_sweet=True),
        ),
    ),
    (
        Say(
            "Un vino dolce da dessert per il tiramisù",
            language="it",
            expect=Expect(sweet=True),
        ),
    ),
    (Say("Che tempo fa domani a Roma?", wine_request=False, language="it", expect=OFF),),
    (
        Say(
            "Prosecco sotto i 12 euro?",
            language="it",
            expect=Expect(types=("sparkling",), max_price=12),
        ),
    ),
)

PORTUGUESE: tuple[Dialog, ...] = (
    (
        Say(
            "Quero um vinho tinto português até 20 euros",
            language="pt",
            expect=Expect(types=("red",), countries=("portugal",), max_price=20),
        ),
        Say(
            "E um branco para acompanhar bacalhau?",
            language="pt",
            expect=Expect(types=("white",)),
        ),
    ),
    (
        Say(
            "Não gosto de vinho rosé. O que sugere para um churrasco?",
            language="pt",
            expect=Expect(not_types=("rosé",)),
        ),
    ),
    (
        Say(
            "Um espumante para o Ano Novo, mas nada muito doce",
            language="pt",
            expect=Expect(types=("sparkling",), not_sweet=True),
        ),
    ),
    (Say("Qual é a altura do Cristo Redentor?", wine_request=False, language="pt", expect=OFF),),
    (Say("Tem algum vinho abaixo de 10 euros?", language="pt", expect=Expect(max_price=10)),),
)

RUSSIAN: tuple[Dialog, ...] = (
    (
        Say(
            "Посоветуй красное сухое вино к шашлыку, до 30 евро",
            language="ru",
            expect=Expect(types=("red",), max_price=30, not_sweet=True),
        ),
        Say("А есть что-нибудь подешевле?", language="ru", expect=Expect(cheaper=True)),
    ),
    (
        Say(
            "Белое вино к рыбе, только не из Франции",
            language="ru",
            expect=Expect(types=("white",), not_countries=("france",)),
        ),
    ),
    (Say("Хочу игристое на день рождения", language="ru", expect=Expect(types=("sparkling",))),),
    (Say("Сколько будет дважды два?", wine_request=False, language="ru", expect=OFF),),
    (
        Say(
            "Мой бюджет 20 евро. Что-нибудь из Италии?",
            language="ru",
            expect=Expect(countries=("italy",), max_price=20),
        ),
    ),
)

DUTCH: tuple[Dialog, ...] = (
    (
        Say(
            "Ik zoek een rode wijn bij stoofvlees, niet te duur",
            language="nl",
            expect=Expect(types=("red",), max_price=30),
        ),
        Say(
            "Iets anders, maar dan uit Spanje",
            language="nl",
            expect=Expect(countries=("spain",)),
        ),
    ),
    (
        Say(
            "Een droge witte wijn voor bij oesters, maximaal 20 euro",
            language="nl",
            expect=Expect(types=("white",), max_price=20, not_sweet=True),
        ),
    ),
    (
        Say(
            "Geen rode wijn vandaag, wel iets met bubbels",
            language="nl",
            expect=Expect(types=("sparkling",), not_types=("red",)),
        ),
    ),
    (Say("Hoe laat is het nu in Tokio?", wine_request=False, language="nl", expect=OFF),),
    (Say("Heb je een zoete wijn bij kaas?", language="nl", expect=Expect(sweet=True)),),
)

# English that the old word lists misread: slang money, typos, a negation that is not the
# clause's subject, a budget carried to the next turn, a question that is not about wine.
ENGLISH: tuple[Dialog, ...] = (
    (
        Say(
            "got about 30 quid, after a decent bottle of red for a curry night",
            language="en",
            expect=Expect(types=("red",), max_price=36),
        ),
    ),
    (
        Say(
            "somethin bubbly n not too sweet pls, nothin from italy",
            language="en",
            expect=Expect(types=("sparkling",), not_sweet=True, not_countries=("italy",)),
        ),
    ),
    (
        Say(
            "No Aussie wine for me, but a big Shiraz would be great",
            language="en",
            expect=Expect(not_countries=("australia",), grapes=("syrah", "shiraz")),
        ),
    ),
    (
        Say(
            "My budget is 20 bucks. Something white and crisp?",
            language="en",
            expect=Expect(types=("white",), max_price=20),
        ),
        Say(
            "And a red for the same money?",
            language="en",
            expect=Expect(types=("red",), max_price=20),
        ),
    ),
    (Say("Who painted the Mona Lisa?", wine_request=False, language="en", expect=OFF),),
)

WORLD: tuple[Dialog, ...] = (
    *GERMAN,
    *SPANISH,
    *FRENCH,
    *ITALIAN,
    *PORTUGUESE,
    *RUSSIAN,
    *DUTCH,
    *ENGLISH,
)

# The CI smoke's one dialog that is not in English.
SMOKE_WORLD: Dialog = (
    Say(
        "Ich hätte gern einen Weißwein zu Fisch, nicht teurer als 20 Euro",
        language="de",
        expect=Expect(types=("white",), max_price=20),
    ),
)
