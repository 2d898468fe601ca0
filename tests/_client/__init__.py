"""Tests of ``trio_mcp._client``."""
