"""Tests of the engine's languages room."""
