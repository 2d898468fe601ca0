"""Tests of ``trio_mcp._telemetry``."""
