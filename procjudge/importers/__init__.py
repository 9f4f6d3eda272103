"""Importers that turn other tools' logs into run files."""
