"""What a command does between its start and the app's first frame, in one room (bench B2,
B3; docs/performance.md):

- `read_ahead.py`: the file a replay opens, read in a thread while the UI imports; the
  command hands the `ReadAhead` to the app, and the loader takes its bytes from it;
- `holds.py`: what the command line holds off until the first frame (collections, pydantic's
  plugin scan), and releases there;
- `gc_tuning.py`: the collector's settings those holds use, and the freeze after litellm's import.

Kept to the standard library, so that it runs before the heavy imports.
"""
