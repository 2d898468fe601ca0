"""Tests of ``trio_mcp.cli``."""
