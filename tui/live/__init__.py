"""The live session view: its app, screen, state and modal screens."""
