"""Tests of the engine's postgres room."""
