"""Two runs compared (SPEC §16): aligned step by step, the first divergence found."""
