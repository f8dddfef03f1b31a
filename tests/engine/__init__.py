"""Tests for the memory engine (no Home Assistant)."""
