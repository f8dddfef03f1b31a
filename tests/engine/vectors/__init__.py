"""Tests of the engine's vectors room."""
