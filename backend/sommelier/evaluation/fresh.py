"""A third set of dialogs, 32 turns in the eight languages, written after the first run of
`held_out.py` had shown what the word lists missed, and before anything was changed for it:
so it says whether those changes carry over to sentences nobody looked at. The kinds of
trouble are the same (a negation of two things at once, misspelt styles, general questions
about wine, ordinary words that look like English wine words), the sentences are new.

Same rules as `world.py`: each turn states what a reply must respect, judged on the catalog
rows of its cards, in euros.
"""

from __future__ import annotations

from sommelier.evaluation.dialogs import OFF, Dialog, Expect, Say

FRESH: tuple[Dialog, ...] = (
    # German
    (
        Say(
            "Für den Grillabend bitte weder Rosé noch Weißwein, sondern was Kräftiges",
            language="de",
            expect=Expect(not_types=("rosé", "white")),
        ),
    ),
    (
        Say(
            "Ein Rotwien zum Wildschwein, bis 40 Euro",
            language="de",
            expect=Expect(types=("red",), max_price=40),
        ),
    ),
    (Say("Wie viel Alkohol hat ein Glas Sekt?", wine_request=False, language="de", expect=OFF),),
    (
        Say(
            "Ist das Gift für meinen Magen, wenn ich jeden Abend Wein trinke?",
            wine_request=False,
            language="de",
            expect=OFF,
        ),
    ),
    # Spanish
    (
        Say(
            "Ni tinto ni rosado, busco algo fresco para el pescado",
            language="es",
            expect=Expect(not_types=("red", "rosé")),
        ),
    ),
    (
        Say(
            "Un espumozo para la boda de mi hermana",
            language="es",
            expect=Expect(types=("sparkling",)),
        ),
    ),
    (
        Say(
            "¿A qué temperatura se sirve el vino tinto?",
            wine_request=False,
            language="es",
            expect=OFF,
        ),
    ),
    (
        Say(
            "¿Qué me recomiendas para unas costillas a la barbacoa? Máximo 25 euros",
            language="es",
            expect=Expect(max_price=25),
        ),
    ),
    # French
    (
        Say(
            "Ni rouge ni rosé ce soir, plutôt quelque chose pour des huîtres",
            language="fr",
            expect=Expect(not_types=("red", "rosé")),
        ),
    ),
    (
        Say(
            "Un vin pour un pique-nique, pas plus de 15 euros",
            language="fr",
            expect=Expect(max_price=15),
        ),
    ),
    (
        Say(
            "Pourquoi le vin rouge donne mal à la tête ?",
            wine_request=False,
            language="fr",
            expect=OFF,
        ),
    ),
    (
        Say(
            "Un blanc sec d'Allemagne pour une choucroute",
            language="fr",
            expect=Expect(types=("white",), countries=("germany",)),
        ),
    ),
    # Italian
    (
        Say(
            "Un rosso corposo per la bistecca alla fiorentina, ma niente di californiano",
            language="it",
            expect=Expect(types=("red",), not_countries=("united states",)),
        ),
    ),
    (
        Say(
            "Quante calorie ha un bicchiere di prosecco?",
            wine_request=False,
            language="it",
            expect=OFF,
        ),
    ),
    (
        Say(
            "Vorrei un spumante secco sotto i 20 euro",
            language="it",
            expect=Expect(types=("sparkling",), max_price=20, not_sweet=True),
        ),
    ),
    (
        Say(
            "Un bianco portoghese per il baccalà",
            language="it",
            expect=Expect(types=("white",), countries=("portugal",)),
        ),
    ),
    # Portuguese
    (
        Say(
            "Nem tinto nem espumante, quero um vinho leve para salada",
            language="pt",
            expect=Expect(not_types=("red", "sparkling")),
        ),
    ),
    (
        Say(
            "Um vinho branco seco da Nova Zelândia",
            language="pt",
            expect=Expect(types=("white",), countries=("new zealand",)),
        ),
    ),
    (
        Say(
            "Quanto tempo dura um vinho depois de aberto?",
            wine_request=False,
            language="pt",
            expect=OFF,
        ),
    ),
    (
        Say(
            "Algum tinto chileno barato?",
            language="pt",
            expect=Expect(types=("red",), countries=("chile",), max_price=20),
        ),
    ),
    # Russian
    (
        Say(
            "Ни красного, ни розового не хочу. Что-нибудь к креветкам?",
            language="ru",
            expect=Expect(not_types=("red", "rosé")),
        ),
    ),
    (Say("Сколько калорий в бокале вина?", wine_request=False, language="ru", expect=OFF),),
    (
        Say(
            "Португальское красное до 25 евро",
            language="ru",
            expect=Expect(types=("red",), countries=("portugal",), max_price=25),
        ),
    ),
    (Say("Посоветуй шампанское на свадьбу", language="ru", expect=Expect(types=("sparkling",))),),
    # Dutch
    (
        Say(
            "Noch rood noch rosé, wel iets bij mosselen",
            language="nl",
            expect=Expect(not_types=("red", "rosé")),
        ),
    ),
    (
        Say(
            "Hoeveel alcohol zit er in een fles wijn?",
            wine_request=False,
            language="nl",
            expect=OFF,
        ),
    ),
    (
        Say(
            "Een Italiaanse rode wijn voor bij pasta, max 18 euro",
            language="nl",
            expect=Expect(types=("red",), countries=("italy",), max_price=18),
        ),
    ),
    (Say("Een zoete witte wijn als dessert", language="nl", expect=Expect(sweet=True)),),
    # English
    (
        Say(
            "neither red nor rosé tonight, something for grilled prawns",
            language="en",
            expect=Expect(not_types=("red", "rosé")),
        ),
    ),
    (
        Say(
            "a nice savignon blanc under 20 quid",
            language="en",
            expect=Expect(grapes=("sauvignon blanc",), max_price=23.2),
        ),
    ),
    (Say("Does red wine really need to breathe?", wine_request=False, language="en", expect=OFF),),
    (
        Say(
            "something sparkly and pink for a hen party",
            language="en",
            expect=Expect(types=("sparkling", "rosé")),
        ),
    ),
)
