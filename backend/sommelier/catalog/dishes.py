"""What a dish is, as the model reads it: the food a search pairs wines with, picked from the
catalog's own food words in a short call of its own (agent/turn.Choice), for a message whose
words no list reads ("Vilket vin passar till inlagd sill?", "Rượu vang nào hợp với phở bò?").

Asked inside the plan, among a dozen other fields, the 1.5B model left the food to chance (it
chose "cheese" or "dessert" for hutspot and bún chả: unseen25) and wrote "sparkling" as the
style of most dishes it could not place (unseen7: two Champagnes for chicken satay, with their
ratings as the only reasons). Asked alone, it only has to say what the dish is made of; the
catalog's pairings then choose the wines, and their style with them."""

from __future__ import annotations

from sommelier.agent.turn import Choice, Screen

DISH = "dish"  # the argument the model's pick fills (catalog/tool_arguments.merged reads it)
NONE = "none"
# The catalog's food words (lexicon `[food]` keys), less those no dish is "mostly" (codfish is a
# kind of fish, a snack no dish).
KINDS = (
    "beef",
    "lamb",
    "pork",
    "poultry",
    "game",
    "fish",
    "rich fish",
    "shellfish",
    "cheese",
    "pasta",
    "pizza",
    "mushrooms",
    "vegetarian",
    "spicy",
    "barbecue",
    "appetizer",
    "dessert",
    NONE,
)

INSTRUCTION = """You read messages people send to a wine shop's assistant, in any language. \
When the message names a dish or a food the wine is for, answer with what that dish mostly is: \
its main meat, fish or other ingredient; "spicy" when it is hot with chili or curry; \
"barbecue" for grilled or smoked meat of several kinds; "dessert" only for a sweet dish. \
Answer "none" when the message names no food."""

# Dishes unlike those of the evaluation's sets, in many languages and scripts, and messages
# that name no food: the model copies an example's answer to a message that resembles it.
EXAMPLES = (
    ("Grilled lamb chops tonight, which red?", "lamb"),
    ("Was passt zu Forelle Müllerin?", "fish"),
    ("A red under 20 euros, please", NONE),
    ("¿Qué vino para unas gambas al ajillo?", "shellfish"),
    ("Un vin pour une raclette entre amis ?", "cheese"),
    ("麻婆豆腐に合うワインは？", "spicy"),
    ("Hirschragout mit Preiselbeeren, welcher Wein?", "game"),
    ("Есть что-нибудь подешевле?", NONE),
    ("Tiramisù come dolce, che vino?", "dessert"),
    ("Risotto ai funghi porcini: bianco o rosso?", "mushrooms"),
    ("Jaki wino do kotleta schabowego?", "pork"),
    ("Something for a birthday party", NONE),
    ("ไวน์อะไรเข้ากับไก่ย่าง", "poultry"),
)

QUESTION = Choice(DISH, Screen(INSTRUCTION, EXAMPLES, kinds=KINDS))
