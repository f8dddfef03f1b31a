"""Tests of the engine's search room."""
