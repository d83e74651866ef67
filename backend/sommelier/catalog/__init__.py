"""The wine catalog: import, search and the tools the sommelier uses."""
