"""Tests of ``trio_mcp._group``."""
