"""Langfuse tracing and structured logs."""
