"""The transports: each provides a session with a message channel (`trio_mcp._channel`)."""
