"""The live UI's screens, each with its .tcss beside it."""
