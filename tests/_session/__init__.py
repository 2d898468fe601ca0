"""Tests of ``trio_mcp._session``."""
