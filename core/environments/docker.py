"""`docker`: the same bash session, inside a container, through the docker SDK only.

The session shell is one `exec` whose socket carries commands in and multiplexed output
out; helpers (stopping a command's process tree, reading files) are further execs, so
everything happens inside the container."""

from __future__ import annotations

import io
import posixpath
import tarfile
import time
from typing import Any

from ..config import EnvironmentConfig
from ..errors import SwedeckError
from ..redact import Redactor
from . import docker_cleanup
from .channel import ReaderQueue
from .docker_image import resolve_image
from .session_environment import SessionEnvironment

_ALIVE_CHECK_S = 1.0
_KEEP_RUNNING = ["/bin/sh", "-c", "while :; do sleep 3600; done"]


class DockerChannel:
    orphans_are_ours = True
    tree_root: int | None = None

    def __init__(self, client: Any, container: Any):
        self._client = client
        self._container = container
        api = client.api
        self._exec_id = api.exec_create(container.id, ["bash", "--norc", "--noprofile"], stdin=True,
                                        stdout=True, stderr=True, tty=False)["Id"]
        self._socket = api.exec_start(self._exec_id, socket=True)
        self._raw = getattr(self._socket, "_sock", self._socket)
        from docker.utils.socket import frames_iter_no_tty

        frames = frames_iter_no_tty(self._socket)

        def read() -> bytes:
            data = next(frames, (0, b""))[1]
            return data.encode() if isinstance(data, str) else bytes(data)

        self._reader = ReaderQueue(read, "swedeck-docker-shell")
        self._alive, self._alive_at = True, 0.0

    def send(self, data: bytes) -> None:
        try:
            self._raw.sendall(data)
        except OSError:
            self._alive = False

    def recv(self, timeout: float) -> bytes | None:
        return self._reader.get(timeout)

    def alive(self) -> bool:
        now = time.monotonic()
        if self._alive and now - self._alive_at >= _ALIVE_CHECK_S:
            self._alive_at = now
            try:
                self._alive = bool(self._client.api.exec_inspect(self._exec_id)["Running"])
            except Exception:  # noqa: BLE001 - the container is gone
                self._alive = False
        return self._alive

    def run_helper(self, argv: list[str], timeout: float) -> tuple[int, bytes]:
        # `timeout` bounds the helper inside the container (busybox and coreutils both have it)
        code, output = self._container.exec_run(["timeout", str(max(1, int(timeout))), *argv], stdin=False)
        return code, output or b""

    def close(self) -> None:
        self._reader.stop()
        try:
            self._raw.close()
            self._socket.close()
        except OSError:
            pass
        # The shell may still run (background jobs); end it so a restart starts clean.
        pid = self._client.api.exec_inspect(self._exec_id).get("Pid") if self._container_running() else 0
        if pid:
            try:
                self._container.exec_run(["kill", "-9", str(pid)])
            except Exception:  # noqa: BLE001
                pass

    def _container_running(self) -> bool:
        try:
            self._container.reload()
            return bool(self._container.status == "running")
        except Exception:  # noqa: BLE001
            return False


class DockerEnvironment(SessionEnvironment):
    def __init__(self, config: EnvironmentConfig, session_id: str, redactor: Redactor | None = None):
        super().__init__(config, session_id, redactor)
        self.image = resolve_image(self.config)
        self.container_name = self.config.container_name or f"swedeck-{self.session_id}"
        self.description = f"docker {self.image} ({self.container_name})"
        self.client: Any = None
        self.container: Any = None

    def _boot(self) -> None:
        import docker

        try:
            self.client = docker.from_env()
            self.client.ping()
        except docker.errors.DockerException as error:
            raise SwedeckError(f"no Docker engine answers (DOCKER_HOST={_docker_host()}): {error}") from error
        docker_cleanup.remove_stale(self.client)
        self._ensure_image(docker)
        options = {"working_dir": self.config.cwd} if self.config.cwd else {}
        if self.config.network:
            options["network"] = self.config.network
        try:
            self.container = self.client.containers.run(
                self.image, _KEEP_RUNNING, name=self.container_name, detach=True,
                labels=docker_cleanup.labels(self.session_id), environment=self.session_env(),
                **options, **self.config.run_args,
            )
        except docker.errors.DockerException as error:
            raise SwedeckError(f"could not start a container from {self.image}: {error}") from error
        docker_cleanup.register(self.container)

    def _ensure_image(self, docker: Any) -> None:
        try:
            self.client.images.get(self.image)
            return
        except docker.errors.ImageNotFound:
            pass
        try:
            self.client.images.pull(self.image)
        except docker.errors.DockerException as error:
            raise SwedeckError(f"image {self.image} not found locally and could not be pulled: {error}") from error

    def _open_channel(self) -> DockerChannel:
        try:
            return DockerChannel(self.client, self.container)
        except Exception as error:  # docker's APIError and connection errors: the environment is gone
            raise SwedeckError(f"the container {self.container_name} cannot run a shell "
                               f"(it stopped, or the engine lost it): {str(error).splitlines()[0] if str(error) else type(error).__name__}") from error

    def _initial_cwd(self) -> str | None:
        return None  # `working_dir` of the container

    def _teardown(self) -> None:
        if self.container is not None and self.config.remove_on_close:
            docker_cleanup.remove(self.container)
        self.container = None

    def _absolute(self, path: str) -> str:
        return path if posixpath.isabs(path) else posixpath.join(self._current_cwd() or "/", path)

    def read_file(self, path: str) -> str:
        target = self._absolute(path)
        code, (out, err) = self.container.exec_run(["cat", "--", target], demux=True)
        if code != 0:
            raise FileNotFoundError(f"{target}: {(err or b'').decode(errors='replace').strip()}")
        return (out or b"").decode("utf-8", errors="replace")

    def write_file(self, path: str, text: str) -> None:
        target = self._absolute(path)
        folder, name = posixpath.split(target)
        self.container.exec_run(["mkdir", "-p", folder])
        data = text.encode()
        archive = io.BytesIO()
        with tarfile.open(fileobj=archive, mode="w") as tar:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
            tar.addfile(info, io.BytesIO(data))
        if not self.container.put_archive(folder, archive.getvalue()):
            raise SwedeckError(f"could not write {target} in the container")


def _docker_host() -> str:
    import os

    return os.environ.get("DOCKER_HOST", "default socket")
