"""files-service measured: a large multipart upload and its download through the gateway on each
storage backend (bytes checked by SHA-256, the resident sets of gateway and files-service sampled),
and downloads of a 1 MiB and a 100 MiB file beside nginx serving the same bytes from disk on the
same machine in the same run (the floor)."""
from __future__ import annotations

import hashlib
import http.client
import json
import os
import pathlib
import shutil
import signal
import subprocess
import time
import urllib.parse

import streams
from drivers import LoadError, wrk
from product import Product
from web import wait_until

BOUNDARY = "BenchBoundary7f3a"
HEAD = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"blob.bin\"\r\n"
        "Content-Type: application/octet-stream\r\n\r\n").encode()
TAIL = f"\r\n--{BOUNDARY}--\r\n".encode()
GET_LUA = pathlib.Path(__file__).resolve().parent.parent / "wrk" / "get_path.lua"


def upload(product: Product, path: str, size: int) -> float:
    """POSTs `size` pattern bytes as the multipart field `file`; the seconds taken."""
    def body():
        yield HEAD
        yield from streams.pattern(size)
        yield TAIL
    parts = urllib.parse.urlsplit(product.prefix())
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=300)
    started = time.monotonic()
    connection.request("POST", f"{parts.path}/files/{path}?overwrite=true", body=body(), headers={
        "Content-Type": f"multipart/form-data; boundary={BOUNDARY}", "Content-Length": str(len(HEAD) + size + len(TAIL))})
    response = connection.getresponse()
    answer = response.read()
    elapsed = time.monotonic() - started
    if response.status != 200 or "fileURL" not in json.loads(answer):
        raise LoadError(f"upload answered {response.status}: {answer[:200]!r}")
    return elapsed


def download(url: str, size: int) -> float:
    """GETs `url`; checks the bytes are the pattern's; the seconds taken."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=300)
    started = time.monotonic()
    connection.request("GET", parts.path)
    response = connection.getresponse()
    digest, received = hashlib.sha256(), 0
    while chunk := response.read(1 << 20):
        digest.update(chunk)
        received += len(chunk)
    elapsed = time.monotonic() - started
    if response.status != 200 or received != size or digest.hexdigest() != streams.pattern_sha256(size):
        raise LoadError(f"the download answered {response.status} with {received} of {size} bytes, or other bytes")
    return elapsed


def large(product: Product, backend: str, size: int, bound_mib: float) -> list[dict]:
    """The large upload and its download, with peak resident sets."""
    pids = product.pids()
    watched = {"gateway": pids["gateway"], "files-service": pids["files-service"]}
    results = []
    for case, transfer in [("upload", lambda: upload(product, "bench/large.bin", size)),
                           ("download", lambda: download(product.prefix() + "/files/bench/large.bin", size))]:
        with streams.RSSSampler(watched) as sampler:
            seconds = transfer()
        peaks = {name: round(peak, 1) for name, peak in sampler.peak.items()}
        over = [name for name, peak in peaks.items() if peak > bound_mib]
        name = f"files_{case}_{backend}"
        print(f"  product    {name:20} {size >> 20} MiB in {seconds:.2f} s ({size / seconds / (1 << 20):,.0f} MiB/s), "
              f"peak RSS {', '.join(f'{n} {p} MiB' for n, p in peaks.items())}", flush=True)
        results.append({"system": "product", "case": name, "bytes": size, "seconds": round(seconds, 2),
                        "mib_per_second": round(size / seconds / (1 << 20), 1), "peak_rss_mib": peaks, "over_bound": over})
    return results


class Nginx:
    """nginx (Debian's) serving a folder on loopback with sendfile, one worker per core."""

    def __init__(self, state: pathlib.Path, port: int):
        self.state, self.port, self.root = state, port, state / "nginx-root"
        self.process: subprocess.Popen | None = None

    def start(self):
        self.root.mkdir(parents=True, exist_ok=True)
        (self.state / "nginx-tmp").mkdir(exist_ok=True)
        config = self.state / "nginx.conf"
        # Run as root (the benchmark's installs need it), workers read the state folder as root too.
        user = "user root;" if os.geteuid() == 0 else ""
        config.write_text(f"""{user} worker_processes auto; daemon off; pid {self.state}/nginx.pid;
error_log {self.state}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{ access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
  client_body_temp_path {self.state}/nginx-tmp; proxy_temp_path {self.state}/nginx-tmp;
  fastcgi_temp_path {self.state}/nginx-tmp; uwsgi_temp_path {self.state}/nginx-tmp; scgi_temp_path {self.state}/nginx-tmp;
  server {{ listen 127.0.0.1:{self.port}; root {self.root}; }} }}
""")
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.process = subprocess.Popen([nginx, "-c", str(config), "-e", str(self.state / "nginx-error.log")],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(lambda: _answers(f"http://127.0.0.1:{self.port}/"), 20, "nginx to listen")

    def serve(self, name: str, size: int) -> str:
        with open(self.root / name, "wb") as file:
            for chunk in streams.pattern(size):
                file.write(chunk)
        return f"http://127.0.0.1:{self.port}/{name}"

    def stop(self):
        if self.process:
            self.process.send_signal(signal.SIGQUIT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()


def _answers(url: str) -> bool:
    try:
        parts = urllib.parse.urlsplit(url)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=2)
        connection.request("GET", parts.path)
        connection.getresponse().read()
        return True
    except OSError:
        return False


def downloads(product: Product, nginx: Nginx, seconds: float, measure) -> None:
    """1 MiB and 100 MiB downloads by wrk, through the gateway and from nginx; `measure(system,
    case, connections, run)` records each with its MiB/s."""
    for name, size, connections in [("1m.bin", 1 << 20, [1, 16]), ("100m.bin", 100 << 20, [1, 4])]:
        upload(product, f"bench/{name}", size)
        download(product.prefix() + f"/files/bench/{name}", size)
        floor = nginx.serve(name, size)
        download(floor, size)
        urls = {"product": product.prefix() + f"/files/bench/{name}", "nginx": floor}
        for count in connections:
            for system, url in urls.items():
                parts = urllib.parse.urlsplit(url)
                env = {"BENCH_PATH": parts.path}
                measure(system, f"download_{name.removesuffix('.bin')}", count, size,
                        lambda: wrk(f"{parts.scheme}://{parts.netloc}", GET_LUA, count, seconds, env))


class Moto:
    """moto's S3 server (PyPI), for the S3 backend's transfer."""

    def __init__(self, state: pathlib.Path, port: int):
        self.state, self.port = state, port
        self.process: subprocess.Popen | None = None

    def start(self) -> bool:
        """Starts it; False when moto is not installed."""
        if subprocess.run(["python3", "-c", "import moto.server"], capture_output=True).returncode != 0:
            return False
        log = open(self.state / "moto.log", "w")
        self.process = subprocess.Popen(["python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                                        stdout=log, stderr=log)
        wait_until(lambda: _answers(f"http://127.0.0.1:{self.port}/moto-api/"), 30, "moto to listen")
        return True

    def environment(self, bucket: str) -> dict[str, str]:
        """files-service's settings for a fresh bucket (created here; moto checks no signature)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        connection.request("PUT", f"/{bucket}")
        connection.getresponse().read()
        return {"BAAS_FILES_STORAGE": "s3", "BAAS_FILES_S3_ENDPOINT": f"http://127.0.0.1:{self.port}",
                "BAAS_FILES_S3_BUCKET": bucket, "BAAS_FILES_S3_ACCESS_KEY_ID": "bench",
                "BAAS_FILES_S3_SECRET_ACCESS_KEY": "bench"}

    def stop(self):
        if self.process:
            self.process.terminate()
            self.process.wait(timeout=20)
