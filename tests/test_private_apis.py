"""Every reach into another library's private API (docs/private-apis.md), pinned: each test
fails when the pinned library changes what swedeck relies on, naming the reach."""

from __future__ import annotations

import pytest

from support.openai_server import Turn, Usage
from support.waiting import wait_for


def test_textual_render_cache_can_be_replaced_by_an_empty_one():
    # tui/widgets/render_cache.py: Widget._render_cache and its type textual.widget._RenderCache
    from textual.geometry import NULL_SIZE
    from textual.widget import Widget, _RenderCache

    widget = Widget()
    assert isinstance(widget._render_cache, _RenderCache)
    empty = _RenderCache(NULL_SIZE, [])
    assert empty.lines == [] and empty.size == NULL_SIZE


def _tracked_strip(methods: dict) -> tuple:
    """A line put through the three methods (Textual's or swedeck's), then dropped with no
    collection: whether it is still alive, and what each method returned."""
    import gc
    import weakref

    from rich.segment import Segment
    from rich.style import Style
    from textual.strip import Strip

    class Tracked(Strip):
        __slots__ = ("__weakref__",)

    results = []
    gc.disable()
    try:
        strip = Tracked([Segment("hello "), Segment("world", Style(bold=True))])
        for width in (11, 5, 14):
            results.append(methods["adjust_cell_length"](strip, width, None).text)
        for cuts in ([11], [3, 11], [3, 20], [20]):
            results.append([part.text for part in methods["divide"](strip, cuts)])
        for start, end in ((0, 11), (-2, 11), (2, 11), (0, 5), (0, 14)):
            results.append(methods["crop_extend"](strip, start, end, None).text)
        same = methods["adjust_cell_length"](strip, 11, None) is strip
        alive = weakref.ref(strip)
        del strip
        return alive() is not None, same, results
    finally:
        gc.enable()


def test_textual_strips_store_themselves_and_swedeck_s_methods_return_the_same_without():
    # tui/strip_cycles.py: Strip.adjust_cell_length, Strip.divide, Strip.crop_extend. Textual's
    # store the strip in its own caches (a cycle: the line outlives every reference to it);
    # swedeck's return what they return, the strip itself included, and store nothing.
    from swedeck.tui import strip_cycles

    textual_s = {"adjust_cell_length": strip_cycles._adjust_cell_length, "divide": strip_cycles._divide,
                 "crop_extend": strip_cycles._crop_extend}
    swedeck_s = {"adjust_cell_length": strip_cycles.adjust_cell_length, "divide": strip_cycles.divide,
                 "crop_extend": strip_cycles.crop_extend}
    kept_by_textual, same_by_textual, theirs = _tracked_strip(textual_s)
    kept_by_swedeck, same_by_swedeck, ours = _tracked_strip(swedeck_s)
    assert kept_by_textual, "Textual's Strip no longer refers to itself: tui/strip_cycles.py can go"
    assert not kept_by_swedeck
    assert ours == theirs and same_by_textual and same_by_swedeck


def test_swedeck_s_apps_draw_with_the_strip_methods_that_store_nothing():
    """Issue 64.2: importing swedeck's UI leaves Textual as it is (a process that only imports a
    widget gets Textual's own `Strip`); a swedeck app, once made, draws with the methods that
    store nothing."""
    import subprocess
    import sys

    checked = subprocess.run([sys.executable, "-c", (
        "from textual.strip import Strip\n"
        "import swedeck.tui.widgets.step_list\n"
        "from swedeck.tui import strip_cycles\n"
        "assert Strip.divide is strip_cycles._divide, 'patched at import'\n"
        "from swedeck.tui.diff.app import DiffApp\n"
        "from swedeck.tui.diff.batch_screen import BatchDiffScreen\n"
        "from swedeck.core.diff.batch import BatchComparison\n"
        "DiffApp(BatchDiffScreen(BatchComparison('a', 'b'), print))\n"
        "assert Strip.adjust_cell_length is strip_cycles.adjust_cell_length\n"
        "assert Strip.divide is strip_cycles.divide and Strip.crop_extend is strip_cycles.crop_extend\n")],
        capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr[-2000:]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_textual_log_parts_the_output_log_writes_through(anyio_backend):
    # tui/widgets/observation_pane.py OutputLog: Log._lines, _width, _process_line, _prune_max_lines,
    # textual._line_split.line_split; the same lines, width and scroll as Log.write
    from textual.app import App, ComposeResult
    from textual.widgets import Log

    from swedeck.tui.widgets.observation_pane import OutputLog

    class Both(App[None]):
        def compose(self) -> ComposeResult:
            yield Log(max_lines=50, id="theirs")
            yield OutputLog(max_lines=50, id="ours")

    text = "".join(f"line {n}\r\n" if n % 3 else f"wide {'x' * n}\n" for n in range(80)) + "no ending"
    app = Both()
    async with app.run_test(size=(40, 30)) as pilot:
        theirs, ours = app.query_one("#theirs", Log), app.query_one("#ours", OutputLog)
        for log in (theirs, ours):
            log.write(text[:500])
            log.write(text[500:])
        await wait_for(pilot, lambda: theirs.scroll_y > 0)  # Textual's own log has scrolled to its end
        assert ours._lines == theirs._lines and ours.lines == theirs.lines and ours.line_count == 50
        assert ours._width == theirs._width and ours.virtual_size == theirs.virtual_size
        assert ours.scroll_y == theirs.scroll_y > 0


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_textual_keeps_the_exception_that_ended_an_app(capsys, anyio_backend):
    # tui/launch.py ui_ended: App._exception names what stopped the UI
    from textual.app import App

    from swedeck.tui.live.launch import ui_ended

    class Broken(App[None]):
        def on_mount(self) -> None:
            raise ValueError("boom")

    app = Broken()
    with pytest.raises(ValueError, match="boom"):
        async with app.run_test():
            pass
    assert isinstance(app._exception, ValueError) and app.return_code == 1
    assert ui_ended(app) == 1
    assert "ValueError: boom" in capsys.readouterr().err


def test_litellm_stream_wrapper_keeps_what_swedeck_reads(openai_server):
    # core/models/http_call.py: the stream's `chunks` (trimmed, read for provider usage),
    # `received_finish_reason` / `intermittent_finish_reason` (a cut stream), and the httpx
    # response found through `completion_stream` and its generator frames (cancel closes it).
    from swedeck.core.models.http_call import find_http_response, provider_usage, stream_finished
    from swedeck.core.models.litellm_loader import litellm

    openai_server.script(Turn(text="one two three", chunks=3, usage=Usage(10, 3)))
    stream = litellm().completion(model="hosted_vllm/scripted", api_base=openai_server.url, api_key="x",
                                  messages=[{"role": "user", "content": "hi"}], stream=True,
                                  stream_options={"include_usage": True}, max_retries=0, timeout=30)
    response = find_http_response(stream.completion_stream)
    assert response is not None and not response.is_closed
    chunks = list(stream)
    assert chunks and isinstance(stream.chunks, list)
    assert stream_finished(stream) is True  # the server sent a finish_reason
    assert provider_usage(stream, None) is not None


def test_litellm_module_switches_swedeck_sets_exist():
    # core/models/litellm_loader.py sets these module attributes; a rename would silently do nothing
    from swedeck.core.models.litellm_loader import litellm

    module = litellm()
    for name in ("suppress_debug_info", "set_verbose", "disable_streaming_logging", "drop_params"):
        assert hasattr(module, name), name


def test_docker_exec_socket_has_the_raw_socket_and_frames_reader():
    # core/environments/docker.py: writes to exec_start(socket=True)._sock, reads frames with
    # docker.utils.socket.frames_iter_no_tty
    from docker.utils.socket import frames_iter_no_tty

    from support.docker_env import TEST_IMAGE, docker_client

    client = docker_client()
    container = client.containers.run(TEST_IMAGE, ["sleep", "60"], detach=True, auto_remove=False)
    try:
        exec_id = client.api.exec_create(container.id, ["cat"], stdin=True, stdout=True, stderr=True)["Id"]
        sock = client.api.exec_start(exec_id, socket=True)
        assert hasattr(sock, "_sock")
        sock._sock.sendall(b"pinned\n")
        frames = frames_iter_no_tty(sock)
        stream, data = next(frames)
        assert stream == 1 and data == b"pinned\n"
        sock._sock.close()
    finally:
        container.remove(force=True)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_textual_lays_out_again_for_a_statics_new_size_and_not_for_pane_text(anyio_backend, monkeypatch):
    # tui/widgets/pane_text.py PaneText: Widget._size_updated(size, virtual_size, container_size, layout);
    # a Static's new size asks for a second layout, a PaneText's does not (one layout per replay step)
    from textual.app import App, ComposeResult
    from textual.containers import VerticalScroll
    from textual.screen import Screen
    from textual.widgets import Static

    from swedeck.tui.widgets.pane_text import PaneText

    layouts: list[str] = []
    real = Screen._refresh_layout
    monkeypatch.setattr(Screen, "_refresh_layout", lambda self, *a, **k: layouts.append("layout") or real(self, *a, **k))

    class Both(App[None]):
        def compose(self) -> ComposeResult:
            with VerticalScroll():
                yield Static("a", id="static")
            with VerticalScroll():
                yield PaneText("a", id="pane")

    app = Both()
    async with app.run_test(size=(40, 20)) as pilot:
        static, pane = app.query_one("#static", Static), app.query_one("#pane", PaneText)
        await wait_for(pilot, lambda: static.size.height == 1 and pane.size.height == 1)
        layouts.clear()
        pane.update("a\nb\nc")
        await wait_for(pilot, lambda: pane.size.height == 3 and pane.virtual_size.height == 3)
        static.update("a\nb\nc")
        await wait_for(pilot, lambda: static.size.height == 3 and len(layouts) >= 3)
        await wait_for(pilot, lambda: not app.screen._layout_required)
    assert len(layouts) == 3, layouts  # the pane's one, the Static's two
