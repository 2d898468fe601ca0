"""Tests of ``trio_mcp.extensions``."""
