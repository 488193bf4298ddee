"""Approval rules of other agents, read with their owners' semantics (SPEC §20): `swedeck rules`."""
