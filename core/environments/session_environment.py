"""What local and Docker environments share: hooks, `communicate`, start-up commands,
environment variables and template variables around one `ShellSession`.

Subclasses say how the shell is reached (`_open_channel`), how files are read and written,
and what to set up before and tear down after the session."""

from __future__ import annotations

import logging
from typing import Any, Literal

from ..config import EnvironmentConfig
from ..errors import SwedeckError
from ..redact import Redactor
from .base import CommandFailed, EnvironmentHook, ExecutionResult, OutputCallback
from .channel import Channel
from .shell import QUIET_ENV, ShellSession, bash_quote

log = logging.getLogger(__name__)

HOOK_NAMES = ("on_init", "on_start", "on_environment_startup", "on_command_start", "on_command_done", "on_close")


class SessionEnvironment:
    description = "environment"

    def __init__(self, config: EnvironmentConfig, session_id: str, redactor: Redactor | None = None):
        self.config = config
        self.session_id = session_id
        self.redactor = redactor or Redactor()
        self._hooks: list[EnvironmentHook] = []
        self._session = ShellSession(self._open_channel, config.output_limit, self.redactor)
        self._started = False
        self._closed = False

    # -- for subclasses --
    def _open_channel(self) -> Channel:
        raise NotImplementedError

    def _boot(self) -> None:
        """Make the place the shell runs in (a container); nothing for local."""

    def _teardown(self) -> None:
        """Undo `_boot`."""

    def read_file(self, path: str) -> str:
        raise NotImplementedError

    def write_file(self, path: str, text: str) -> None:
        raise NotImplementedError

    def session_env(self) -> dict[str, str]:
        """Variables the shell starts with: quiet defaults, forwarded host values, then `env`."""
        import os

        forwarded = {name: os.environ[name] for name in self.config.forward_env if name in os.environ}
        return {**QUIET_ENV, **forwarded, **self.config.env}

    # -- the contract --
    def add_hook(self, hook: EnvironmentHook) -> None:
        self._hooks.append(hook)
        self._call_hook(hook, "on_init", self)

    def start(self) -> None:
        self._fire("on_start", self)
        self._boot()
        cwd = self._initial_cwd()
        if cwd:
            self._session.setup.append(f"cd {bash_quote(cwd)}")
        try:
            self._session.start()
        except Exception as error:
            self._teardown()
            raise SwedeckError(f"{self.description}: could not start a shell: {error}") from error
        self._started = True
        try:
            self._run_post_startup_commands()
        except BaseException:
            self.close()  # a half-started environment would leak its shell or container
            raise
        self._fire("on_environment_startup", self)

    def _run_post_startup_commands(self) -> None:
        for command in self.config.post_startup_commands:
            self.communicate(command, timeout=self.config.post_startup_command_timeout, check="raise",
                             error_msg=f"post-startup command {command!r} failed")

    def _initial_cwd(self) -> str | None:
        return self.config.cwd

    def execute(self, command: str, timeout: float | None = None, on_output: OutputCallback | None = None) -> ExecutionResult:
        self._fire("on_command_start", self, command)
        result = self._session.run(command, timeout if timeout is not None else self.config.timeout, on_output)
        self._fire("on_command_done", self, command, result)
        return result

    def communicate(self, input: str, timeout: float | None = None,
                    check: Literal["ignore", "warn", "raise"] = "ignore", error_msg: str = "Command failed") -> str:
        result = self.execute(input, timeout=timeout)
        if check != "ignore" and result.returncode != 0:
            status = "timed out" if result.timed_out else f"exit status {result.returncode}"
            message = f"{error_msg} ({status}): {result.output.strip()[-2000:]}"
            if check == "raise":
                raise CommandFailed(message)
            log.warning(message)
        return result.output

    def interrupt_session(self) -> None:
        self._session.interrupt()

    def reset(self) -> None:
        """A fresh shell (state cleared, variables from `set_env_variables` kept) plus the start-up commands."""
        self._session.restart()
        self._run_post_startup_commands()

    def set_env_variables(self, variables: dict[str, str]) -> None:
        if not variables:
            return
        command = "export " + " ".join(f"{name}={bash_quote(value)}" for name, value in variables.items())
        self._session.setup.append(command)
        self.communicate(command, timeout=30, check="raise", error_msg="setting environment variables failed")

    def get_template_vars(self) -> dict[str, Any]:
        return {
            "cwd": self._current_cwd(),
            "timeout": self.config.timeout,
            "output_limit": self.config.output_limit,
            "environment": self.config.environment_class,
            "environment_description": self.description,
        }

    def _current_cwd(self) -> str:
        if not self._started:
            return self.config.cwd or ""
        result = self._session.run("pwd", timeout=10)
        return result.output.strip() if result.returncode == 0 else (self.config.cwd or "")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._fire("on_close", self)
        self._session.close()
        self._teardown()

    # -- hooks --
    def _fire(self, name: str, *args: object) -> None:
        for hook in self._hooks:
            self._call_hook(hook, name, *args)

    @staticmethod
    def _call_hook(hook: EnvironmentHook, name: str, *args: object) -> None:
        method = getattr(hook, name, None)  # hooks implement any subset
        if method is not None:
            method(*args)
