"""Tests of the engine's embedding room."""
