"""Tests of ``trio_mcp.testing``."""
