"""Tests of the engine's conversations room."""
