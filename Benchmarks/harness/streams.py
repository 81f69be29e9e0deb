"""Large bodies through the gateway: an upload the test service hashes as it arrives and a
download it produces, each checked byte for byte by SHA-256, while the resident set of the
gateway and of the service is sampled from /proc. Both must stay under a bound whatever the size:
no hop may hold a body."""
from __future__ import annotations

import hashlib
import http.client
import json
import threading
import time
import urllib.parse

from drivers import LoadError
from procstats import status_mib

CHUNK = 64 << 10
# Byte i of a body is i % 251, as the test service's pattern (Tests/StreamTestSupport/BytePattern.swift).
_BLOCK = bytes(i % 251 for i in range(CHUNK + 251))


def pattern(size: int):
    """The pattern's bytes 0..<size, chunk by chunk."""
    offset = 0
    while offset < size:
        length = min(CHUNK, size - offset)
        start = offset % 251
        yield _BLOCK[start:start + length]
        offset += length


def pattern_sha256(size: int) -> str:
    digest = hashlib.sha256()
    for chunk in pattern(size):
        digest.update(chunk)
    return digest.hexdigest()


class RSSSampler:
    """Samples the resident set of some processes every 20 ms while in use; `peak` is the
    largest seen per name."""

    def __init__(self, pids: dict[str, int]):
        self.pids, self.peak = pids, {name: 0.0 for name in pids}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            for name, pid in self.pids.items():
                self.peak[name] = max(self.peak[name], status_mib(pid, "VmRSS"))
            time.sleep(0.02)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *_):
        self._stop.set()
        self._thread.join()


def _connection(url: str) -> http.client.HTTPConnection:
    parts = urllib.parse.urlsplit(url)
    return http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)


def upload(prefix: str, size: int) -> float:
    """PUTs `size` bytes to the hashing route; checks the service's hash; the seconds taken."""
    started = time.monotonic()
    connection = _connection(prefix)
    path = urllib.parse.urlsplit(prefix).path + "/files/hash/bench"
    connection.request("PUT", path, body=pattern(size), headers={"Content-Length": str(size)})
    response = connection.getresponse()
    answer = response.read()
    elapsed = time.monotonic() - started
    if response.status != 200:
        raise LoadError(f"upload answered {response.status}: {answer[:200]!r}")
    if json.loads(answer).get("sha256") != pattern_sha256(size):
        raise LoadError("the service's hash of the upload differs from the bytes sent")
    return elapsed


def download(prefix: str, size: int) -> float:
    """GETs `size` bytes of the pattern; checks them by hash; the seconds taken."""
    started = time.monotonic()
    connection = _connection(prefix)
    connection.request("GET", urllib.parse.urlsplit(prefix).path + f"/files/blob/{size}")
    response = connection.getresponse()
    if response.status != 200:
        raise LoadError(f"download answered {response.status}")
    digest, received = hashlib.sha256(), 0
    while chunk := response.read(1 << 20):
        digest.update(chunk)
        received += len(chunk)
    elapsed = time.monotonic() - started
    if received != size or digest.hexdigest() != pattern_sha256(size):
        raise LoadError(f"the download arrived wrong ({received} of {size} bytes, or different bytes)")
    return elapsed


def measure(prefix: str, pids: dict[str, int], size: int, bound_mib: float) -> list[dict]:
    """Runs the upload and the download; one result each, with the peak resident sets and
    whether they stayed within `bound_mib`."""
    results = []
    for case, transfer in [("stream_upload", upload), ("stream_download", download)]:
        with RSSSampler(pids) as sampler:
            seconds = transfer(prefix, size)
        peaks = {name: round(peak, 1) for name, peak in sampler.peak.items()}
        print(f"  product    {case:20} {size >> 20} MiB in {seconds:.2f} s ({size / seconds / (1 << 20):,.0f} MiB/s), "
              f"peak RSS {', '.join(f'{name} {peak} MiB' for name, peak in peaks.items())}", flush=True)
        over = [name for name, peak in peaks.items() if peak > bound_mib]
        if over:
            print(f"  {case}: the resident set of {', '.join(over)} went over {bound_mib} MiB", flush=True)
        results.append({"system": "product", "case": case, "bytes": size, "seconds": round(seconds, 2),
                        "mib_per_second": round(size / seconds / (1 << 20), 1), "peak_rss_mib": peaks,
                        "over_bound": over})
    return results
