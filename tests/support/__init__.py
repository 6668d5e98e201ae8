"""Fixtures and helpers shared by the test suites (real servers started by the test tooling)."""
