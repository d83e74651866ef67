"""Languages: which one a person writes in, and the bot's own texts in it."""
