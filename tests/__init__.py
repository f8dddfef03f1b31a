"""Tests for the Assist Memory integration."""
