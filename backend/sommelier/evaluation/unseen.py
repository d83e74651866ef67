"""A fourth set of dialogs, 25 turns in the eight languages, written after the third set's
first run had led to more changes (general questions in every language, two styles at once,
"something similar", a recipe, a restated wish), and before any of it was run: so it says
whether those changes carry over to sentences nobody looked at.

Same rules as `world.py`: each turn states what a reply must respect, judged on the catalog
rows of its cards, in euros.
"""

from __future__ import annotations

from sommelier.evaluation.dialogs import Dialog, Expect, Say, off

UNSEEN: tuple[Dialog, ...] = (
    # German
    off("Was kostet normalerweise eine gute Flasche Champagner?", "de"),
    (
        Say(
            "Ein trockener Weißer für Spargel, höchstens 25 Euro",
            language="de",
            expect=Expect(types=("white",), max_price=25),
        ),
        Say(
            "Hast du noch was Vergleichbares, aber aus Frankreich?",
            language="de",
            expect=Expect(types=("white",), countries=("france",)),
        ),
    ),
    # Spanish
    off("¿Qué diferencia hay entre un crianza y un reserva?", "es"),
    (
        Say(
            "Quiero un blanco o un rosado para una paella de marisco, máximo 20 euros",
            language="es",
            expect=Expect(types=("white", "rosé"), max_price=20),
        ),
    ),
    off("¿Me das una receta de tortilla de patatas?", "es"),
    # French
    off("Combien de temps peut-on garder un Bordeaux ?", "fr"),
    (
        Say(
            "Un rouge léger pour un plateau de fromages, pas plus de 30 €",
            language="fr",
            expect=Expect(types=("red",), max_price=30),
        ),
        Say(
            "Et quelque chose de semblable mais moins cher ?",
            language="fr",
            expect=Expect(types=("red",), cheaper=True),
        ),
    ),
    # Italian
    off("Perché alcuni vini rossi fanno venire mal di testa?", "it"),
    (Say("Cerco un vino greco per la moussaka", language="it", expect=Expect(relaxed=True)),),
    (
        Say(
            "Uno spumante o un bianco fermo per l'aperitivo, sotto i 15 euro",
            language="it",
            expect=Expect(types=("sparkling", "white"), max_price=15),
        ),
    ),
    # Portuguese
    off("Qual é a diferença entre vinho verde e vinho branco?", "pt"),
    (
        Say(
            "Um tinto encorpado para picanha, nada da Argentina",
            language="pt",
            expect=Expect(types=("red",), not_countries=("argentina",)),
        ),
        Say(
            "E algo parecido mas mais barato?",
            language="pt",
            expect=Expect(types=("red",), cheaper=True),
        ),
    ),
    # Russian
    off("Почему от шампанского быстрее пьянеешь?", "ru"),
    (
        Say(
            "Нужно сладкое вино к десерту, до 60 евро",
            language="ru",
            expect=Expect(sweet=True, max_price=60),
        ),
    ),
    (Say("Есть что-нибудь из Грузии?", language="ru", expect=Expect(relaxed=True)),),
    (
        Say(
            "Красное или розовое к шашлыку, не дороже 1500 рублей",
            language="ru",
            expect=Expect(types=("red", "rosé"), max_price=17),
        ),
    ),
    # Dutch
    off("Waarom zit er sulfiet in wijn?", "nl"),
    (
        Say(
            "Een droge witte of een rosé bij de vis, niet boven de 15 euro",
            language="nl",
            expect=Expect(types=("white", "rosé"), max_price=15),
        ),
    ),
    # English
    off("Is it true that screw caps are worse than corks?", "en"),
    (
        Say(
            "Fancy something bubbly that isn't Champagne, under 25 quid",
            language="en",
            expect=Expect(types=("sparkling",), max_price=29.5),
        ),
    ),
    (Say("Any Greek wines?", language="en", expect=Expect(relaxed=True)),),
    off("Got a good recipe for lamb shanks?", "en"),
)
