"""`swedeck run --acp` (SPEC §19): swedeck as a client of an Agent Client Protocol agent.

- `presets.py`: the named agents (`claude-code`, `codex`: the npm adapters) and how a command is found;
- `run.py`: one ACP session over the agent's stdio (protocol version 1, the `agent-client-protocol`
  package's types), its model traffic through `swedeck record`'s endpoint, so the session's
  record is exact (SPEC §18); permissions answered by swedeck's mode, the person's words and the
  permissions written to the record.
"""
