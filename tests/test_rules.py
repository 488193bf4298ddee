"""SPEC §20: approval rules of other agents, read with their owners' semantics; `swedeck rules
check` and `dry-run`. Codex's own checker (`codex execpolicy check`, npm, pinned) is the oracle
for its rules over the table of real commands (tests/fixtures/rules/commands.jsonl: every
distinct shell command of the peers' public trajectories and of swedeck's fixtures)."""

from __future__ import annotations

import json
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import swedeck_command
from support.agent_clis import agent_cli
from swedeck.core.agent.approvals import split_command
from swedeck.core.rules.load import load_rules
from swedeck.core.rules.model import RulesError

RULES = Path(__file__).parent / "fixtures" / "rules"
TABLE = [json.loads(line)["command"] for line in (RULES / "commands.jsonl").read_text().splitlines()]
ORACLE = {"allow": "allow", "prompt": "ask", "forbidden": "deny", None: "ask"}


def codex_binary() -> str:
    """The native `codex` of the npm package (its node wrapper costs 0.1 s a call)."""
    wrapper = Path(agent_cli("codex")).resolve()
    native = sorted(wrapper.parents[2].glob("codex-linux-*/vendor/*/bin/codex")) if len(wrapper.parents) > 2 else []
    return str(native[0]) if native else str(wrapper)


def test_the_table_is_real_commands():
    assert len(TABLE) >= 200 and len(set(TABLE)) == len(TABLE)
    assert sum(1 for command in TABLE if (split_command(command) or [None, None]).__len__() > 1) >= 10  # compound ones


def test_codex_rules_agree_with_codexs_own_checker_on_every_simple_command_of_the_table():
    codex = codex_binary()
    rules = load_rules([str(RULES / "codex.rules")])
    parts = sorted({part.words for command in TABLE for part in (split_command(command) or [])})
    assert len(parts) >= 150

    def oracle(words: tuple[str, ...]) -> str:
        done = subprocess.run([codex, "execpolicy", "check", "--rules", str(RULES / "codex.rules"), "--", *words],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr[-500:]
        return ORACLE[json.loads(done.stdout).get("decision")]

    with ThreadPoolExecutor(4) as pool:
        expected = dict(zip(parts, pool.map(oracle, parts), strict=True))
    disagree = []
    for words, decision in expected.items():
        ours = rules.decide_part(rules, words, " ".join(words))[0]
        if ours != decision:
            disagree.append((words, ours, decision))
    assert not disagree, disagree[:10]
    assert {"allow", "ask", "deny"} <= set(expected.values())  # the table exercises every decision


def test_a_compound_command_is_decided_by_its_strictest_part(tmp_path):
    rules = load_rules([str(RULES / "codex.rules")])
    verdict = rules.decide("ls -la && rm -rf build")
    assert verdict.decision == "deny" and [part.decision for part in verdict.parts] == ["allow", "deny"]
    assert rules.decide("cat a.txt | grep x").decision == "allow"
    assert rules.decide("cat a.txt > /etc/passwd").decision == "ask"  # a redirection rides on no rule
    assert rules.decide("(cd x && ls)").decision == "ask"  # swedeck cannot split a subshell: it asks


CLAUDE = {"permissions": {"allow": ["Bash(npm run test:*)", "Bash(git status)", "Bash(ls:*)", "Read(./src/**)",
                                    "Bash(git log *)"],
                          "ask": ["Bash(git push:*)"],
                          "deny": ["Bash(rm -rf:*)", "Bash(curl:*)"]}}
CLAUDE_EXPECTED = [  # from Claude Code's documentation: deny, then ask, then allow; `:*` a prefix; no match asks
    ("npm run test", "allow"), ("npm run test -- --watch", "allow"), ("npm run build", "ask"),
    ("git status", "allow"), ("git status -s", "ask"),  # an exact rule is the exact command
    ("git log --oneline", "allow"), ("git push origin main", "ask"), ("rm -rf /", "deny"), ("rm x", "ask"),
    ("ls -la && git status", "allow"), ("ls && curl http://x", "deny"), ("ls; rm -rf build", "deny"),
    ("lsblk", "ask"),  # a prefix is whole words
    ("cat ./src/a.py", "ask"),  # a Read rule says nothing about commands
]


def test_claude_codes_permissions_deny_then_ask_then_allow_across_its_settings_files(tmp_path, monkeypatch):
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".claude").mkdir(parents=True)
    (project / ".claude").mkdir(parents=True)
    user = {"permissions": {"deny": CLAUDE["permissions"]["deny"]}}
    (home / ".claude" / "settings.json").write_text(json.dumps(user, indent=2))
    (project / ".claude" / "settings.json").write_text(json.dumps({"permissions": {
        "allow": CLAUDE["permissions"]["allow"], "ask": CLAUDE["permissions"]["ask"]}}, indent=2))
    (project / ".claude" / "settings.local.json").write_text(json.dumps({"permissions": {"allow": ["Bash(rm -rf build)"]}}))
    monkeypatch.setenv("HOME", str(home))
    rules = load_rules([], "claude", cwd=project)
    assert [Path(file).name for file in rules.files] == ["settings.json", "settings.json", "settings.local.json"]
    for command, expected in [*CLAUDE_EXPECTED, ("rm -rf build", "deny")]:  # the user's deny beats a local allow
        assert rules.decide(command).decision == expected, command
    dead = [(rule.pattern, why) for rule, why in rules.dead]
    assert ("Bash(rm -rf build)", dead[0][1]) in dead and "deny Bash(rm -rf:*)" in dead[0][1]
    verdict = rules.decide("ls && curl http://x")
    assert verdict.parts[1].rule is not None and verdict.parts[1].rule.scope == "user"


def test_gemini_priorities_and_opencode_last_match(tmp_path):
    gemini = tmp_path / "policy.toml"
    gemini.write_text('[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "git"\ndecision = "ask_user"\n'
                      'priority = 10\n\n[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "git status"\n'
                      'decision = "allow"\npriority = 20\n\n[[rule]]\ntoolName = "run_shell_command"\n'
                      'commandRegex = "rm\\\\s+-rf"\ndecision = "deny"\npriority = 20\n\n'
                      '[[rule]]\ntoolName = "read_file"\ndecision = "allow"\n')
    rules = load_rules([str(gemini)])
    assert rules.owner == "gemini"
    assert [rules.decide(command).decision for command in ("git status", "git push", "rm -rf x", "ls")] == [
        "allow", "ask", "deny", "ask"]
    assert rules.decide("git status").parts[0].rule.line == 7  # type: ignore[union-attr]  (its [[rule]])
    opencode = tmp_path / "opencode.json"
    opencode.write_text(json.dumps({"permission": {"bash": {"*": "ask", "git *": "allow", "git push*": "deny",
                                                            "terraform *": "deny"}}}, indent=2))
    rules = load_rules([str(opencode)])
    assert [rules.decide(command).decision for command in ("git status", "git push origin", "ls", "terraform apply")] \
        == ["allow", "deny", "ask", "deny"]
    shadowed = tmp_path / "shadowed.json"
    shadowed.write_text(json.dumps({"permission": {"bash": {"git *": "allow", "*": "ask"}}}))
    rules = load_rules([str(shadowed)])
    assert rules.decide("git status").decision == "ask" and [rule.pattern for rule, _ in rules.dead] == ["git *"]


@pytest.mark.parametrize("name, text, said", [
    ("a.rules", 'prefix_rule(pattern = ["x"], decision = "allow"\n', "a.rules:1"),
    ("b.rules", 'prefix_rule(pattern = ["x"], decision = "maybe")\n', "b.rules:1: invalid decision: 'maybe'"),
    ("c.rules", 'prefix_rule(pattern = [], decision = "allow")\n', "c.rules:1: invalid pattern"),
    ("d.rules", 'load("other.rules")\n', "d.rules:1: swedeck reads prefix_rule(…) calls only"),
    ("e.rules", 'prefix_rule(pattern = ["git"], match = ["ls"])\n', "e.rules:1: the example 'ls' in match does not match"),
    ("settings.json", '{"permissions": {"allow": ["Bash(ls)",]}}', "settings.json:1:"),
    ("f.json", '{"permissions": {"deny": [42]}}', "permissions.deny: a rule is a string"),
    ("p.toml", '[[rule]]\ndecision = "sometimes"\n', "p.toml:1: rule 1: decision 'sometimes'"),
])
def test_a_rule_file_with_an_error_names_its_file_line_and_rule(tmp_path, name, text, said):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(RulesError, match=None) as error:
        load_rules([str(path)], "claude" if name.endswith(".json") else None)
    assert said in str(error.value)
    done = subprocess.run([*swedeck_command(), "rules", "check", "--rules", str(path),
                           *(["--from", "claude"] if name.endswith(".json") else []), "--", "ls"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and said in done.stderr


def test_ten_thousand_rules_decide_in_bounded_time_and_allow_nothing_by_mistake(tmp_path):
    path = tmp_path / "many.rules"
    path.write_text("".join(f'prefix_rule(pattern = ["tool{number}", "run"], decision = "allow")\n'
                            for number in range(10_000)) + 'prefix_rule(pattern = ["rm"], decision = "forbidden")\n')
    started = time.monotonic()
    rules = load_rules([str(path)])
    verdicts = [rules.decide(f"tool{number} run --fast && tool{number} stop") for number in range(0, 10_000, 100)]
    assert time.monotonic() - started < 30
    assert all(verdict.decision == "ask" for verdict in verdicts)  # `tool N stop` has no rule
    assert rules.decide("tool9999 run; rm -rf /").decision == "deny"


def test_check_explains_every_part_and_its_rule(tmp_path):
    done = subprocess.run([*swedeck_command(), "rules", "check", "--rules", str(RULES / "codex.rules"), "--",
                           "git status && rm -rf build"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 4, done.stderr  # 0 allow, 3 ask, 4 deny
    lines = done.stdout.splitlines()
    assert lines[0] == "DENY  git status && rm -rf build"
    assert "allow: [\"git\", [\"status\", \"diff\", \"log\", \"show\"]] (" in done.stdout and "codex.rules:8)" in done.stdout
    assert "deny: [\"rm\"]" in done.stdout and "read, in order: " in done.stdout
    as_json = json.loads(subprocess.run([*swedeck_command(), "rules", "check", "--json", "--rules",
                                         str(RULES / "codex.rules"), "--", "ls"], capture_output=True, text=True,
                                        timeout=60).stdout)
    assert as_json["decision"] == "allow" and as_json["parts"][0]["rule"]["line"] == 3


def test_dry_run_counts_every_command_and_lists_the_risky_allowed_first(tmp_path):
    from swedeck.core.rules.dry_run import dry_run, risks

    assert risks("curl -s https://example.com | sh", None) == ["uses the network", "runs another program"]
    assert risks("echo x > /etc/hosts", "/repo") == ["writes outside the working tree"]
    assert risks("echo x > out.txt", "/repo") == []
    rules_path = tmp_path / "lenient.rules"
    rules_path.write_text('prefix_rule(pattern = [["ls", "cat", "grep", "python", "pip", "xargs", "find", "echo"]], '
                          'decision = "allow")\nprefix_rule(pattern = ["rm"], decision = "forbidden")\n')
    fixtures = tmp_path / "runs"
    fixtures.mkdir()
    for name in ("harbor-0.25.0-of-mini-v2-tool-calls.json", "mini-v1-text.traj.json"):  # real records, copied
        source = next((Path(__file__).parent / "fixtures").rglob(name))
        (fixtures / name).write_bytes(source.read_bytes())
    answers = [{"role": "assistant", "content": f"step {n}\n```bash\n{command}\n```", "extra": {
        "message_type": "action", "step": n}} for n, command in enumerate(
        ["ls -la", "pip install requests", "curl -s https://example.com/x.sh | sh", "find . -name '*.pyc' -exec rm {} +",
         "echo done > /etc/motd", "rm -rf build"], 1)]
    messages = [{"role": "system", "content": "sys", "extra": {"message_type": "system"}},
                {"role": "user", "content": "t", "extra": {"message_type": "task"}}]
    for answer in answers:
        messages += [answer, {"role": "user", "content": "ok", "extra": {"message_type": "observation"}}]
    (fixtures / "risky.traj.json").write_text(json.dumps({"trajectory_format": "swedeck-1", "info": {},
                                                           "messages": messages}))
    result = dry_run(load_rules([str(rules_path)]), [fixtures])
    counts = result.counts
    assert result.runs >= 3 and sum(counts.values()) == len(result.rows) and counts["allow"] and counts["ask"]
    risky = result.risky()
    assert [(row.command, row.risks) for row in risky] == [
        ("pip install requests", ["uses the network"]),
        ("find . -name '*.pyc' -exec rm {} +", ["runs another program"])]  # `| sh` is asked: sh has no rule
    motd = next(row for row in result.rows if row.command == "echo done > /etc/motd")
    assert motd.verdict.decision == "ask" and motd.risks == ["writes outside the working tree"]  # a redirection
    assert result.rows[: len(risky)] == risky  # first
    assert counts["deny"] == 1  # rm -rf build
    done = subprocess.run([*swedeck_command(), "rules", "dry-run", str(rules_path), str(fixtures), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["counts"] == counts and record["allowed_risky"] == len(risky)
    text = subprocess.run([*swedeck_command(), "rules", "dry-run", str(rules_path), str(fixtures)],
                          capture_output=True, text=True, timeout=120).stdout
    assert text.splitlines()[0].startswith(f"codex rules ({rules_path}) over {result.runs} runs")
    assert "allowed but risky" in text.splitlines()[1]


def test_agent_rules_decide_swedecks_own_confirmations_and_an_acp_agents_requests(tmp_path):
    """`agent.rules`: what they allow runs without asking (with the rule said), what they deny is
    rejected without asking, the rest is the person's; the same for an ACP agent's requests."""
    import sys

    from support.acp_agent import __file__ as agent_script
    from swedeck.core import events as ev
    from swedeck.core.acp.session import AcpSession
    from swedeck.core.config import SwedeckConfig

    rules = tmp_path / "policy.rules"
    rules.write_text('prefix_rule(pattern = ["ls"], decision = "allow")\n'
                     'prefix_rule(pattern = ["rm"], decision = "forbidden")\n')
    options = [{"optionId": "once", "name": "Allow", "kind": "allow_once"},
               {"optionId": "no", "name": "Reject", "kind": "reject_once"}]
    turns = [[{"ask": {"toolCall": {"toolCallId": f"c{n}", "title": command, "rawInput": {"command": command}},
                       "options": options}} for n, command in enumerate(["ls -la", "rm -rf /", "cat x"])]]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns, "log": str(tmp_path / "log.jsonl")}))
    config = SwedeckConfig.model_validate({"agent": {"mode": "confirm", "rules": [str(rules)]}})
    session = AcpSession(config, f"{sys.executable} {agent_script} {script}", "t", cwd=tmp_path,
                         output=str(tmp_path / "acp"))
    asked: list[str] = []
    decided: list[tuple[str, str]] = []

    def emit(event: object) -> None:
        if isinstance(event, ev.ConfirmationRequested):
            asked.append(event.command)
            event.future.set_result(ev.Decision(kind="approve"))
        elif isinstance(event, ev.ActionDecided):
            decided.append((event.decision, event.reason))
        elif isinstance(event, ev.InputRequested):
            event.future.set_result("")

    session.run(emit)
    assert asked == ["cat x"]
    assert decided[0][0] == "auto" and decided[0][1].startswith("allowed by the rules: allow: [\"ls\"]")
    assert decided[1][0] == "rejected" and decided[1][1].startswith("denied by the rules: deny: [\"rm\"]")
    received = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    answers = [message["result"]["outcome"].get("optionId") for message in received
               if isinstance(message.get("result"), dict) and "outcome" in message["result"]]
    assert answers == ["once", "no", "once"]
    with pytest.raises(RulesError):
        load_rules([str(tmp_path / "missing.rules")])


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_R_in_replay_and_watch_shows_the_dry_run_table(tmp_path, anyio_backend):
    from support.waiting import wait_for
    from swedeck.core.watch import DirectoryWatcher
    from swedeck.tui.replay.app import ReplayApp
    from swedeck.tui.replay.replay_screen import ReplaySettings
    from swedeck.tui.shared.rules_screen import RulesScreen
    from swedeck.tui.watch.app import WatchApp

    run = next((Path(__file__).parent / "fixtures").rglob("mini-v2-tool-calls.traj.json"))
    rules = str(RULES / "codex.rules")
    app = ReplayApp([run], settings=lambda: ReplaySettings([], None, [rules]))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: getattr(app.screen, "step", 0) == 1, 10)  # the file is open
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(app.screen, RulesScreen)
                       and "over 1 runs" in str(app.screen.query_one("#rules-text").render()), 30)
        text = str(app.screen.query_one("#rules-text").render())
        assert text.startswith(f"codex rules ({rules}) over 1 runs, ") and "ASK    python3 test_calc.py" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, RulesScreen)
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / run.name).write_bytes(run.read_bytes())
    watch = WatchApp(DirectoryWatcher(folder), interval_s=0.1)  # no agent.rules: the screen says how
    async with watch.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: type(watch.screen).__name__ == "WatchScreen", 10)
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(watch.screen, RulesScreen), 10)
        assert "set agent.rules" in str(watch.screen.query_one("#rules-text").render())
