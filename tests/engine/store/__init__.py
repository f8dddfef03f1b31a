"""Tests of the engine's store room."""
