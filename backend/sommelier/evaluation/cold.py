"""A sixth set of dialogs, 30 turns in the eight languages and English slang, written at the
start of stop 34 after every fix of issue 22 and run once, cold: so its figures say how the
reading and the prose checks carry over to sentences nobody tuned them on (slang for money,
diminutives, "not pricier than", a budget given as a gift, a style refused by name, general
questions about serving, keeping and health).

Same rules as `world.py`: each turn states what a reply must respect, judged on the catalog
rows of its cards, in euros.
"""

from __future__ import annotations

from sommelier.evaluation.dialogs import Dialog, Expect, Say, off

COLD: tuple[Dialog, ...] = (
    # German
    (
        Say(
            "Was Leichtes, Rotes für nen Grillabend mit Freunden, nicht teurer als 20 Euro",
            language="de",
            expect=Expect(types=("red",), max_price=20),
        ),
        Say("Geht's noch günstiger?", language="de", expect=Expect(cheaper=True)),
    ),
    off("Welche Temperatur sollte ein Weißwein beim Servieren haben?", "de"),
    (
        Say(
            "Einen kräftigen Roten aus Portugal, bitte",
            language="de",
            expect=Expect(types=("red",), countries=("portugal",)),
        ),
    ),
    # Spanish
    (
        Say(
            "Quiero un blanco fresquito para el verano, que no pase de 15 €",
            language="es",
            expect=Expect(types=("white",), max_price=15),
        ),
        Say(
            "¿Tienes alguno de Nueva Zelanda?",
            language="es",
            expect=Expect(countries=("new zealand",)),
        ),
    ),
    off("¿Cuántas copas salen de una botella de vino?", "es"),
    (Say("Un vinito dulce pa'l postre, porfa", language="es", expect=Expect(sweet=True)),),
    # French
    (
        Say(
            "Un rosé pas trop cher pour l'apéro, moins de 20 balles",
            language="fr",
            expect=Expect(types=("rosé",), max_price=20),
        ),
    ),
    off("Combien de temps peut-on garder une bouteille de Bordeaux ?", "fr"),
    (
        Say(
            "Tu aurais un vin rouge d'Espagne à moins de 20 euros ?",
            language="fr",
            expect=Expect(types=("red",), countries=("spain",), max_price=20),
        ),
    ),
    # Italian
    (
        Say(
            "Cerco un rosso toscano, massimo 30 euro",
            language="it",
            expect=Expect(types=("red",), countries=("italy",), max_price=30),
        ),
    ),
    off("Perché alcuni vini sanno di tappo?", "it"),
    (
        Say(
            "Qualcosa di frizzante ma non dolce per un aperitivo",
            language="it",
            expect=Expect(types=("sparkling",), not_sweet=True),
        ),
        Say("Ce n'è uno più a buon mercato?", language="it", expect=Expect(cheaper=True)),
    ),
    # Portuguese
    (
        Say(
            "Quero um tinto encorpado pro churrasco, até 25 euros",
            language="pt",
            expect=Expect(types=("red",), max_price=25),
        ),
        Say(
            "Tem algum da Argentina?",
            language="pt",
            expect=Expect(countries=("argentina",)),
        ),
    ),
    off("Vinho tinto faz bem ou mal pra saúde?", "pt"),
    (
        Say(
            "Um espumante para o réveillon, sem passar de 40 euros",
            language="pt",
            expect=Expect(types=("sparkling",), max_price=40),
        ),
    ),
    # Russian
    (
        Say(
            "Посоветуй белое сухое к рыбе, до 20 евро",
            language="ru",
            expect=Expect(types=("white",), max_price=20, not_sweet=True),
        ),
        Say(
            "А есть что-нибудь из Германии?",
            language="ru",
            expect=Expect(countries=("germany",)),
        ),
    ),
    off("Сколько калорий в бокале вина?", "ru"),
    (
        Say(
            "Нужно красное вино в подарок, бюджет 100 евро",
            language="ru",
            expect=Expect(types=("red",), max_price=100),
        ),
    ),
    # Dutch
    (
        Say(
            "Ik zoek een lekkere rode wijn bij stoofvlees, niet duurder dan 20 euro",
            language="nl",
            expect=Expect(types=("red",), max_price=20),
        ),
        Say(
            "Heb je er ook een uit Italië?",
            language="nl",
            expect=Expect(types=("red",), countries=("italy",)),
        ),
    ),
    off("Hoe lang moet een rode wijn ademen?", "nl"),
    (
        Say(
            "Een mousserende wijn voor een verjaardag, geen champagne",
            language="nl",
            expect=Expect(types=("sparkling",)),
        ),
    ),
    # English slang
    (
        Say(
            "any decent kiwi sauv blanc?",
            expect=Expect(countries=("new zealand",), grapes=("sauvignon blanc",)),
        ),
    ),
    (
        Say(
            "no reds pls, something for a picnic, nothing pricey",
            expect=Expect(not_types=("red",), max_price=30),
        ),
    ),
    off("how long does an open bottle of bubbly stay fizzy?", "en"),
)
