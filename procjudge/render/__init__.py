"""Reporters: pure functions from verdicts to text.  The CLI alone writes what they return."""
