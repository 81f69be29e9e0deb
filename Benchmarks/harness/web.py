"""Small JSON-over-HTTP helper for setting the benchmark up (not for load)."""
from __future__ import annotations

import json
import time
import urllib.error
import urllib.request


def call(method: str, url: str, body=None, headers: dict[str, str] | None = None, expect_ok: bool = True):
    """Sends one request and returns (status, parsed JSON or text)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={**(headers or {})})
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            status, text = response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read().decode()
    try:
        parsed = json.loads(text) if text else None
    except ValueError:
        parsed = text
    if expect_ok and not 200 <= status < 300:
        raise RuntimeError(f"{method} {url} → {status}: {text[:500]}")
    return status, parsed


def wait_until(check, seconds: float, what: str):
    """Polls `check` until it returns true or `seconds` pass."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except (OSError, RuntimeError, ValueError):
            pass
        time.sleep(0.25)
    raise RuntimeError(f"timed out waiting for {what}")
