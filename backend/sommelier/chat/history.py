"""History for the model, and the cut a long reply gets before it is stored."""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from sommelier.agent.messages import Message, assistant, user
from sommelier.agent.protocols import OutputProtocol
from sommelier.cellar.adding import ADDING
from sommelier.chat.answer import Guard
from sommelier.db.repositories import Said

_SENTENCE_END = re.compile(r"[.!?…](?:[\"')\]]*)(?=\s)")


def cut_for_storage(text: str, limit: int) -> str:
    """Cut at the last paragraph break within `limit`, else the last sentence end, else hard."""
    if len(text) <= limit:
        return text
    window = text[:limit]
    paragraph = window.rfind("\n\n")
    if paragraph > 0:
        return window[:paragraph].rstrip()
    ends = [m.end() for m in _SENTENCE_END.finditer(window + " ")]
    if ends:
        return window[: ends[-1]].rstrip()
    return window


# An exchange whose reply refused an attempt on the rules is left out of what later turns see:
# shown to the model, the refused request was taken up two turns on ("Ik kan je
# belastingaangifte doen", guard5), and its words are no wish to keep.
_REFUSED = frozenset({Guard.prompt_injection.value, Guard.social_engineering.value})


def _refused(said: Said | None) -> bool:
    return said is not None and said.reply is not None and said.reply.get("guard") in _REFUSED


def without_refused(history: Sequence[Said]) -> list[Said]:
    """The history without the exchanges that were attempts on the rules (the person's message
    and its refusal)."""
    return [
        said
        for said, next_said in pairwise([*history, None])
        if said is not None
        and not _refused(said)
        and not (said.role == "user" and _refused(next_said))
    ]


def earlier_requests(history: Sequence[Said]) -> list[str]:
    """The person's earlier messages whose wishes a follow-up may keep: not those answered by
    a proposal to add bottles ("Just bought 3 bottles of Penfolds Bin 28 Kalimna Shiraz" is no
    wish for Shiraz: "What else from my cellar goes with a steak?" was read as one, unseen38)."""
    kept = []
    for stored, after in pairwise([*without_refused(history), None]):
        proposed = after is not None and after.reply is not None and ADDING in after.reply
        if stored is not None and stored.role == "user" and not proposed:
            kept.append(stored.text)
    return kept


def to_model_messages(history: Sequence[Said], protocol: OutputProtocol) -> list[Message]:
    """Stored turns as model messages; assistant turns as their structured reply written in the
    protocol's own format, so the model sees its format and the wine ids it showed."""
    messages: list[Message] = []
    for stored in without_refused(history):
        if stored.role == "user":
            messages.append(user(stored.text))
        elif stored.reply:
            messages.append(assistant(protocol.replay(stored.reply)))
        else:
            messages.append(assistant(stored.text))
    return messages
