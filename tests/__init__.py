"""The tests of trio_mcp: tests/<package>/test_<module>.py, beside what they test."""
