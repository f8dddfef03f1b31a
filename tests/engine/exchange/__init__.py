"""Tests of the engine's exchange room."""
