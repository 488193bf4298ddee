"""Sharing a run (SPEC §16): any trajectory swedeck reads, written as ATIF or as one page."""
