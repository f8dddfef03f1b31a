"""Tests for the Assist Memory integration.

A clean test run prints nothing but pytest's own report. This package is
imported before any conftest or test module, so two sources of stray output
are dealt with here:

- pytest-homeassistant-custom-component calls `logging.basicConfig()`, which
  puts a handler on the root logger writing every record to stderr (as
  `DEBUG:aiosqlite:...`). pytest captures records itself (shown with a
  failing test), so that handler only duplicated them; worse, a record
  written while no test was capturing (aiosqlite's worker thread logs each
  query at DEBUG while a test has set the root logger to DEBUG) landed among
  the progress dots. It is removed; pytest's own capture is untouched.
- `homeassistant.components.camera.img_util` tries to load libturbojpeg when
  it is imported (the AI Task fixtures import ai_task, which imports camera)
  and logs an ERROR with a traceback when the system has none, as here. Home
  Assistant then uses Pillow, and no test decodes a JPEG; under pytest-xdist
  that traceback reached the terminal after "passed". Its logger is quiet.
"""

import logging

for _handler in logging.getLogger().handlers[:]:
    if type(_handler) is logging.StreamHandler:  # basicConfig's; not pytest's
        logging.getLogger().removeHandler(_handler)
logging.getLogger("homeassistant.components.camera.img_util").setLevel(logging.CRITICAL)
