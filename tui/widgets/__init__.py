"""The live UI's widgets, one per file."""
