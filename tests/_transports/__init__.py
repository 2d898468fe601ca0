"""Tests of ``trio_mcp._transports``."""
