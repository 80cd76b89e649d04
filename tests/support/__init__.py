"""Helpers shared by the test modules (importable: `tests` is on pytest's pythonpath)."""
