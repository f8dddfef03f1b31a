"""Tests of the engine's privacy room."""
