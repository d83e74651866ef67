"""The agent runtime: model client, tools, tool loop, answer parsing and recovery.

It knows nothing about wine or Telegram; the chat package supplies tools and the answer spec.
"""
