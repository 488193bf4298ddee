"""A real headless Chromium for the exported page (SPEC §16), driven over the DevTools
protocol: open a file, press keys, type, read the DOM, and see every request the page made
and every error it threw. The network is cut three ways: no proxy that answers, no name
that resolves, and the page's own Content-Security-Policy; any request is still recorded.

`.ci/run` installs Debian's `chromium` and sets SWEDECK_REQUIRE_BROWSER, so there a missing
browser fails; elsewhere the browser tests skip.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from support.waiting import wait_until

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
START_TIMEOUT_S = 30.0


def browser_path() -> str:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("SWEDECK_REQUIRE_BROWSER"):
        pytest.fail("no chromium: .ci/run installs Debian's chromium for the exported page's tests")
    pytest.skip("no chromium here (apt-get install chromium)")


class Browser:
    def __init__(self) -> None:
        import websocket  # websocket-client, a test dependency

        self.profile = Path(tempfile.mkdtemp(prefix="swedeck-chromium-"))
        self.process = subprocess.Popen(
            [browser_path(), "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--metrics-recording-only",
             "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9", "--allow-file-access-from-files",
             "--remote-debugging-port=0", f"--user-data-dir={self.profile}", "--window-size=1280,900", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port = self._port()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as answer:
            targets = json.load(answer)
        page = next(target for target in targets if target.get("type") == "page")
        self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        self._id = 0
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.loaded = False
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.call(f"{domain}.enable")

    def _port(self) -> int:
        """The DevTools port, from the file the browser writes once it listens."""
        marker = self.profile / "DevToolsActivePort"

        def listening() -> int | None:
            if self.process.poll() is not None:
                raise RuntimeError(f"chromium exited {self.process.returncode} before it listened")
            lines = marker.read_text().splitlines() if marker.exists() else []
            return int(lines[0]) if lines and lines[0].isdigit() else None
        port = wait_until(listening, START_TIMEOUT_S, "chromium's DevTools port")
        assert port is not None
        return port

    def _event(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Runtime.exceptionThrown":
            self.errors.append(json.dumps(params.get("exceptionDetails", {}))[:500])
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.errors.append(params["entry"].get("text", ""))
        elif method == "Page.loadEventFired":
            self.loaded = True

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        self.socket.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self._id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self._event(message)

    def open(self, path: Path, timeout: float = 30.0) -> float:
        """Open the page; seconds until its script says it is ready (the first step shown)."""
        self.loaded = False
        started = time.monotonic()
        self.call("Page.navigate", url=path.resolve().as_uri())
        self.wait_for("document.body && document.body.dataset.ready === 'true'", timeout)
        return time.monotonic() - started

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def text(self, element_id: str) -> str:
        return str(self.evaluate(f"document.getElementById({json.dumps(element_id)}).textContent"))

    def wait_for(self, expression: str, timeout: float = 10.0) -> None:
        wait_until(lambda: self.evaluate(f"!!({expression})"), timeout, expression)

    def press(self, key: str, code: str | None = None, key_code: int = 0, text: str = "") -> None:
        base = {"key": key, "code": code or key, "windowsVirtualKeyCode": key_code, "nativeVirtualKeyCode": key_code}
        self.call("Input.dispatchKeyEvent", type="keyDown", text=text, **base)
        self.call("Input.dispatchKeyEvent", type="keyUp", **base)

    def type(self, text: str) -> None:
        self.call("Input.insertText", text=text)

    def close(self) -> None:
        try:
            self.socket.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            shutil.rmtree(self.profile, ignore_errors=True)


KEYS = {"ArrowRight": ("ArrowRight", 39, ""), "ArrowLeft": ("ArrowLeft", 37, ""), "End": ("End", 35, ""),
        "Home": ("Home", 36, ""), "/": ("Slash", 191, "/"), "Enter": ("Enter", 13, "\r"), "n": ("KeyN", 78, "n")}


def press(browser: Browser, key: str) -> None:
    code, key_code, text = KEYS[key]
    browser.press(key, code, key_code, text)
