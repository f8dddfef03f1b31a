"""Tests of the engine's recall room."""
