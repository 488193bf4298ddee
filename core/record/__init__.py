"""`swedeck record` (SPEC §18): a recording endpoint between any agent and its model provider.

- `wire.py`: the three wire formats (Anthropic Messages, OpenAI Chat Completions, OpenAI
  Responses): which one a request is, its messages as swedeck's, and the answer assembled
  from a streamed or whole response;
- `endpoint.py`: the HTTP endpoint on 127.0.0.1, behind a per-run token, that forwards each
  request unchanged and streams the answer back byte for byte as it arrives;
- `recorder.py`: each exchange written as it happens to a swedeck `.traj.jsonl`: the main
  conversation as steps, every request whole as the step's recorded prompt, side calls apart.
"""
