"""`swedeck diff A B`: two runs side by side (SPEC §16)."""
