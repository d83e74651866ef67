"""A second set of dialogs in the eight languages, written after the word lists and the prose
checks had been tuned on `world.py`. Its first run showed what they still missed ("weder …
noch", a misspelt "Weiswein", the French "pour" read as an English wine word, general questions
answered with wines); those were fixed in general form, and `fresh.py`, written before the
fixes, checks that they carry over. Other dishes, other
currencies (Swiss francs, dollars, reais, roubles, a British "tenner"), slang ("balles"), typos
("Weiswein", "dulse"), a negation of a whole style, budgets carried to the next turn, and
questions that are not about wine (one of them mentions wine).

Same rules as `world.py`: each turn states what a reply must respect, judged on the catalog
rows of its cards; prices are the starter catalog's euros, and a budget in another currency is
judged at its value in euros (lexicon/currencies.toml).
"""

from __future__ import annotations

from sommelier.evaluation.dialogs import OFF, Dialog, Expect, Say

GERMAN: tuple[Dialog, ...] = (
    (
        Say(
            "Servus! Wir grillen am Wochenende Rippchen. Welcher kräftige Rote passt dazu, "
            "darf höchstens 20 Franken kosten?",
            language="de",
            expect=Expect(types=("red",), max_price=21.4),
        ),
        Say(
            "Und was Ähnliches, aber nicht aus Australien?",
            language="de",
            expect=Expect(types=("red",), not_countries=("australia",)),
        ),
    ),
    (
        Say(
            "Ich trinke weder Sekt noch Süßwein. Was empfiehlst du zum Käsefondue?",
            language="de",
            expect=Expect(not_types=("sparkling", "dessert"), not_sweet=True),
        ),
    ),
    (
        Say(
            "Was passt zu Sushi? Gern was Leichtes, am liebsten Weiswein",
            language="de",
            expect=Expect(types=("white",)),
        ),
    ),
    (
        Say(
            "Kannst du mir ein gutes Rezept für Apfelstrudel geben?",
            wine_request=False,
            language="de",
            expect=OFF,
        ),
        Say("Und ein süßer Wein dazu?", language="de", expect=Expect(sweet=True)),
    ),
)

SPANISH: tuple[Dialog, ...] = (
    (
        Say(
            "Hola, necesito un vino para una cena romántica, algo rosado y seco",
            language="es",
            expect=Expect(types=("rosé",), not_sweet=True),
        ),
    ),
    (
        Say(
            "Algo para acompañar un cordero asado, pero que no sea de España",
            language="es",
            expect=Expect(not_countries=("spain",)),
        ),
        Say("¿Hay alguna opción más económica?", language="es", expect=Expect(cheaper=True)),
    ),
    (
        Say(
            "Tengo 15 dólares, ¿qué blanco me recomiendas?",
            language="es",
            expect=Expect(types=("white",), max_price=13.05),
        ),
    ),
    (Say("¿Cuántos habitantes tiene Madrid?", wine_request=False, language="es", expect=OFF),),
    (Say("quiero un vino dulse para el postre", language="es", expect=Expect(sweet=True)),),
)

FRENCH: tuple[Dialog, ...] = (
    (
        Say(
            "Salut ! Un bon rouge pour une raclette entre potes, max 25 balles",
            language="fr",
            expect=Expect(types=("red",), max_price=25),
        ),
        Say(
            "Et un blanc dans le même budget ?",
            language="fr",
            expect=Expect(types=("white",), max_price=25),
        ),
    ),
    (
        Say(
            "Pas de vin italien svp, je voudrais un effervescent pour l'apéro",
            language="fr",
            expect=Expect(types=("sparkling",), not_countries=("italy",)),
        ),
    ),
    (
        Say(
            "Tu me conseilles quoi avec un saumon grillé ? Pas trop tannique si possible",
            language="fr",
            expect=Expect(),
        ),
    ),
    (
        Say(
            "Combien de temps faut-il pour aller de Paris à Lyon en TGV ?",
            wine_request=False,
            language="fr",
            expect=OFF,
        ),
    ),
    (Say("Un liquoreux pour le foie gras", language="fr", expect=Expect(sweet=True)),),
)

ITALIAN: tuple[Dialog, ...] = (
    (
        Say(
            "Ciao, cerco un bianco fresco per una grigliata di pesce, sui 15-20 euro",
            language="it",
            expect=Expect(types=("white",), max_price=20),
        ),
        Say("Qualcosa di più economico?", language="it", expect=Expect(cheaper=True)),
    ),
    (
        Say(
            "Niente rossi stasera, fa troppo caldo. Cosa mi suggerisci con un'insalata di pollo?",
            language="it",
            expect=Expect(not_types=("red",)),
        ),
    ),
    (
        Say(
            "Un vino spagnolo per la paella, massimo 20 euro",
            language="it",
            expect=Expect(countries=("spain",), max_price=20),
        ),
    ),
    (Say("Chi ha scritto la Divina Commedia?", wine_request=False, language="it", expect=OFF),),
    (
        Say(
            "Vorrei un vino da meditazione, tipo un Porto",
            language="it",
            expect=Expect(types=("fortified",)),
        ),
    ),
)

PORTUGUESE: tuple[Dialog, ...] = (
    (
        Say(
            "Olá! Preciso de um vinho para um jantar de frutos do mar, nada de tinto",
            language="pt",
            expect=Expect(not_types=("red",)),
        ),
        Say("Tem algo mais barato?", language="pt", expect=Expect(cheaper=True)),
    ),
    (
        Say(
            "Quero um Malbec argentino de até 120 reais",
            language="pt",
            expect=Expect(grapes=("malbec",), max_price=19.2),
        ),
    ),
    (
        Say(
            "Qual vinho combina com feijoada? Prefiro tinto e encorpado",
            language="pt",
            expect=Expect(types=("red",)),
        ),
    ),
    (Say("Quem descobriu o Brasil?", wine_request=False, language="pt", expect=OFF),),
    (
        Say(
            "Um vinho do Porto para dar de presente, até 30 euros",
            language="pt",
            expect=Expect(types=("fortified",), max_price=30),
        ),
    ),
)

RUSSIAN: tuple[Dialog, ...] = (
    (
        Say(
            "Привет! Нужно белое вино к суши, не дороже 2000 рублей",
            language="ru",
            expect=Expect(types=("white",), max_price=22),
        ),
        Say(
            "А что-нибудь из Германии?",
            language="ru",
            expect=Expect(countries=("germany",)),
        ),
    ),
    (
        Say(
            "Не люблю сладкое. Посоветуй игристое к празднику",
            language="ru",
            expect=Expect(types=("sparkling",), not_sweet=True),
        ),
    ),
    (
        Say(
            "Красное вино к пасте, только не итальянское",
            language="ru",
            expect=Expect(types=("red",), not_countries=("italy",)),
        ),
    ),
    (Say("Кто написал «Войну и мир»?", wine_request=False, language="ru", expect=OFF),),
    (Say("Хочу десертное вино к сырной тарелке", language="ru", expect=Expect(sweet=True)),),
)

DUTCH: tuple[Dialog, ...] = (
    (
        Say(
            "Hoi! Welke wijn past bij kaasfondue? Liefst wit en niet zoet",
            language="nl",
            expect=Expect(types=("white",), not_sweet=True),
        ),
        Say("Heb je ook iets goedkopers?", language="nl", expect=Expect(cheaper=True)),
    ),
    (
        Say(
            "Ik wil een Franse rosé voor op het terras, max 20 euro",
            language="nl",
            expect=Expect(types=("rosé",), countries=("france",), max_price=20),
        ),
    ),
    (
        Say(
            "Een stevige rode wijn bij biefstuk graag",
            language="nl",
            expect=Expect(types=("red",)),
        ),
    ),
    (Say("Wie heeft de Nachtwacht geschilderd?", wine_request=False, language="nl", expect=OFF),),
    (
        Say(
            "Iets met bubbels voor een verjaardag, onder de 15 euro",
            language="nl",
            expect=Expect(types=("sparkling",), max_price=15),
        ),
    ),
)

ENGLISH: tuple[Dialog, ...] = (
    (
        Say(
            "need a bottle under a tenner for spag bol",
            language="en",
            expect=Expect(max_price=11.6),
        ),
    ),
    (
        Say(
            "whats a good vino for thanksgiving turkey, no more than $40",
            language="en",
            expect=Expect(max_price=34.8),
        ),
    ),
    (
        Say(
            "I can't stand oaky wines. Recommend a white for halibut?",
            language="en",
            expect=Expect(types=("white",)),
        ),
    ),
    (
        Say(
            "any dessert wines from france?",
            language="en",
            expect=Expect(countries=("france",), sweet=True),
        ),
        Say("hmm too pricey, something cheaper", language="en", expect=Expect(cheaper=True)),
    ),
    (
        Say(
            "How many calories are in a glass of wine?",
            wine_request=False,
            language="en",
            expect=OFF,
        ),
    ),
)

HELD_OUT: tuple[Dialog, ...] = (
    *GERMAN,
    *SPANISH,
    *FRENCH,
    *ITALIAN,
    *PORTUGUESE,
    *RUSSIAN,
    *DUTCH,
    *ENGLISH,
)
