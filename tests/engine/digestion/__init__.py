"""Tests of the engine's digestion room."""
