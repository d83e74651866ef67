"""The sommelier's rules for a turn: a wine request must search the catalog before it is
answered, and a question about a wine just shown must look it up."""

from __future__ import annotations

import re

from sommelier.agent.turn import TurnInput
from sommelier.catalog.tool_arguments import names_a_wine
from sommelier.catalog.tools import PREVIOUS, CatalogTools
from sommelier.catalog.understanding import is_wine_request, read_words

COURTESY = re.compile(
    r"^\W*(thanks?|thank you|cheers|great|perfect|ok(ay)?|cool|nice|bye|goodbye|hi|hello)\b",
    re.IGNORECASE,
)
FOLLOW_UP_WORDS = 8


class SommelierPolicy:
    def __init__(self, catalog: CatalogTools) -> None:
        self.catalog = catalog  # for the names the catalog knows (grapes, regions)

    async def required_tool(self, turn: TurnInput) -> str | None:
        wanted = read_words(turn.request, await self.catalog.names())
        shown = bool(turn.context.get(PREVIOUS))
        if wanted.reference and (shown or names_a_wine(turn.request)):
            return "get_wine"
        if is_wine_request(wanted):
            return "search_wines"
        # Right after a recommendation, a short message ("Something from Oregon?") refines it.
        short = len(turn.request.split()) <= FOLLOW_UP_WORDS
        if shown and short and not COURTESY.match(turn.request):
            return "search_wines"
        return None

    async def may_clarify(self, turn: TurnInput) -> bool:
        """Only when the words give nothing to search by: a question beats a wild guess, but
        never replaces an answer the words already allow."""
        wanted = read_words(turn.request, await self.catalog.names())
        return not wanted.filters and not wanted.reference
