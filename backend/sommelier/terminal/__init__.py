"""`sommelier chat`: the terminal front end. Same ChatService, same database as Telegram."""

from sommelier.terminal.render import LiveAnswer, render
from sommelier.terminal.session import interactive, one_shot, person_for

__all__ = ["LiveAnswer", "interactive", "one_shot", "person_for", "render"]
