"""The soak: the whole system as separate processes (Deploy/dev.sh under .local/soak) under a
mixed load from `--connections` keep-alive connections for `--minutes`: object writes, updates
and reads, relations, logins and token checks, publishing, subscriptions polled for messages, geo
and file listings (Tests/Faults/load.py). It reports, and checks: no answer 5xx or 4xx, no process restarted, no acknowledged
write lost (each read back at the end), and flat memory: every process's resident size at the end
within 10 % of its size at the end of minute 2. Figures go to stdout and Benchmarks/results/soak.json.

  python3 Benchmarks/soak.py [--minutes 10] [--connections 64] [--configuration release]"""
import argparse
import collections
import json
import os
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "Tests" / "Faults"))
from load import Load, missing_writes, prepare  # noqa: E402
from system import BACKENDS, DevSystem  # noqa: E402

PROCESSES = ["gateway"] + BACKENDS


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--configuration", default="release")
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parent / "results" / "soak.json"))
    arguments = parser.parse_args()
    environment = {key: value for key, value in os.environ.items() if key.startswith(("BAAS_", "MALLOC_"))}
    with DevSystem(".local/soak", pg_port=25437, gateway_port=8290, configuration=arguments.configuration,
                   environment=environment) as system:
        token = prepare(system)
        load = Load(system.url, system.prefix(), token, connections=arguments.connections, soak=True)
        started = time.monotonic()
        load.start()
        samples = []
        pids = []
        try:
            while time.monotonic() - started < arguments.minutes * 60:
                time.sleep(10)
                elapsed = time.monotonic() - started
                samples.append({"second": round(elapsed), **{p: system.resident_kib(p) or 0 for p in PROCESSES}})
                pids.append({p: system.pid(p) for p in PROCESSES})
                window = load.between(time.monotonic() - 10, time.monotonic())
                print(f"{elapsed / 60:5.1f} min  {len(window) / 10:7.0f} req/s  "
                      f"gateway {samples[-1]['gateway'] / 1024:.1f} MiB  data {samples[-1]['data-service'] / 1024:.1f} MiB",
                      flush=True)
        finally:
            load.stop()
        lost = missing_writes(system, load.acked)
    report(arguments, load, samples, lost, pids)


def report(arguments, load, samples, lost, pids):
    statuses = collections.Counter(record[2] for record in load.records)
    by_service = collections.Counter(record[1] for record in load.records)
    failures = []
    server_errors = sum(count for status, count in statuses.items() if status >= 500 or status == 0)
    if server_errors:
        failures.append(f"{server_errors} answers were 5xx or no answer: {dict(statuses)}")
    other = sum(count for status, count in statuses.items() if 400 <= status < 500)
    if other:
        failures.append(f"{other} answers were 4xx: the mix should never be refused")
    if lost:
        failures.append(f"{len(lost)} acknowledged writes lost")
    restarted = [p for p in PROCESSES if len({entry[p] for entry in pids}) > 1]
    if restarted:
        failures.append(f"restarted during the soak: {restarted}")
    minute_two = next((s for s in samples if s["second"] >= 120), None)
    memory = {}
    for process in PROCESSES:
        if minute_two is None or not samples:
            continue
        then, end = minute_two[process], samples[-1][process]
        memory[process] = {"minute2_mib": round(then / 1024, 1), "end_mib": round(end / 1024, 1),
                           "change_pct": round(100 * (end - then) / then, 1)}
        if end > then * 1.10:
            failures.append(f"{process} grew {memory[process]['change_pct']} % after minute 2")
    latencies = sorted(record[3] for record in load.records)
    summary = {
        "minutes": arguments.minutes, "connections": arguments.connections, "configuration": arguments.configuration,
        "requests": len(load.records), "per_second": round(len(load.records) / (arguments.minutes * 60)),
        "statuses": {str(k): v for k, v in sorted(statuses.items())}, "by_service": dict(by_service),
        "p50_ms": round(1000 * latencies[len(latencies) // 2], 1) if latencies else None,
        "p99_ms": round(1000 * latencies[int(len(latencies) * 0.99)], 1) if latencies else None,
        "acknowledged_writes": len(load.acked), "lost_writes": len(lost), "memory": memory, "samples": samples,
        "failures": failures,
    }
    pathlib.Path(arguments.out).write_text(json.dumps(summary, indent=1) + "\n")
    shown = {k: v for k, v in summary.items() if k != "samples"}
    print(json.dumps(shown, indent=1))
    print("soak passed" if not failures else "soak FAILED: " + "; ".join(failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
