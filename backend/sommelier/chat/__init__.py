"""The sommelier's turn: prompts, the reply schema, domain validation and ChatService."""
