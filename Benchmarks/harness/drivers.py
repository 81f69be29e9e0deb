"""The load generators: wrk against HTTP endpoints and pgbench against PostgreSQL, each run at a
fixed concurrency for a fixed time, with throughput and latency percentiles parsed from them."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import tempfile

UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


class LoadError(RuntimeError):
    """A load run failed or saw errors."""


def _milliseconds(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if not match:
        raise LoadError(f"unreadable latency {text!r}")
    return float(match.group(1)) * UNITS[match.group(2)]


def wrk(url: str, script: pathlib.Path, connections: int, seconds: float, env: dict[str, str],
        allow_errors: bool = False, refusals: bool = False) -> dict:
    """Runs wrk and returns successful requests/s, p50/p99 in ms and the request count. Non-2xx
    answers or socket errors make it fail — a benchmark of errors measures nothing — unless
    `allow_errors` (a peer's own refusals, counted in `errors` and left out of requests/s).
    With `refusals` the script's 4xx answers are the point: its own count of answers other
    than the refusals it expects (`unexpected answers: N`) replaces wrk's non-2xx count."""
    threads = 1 if connections == 1 else 2
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--timeout", "30s",
               "--latency", "-s", str(script), url]
    run = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **env})
    out = run.stdout
    if run.returncode != 0:
        raise LoadError(f"wrk failed: {run.stderr or out}")
    if refusals:
        errors = int(re.search(r"unexpected answers: (\d+)", out).group(1))
    else:
        errors = sum(int(n) for n in re.findall(r"Non-2xx or 3xx responses: (\d+)", out))
    socket = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if socket:
        errors += sum(int(n) for n in socket.groups())
    if errors and not allow_errors:
        raise LoadError(f"wrk saw errors:\n{out}")
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    percentiles = dict(re.findall(r"^\s*(50|99)(?:\.0+)?%\s+(\S+)\s*$", out, re.M))
    if len(percentiles) != 2:
        raise LoadError(f"no latency percentiles in wrk's output:\n{out}")
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    return {
        "requests_per_second": rate * (requests - errors) / max(1, requests),
        "p50_ms": _milliseconds(percentiles["50"]),
        "p99_ms": _milliseconds(percentiles["99"]),
        "requests": requests,
        "errors": errors,
    }


def pgbench(script: pathlib.Path, connections: int, seconds: float, variables: dict[str, str],
            connection: dict[str, str]) -> dict:
    """Runs pgbench with prepared statements and per-transaction logs; returns the same fields
    as :func:`wrk` (percentiles computed from the logs)."""
    with tempfile.TemporaryDirectory() as logs:
        command = ["pgbench", "-n", "-M", "prepared", "-c", str(connections), "-j", str(min(connections, 2)),
                   "-T", str(max(3, round(seconds))), "-f", str(script), "--log", "--log-prefix", f"{logs}/tx",
                   "-h", connection["host"], "-p", connection["port"], "-U", connection["user"], connection["database"]]
        for name, value in variables.items():
            command += ["-D", f"{name}={value}"]
        run = subprocess.run(command, capture_output=True, text=True,
                             env={**os.environ, "PGPASSWORD": connection["password"]})
        if run.returncode != 0:
            raise LoadError(f"pgbench failed: {run.stderr}")
        latencies = []
        for log in pathlib.Path(logs).glob("tx*"):
            for line in log.read_text().splitlines():
                fields = line.split()
                latencies.append(int(fields[2]) / 1000)
    failed = re.search(r"number of failed transactions: (\d+)", run.stdout)
    if failed and int(failed.group(1)) > 0:
        raise LoadError(f"pgbench saw failures:\n{run.stdout}")
    if not latencies:
        raise LoadError(f"pgbench logged no transaction:\n{run.stdout}")
    latencies.sort()
    return {
        "requests_per_second": float(re.search(r"tps = ([\d.]+)", run.stdout).group(1)),
        "p50_ms": latencies[len(latencies) // 2],
        "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
        "requests": len(latencies),
        "errors": 0,
    }
