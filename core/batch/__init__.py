"""`swedeck batch` (SPEC §15): one headless session per instance of a dataset, on this
machine (`local`) or on a Ray cluster (`ray`), with SWE-bench's predictions file."""
