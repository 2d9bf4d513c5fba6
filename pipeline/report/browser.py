"""Open a report page in headless Chromium and say what a reader's browser would: console errors,
uncaught exceptions, failed resource loads, images that did not decode, and a screenshot of the first
screen. Standard library only: the Chrome DevTools protocol over `--remote-debugging-pipe` (JSON
messages, NUL-terminated, on file descriptors 3 and 4 of the browser), so no websocket client, Selenium
or Playwright is needed.

    python -m pipeline.report.browser outputs/report/index.html docs/report.png
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """The first Chromium-like browser on PATH (Debian's is /usr/bin/chromium), or None."""
    return next((path for name in CANDIDATES if (path := shutil.which(name))), None)


@dataclass
class PageLoad:
    """What loading a page produced: console errors and uncaught exceptions, failed requests (URL and
    reason), images without pixels, and the PNG screenshot of the first screen."""

    errors: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    broken_images: int = 0
    screenshot: bytes = b""


class _Pipe:
    """One DevTools connection: send a command, read events until its reply arrives."""

    def __init__(self, write_fd: int, read_fd: int, timeout: float):
        self._w, self._r, self._buffer, self._id, self._deadline = write_fd, read_fd, b"", 0, time.monotonic() + timeout
        self.events: list[dict[str, Any]] = []

    def _message(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            if time.monotonic() > self._deadline:
                raise TimeoutError("the browser did not answer in time")
            chunk = os.read(self._r, 1 << 16)
            if not chunk:
                raise RuntimeError("the browser closed the DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._id += 1
        message = {"id": self._id, "method": method, "params": params, **({"sessionId": session} if session else {})}
        os.write(self._w, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._message()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> None:
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._message())


def load_page(page: Path, width: int = 1280, height: int = 900, timeout: float = 60.0, browser: str | None = None) -> PageLoad:
    """Load `page` (a file) in headless Chromium at a `width` x `height` viewport and report (`PageLoad`)."""
    binary = browser or find_chromium()
    if binary is None:
        raise FileNotFoundError("no Chromium on PATH (apt-get install chromium)")
    to_browser, from_browser = os.pipe(), os.pipe()

    def wire() -> None:  # in the child: the browser reads fd 3, writes fd 4
        os.dup2(to_browser[0], 3)
        os.dup2(from_browser[1], 4)

    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.Popen([binary, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
                                 "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                                 f"--user-data-dir={profile}", f"--window-size={width},{height}", "about:blank"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                pass_fds=(3, 4), preexec_fn=wire)  # noqa: PLW1509 (wire only calls dup2)
        os.close(to_browser[0])
        os.close(from_browser[1])
        pipe = _Pipe(to_browser[1], from_browser[0], timeout)
        try:
            return _inspect(pipe, page.resolve().as_uri(), width, height)
        finally:
            proc.kill()
            proc.wait()
            os.close(to_browser[1])
            os.close(from_browser[0])


def _inspect(pipe: _Pipe, url: str, width: int, height: int) -> PageLoad:
    target = pipe.call("Target.createTarget", url="about:blank")["targetId"]
    session = pipe.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        pipe.call(f"{domain}.enable", session)
    pipe.call("Emulation.setDeviceMetricsOverride", session, width=width, height=height, deviceScaleFactor=1, mobile=False)
    pipe.events.clear()
    pipe.call("Page.navigate", session, url=url)
    pipe.wait_for("Page.loadEventFired")
    broken = pipe.call("Runtime.evaluate", session, returnByValue=True,
                       expression="Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).length")
    shot = pipe.call("Page.captureScreenshot", session, format="png")
    result = PageLoad(broken_images=int(broken["result"]["value"]), screenshot=base64.b64decode(shot["data"]))
    requests = {}
    for e in pipe.events:
        method, p = e.get("method"), e.get("params", {})
        if method == "Network.requestWillBeSent":
            requests[p["requestId"]] = p["request"]["url"][:120]
        elif method == "Network.loadingFailed":
            result.failed.append(f"{requests.get(p['requestId'], '?')}: {p.get('errorText')}")
        elif method == "Network.responseReceived" and p["response"].get("status", 200) >= 400:
            result.failed.append(f"{p['response']['url'][:120]}: HTTP {p['response']['status']}")
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            result.errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            details = p["exceptionDetails"]
            result.errors.append(details.get("exception", {}).get("description") or details.get("text", "exception"))
        elif method == "Log.entryAdded" and p["entry"].get("level") == "error":
            result.errors.append(p["entry"].get("text", ""))
    return result


if __name__ == "__main__":
    loaded = load_page(Path(sys.argv[1]))
    if len(sys.argv) > 2:
        Path(sys.argv[2]).write_bytes(loaded.screenshot)
    print(json.dumps({"errors": loaded.errors, "failed": loaded.failed, "broken_images": loaded.broken_images}))
