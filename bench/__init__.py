"""swedeck's benchmarks (SPEC §12): `python -m bench [--only B4,B5] [--quick]`.

Benchmarks measure; they never fail because something is slow. Each prints one JSON line.
"""
