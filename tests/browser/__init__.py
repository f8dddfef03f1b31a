"""The Memory panel in a real browser (run by script/test-browser)."""
