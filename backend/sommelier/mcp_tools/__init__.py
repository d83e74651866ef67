"""MCP on both sides: the catalog served to MCP clients, and MCP servers' tools for the agent."""
