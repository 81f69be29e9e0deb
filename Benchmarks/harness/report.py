"""The results as JSON and as a markdown table, with the ratios against the floor and the peer."""
from __future__ import annotations

import json
import pathlib

# Product case → its physical floor (pgbench script) and its peer case (Kinto).
FLOOR = {
    "get_by_id": "get_by_id", "create": "create", "update": "update", "find": "find", "find_relations": "find_relations",
    "count": "count",
}
PEER = {"get_by_id": "kinto_get", "create": "kinto_create"}


def _find(results: list[dict], system: str, case: str, connections: int) -> dict | None:
    return next((r for r in results if r["system"] == system and r["case"] == case and r["connections"] == connections), None)


def add_ratios(results: list[dict]):
    for result in results:
        if result["system"] != "product":
            continue
        floor = _find(results, "postgresql", FLOOR.get(result["case"], ""), result["connections"])
        peer = _find(results, "kinto", PEER.get(result["case"], ""), result["connections"])
        if floor:
            result["vs_postgresql"] = round(result["requests_per_second"] / floor["requests_per_second"], 3)
        swift = _find(results, "swift-floor", result["case"], result["connections"])
        if swift:
            result["vs_swift_floor"] = round(result["requests_per_second"] / swift["requests_per_second"], 3)
        nats = _find(results, "nats", result["case"], result["connections"])
        if nats:
            result["vs_nats"] = round(result["requests_per_second"] / nats["requests_per_second"], 3)
        if peer:
            result["vs_kinto"] = round(result["requests_per_second"] / peer["requests_per_second"], 2)


def markdown(run: dict) -> str:
    lines = [
        f"Run of {run['started']} — {run['mode']} mode, {run['seconds']} s per case, {run['rows']:,} rows, "
        f"{run['machine']}.",
        "",
        "| system | case | conns | req/s | p50 ms | p99 ms | CPU ms/req (gateway · service · users · PostgreSQL · peer) "
        "| vs PostgreSQL | vs Kinto | errors |",
        "|---|---|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for r in run["results"]:
        if r["system"] == "swift-floor":
            r = {**r, "cpu_ms_per_request": {"data-service": r["cpu_ms_per_request"].get("swift-floor", 0),
                                             "postgresql": r["cpu_ms_per_request"].get("postgresql", 0)}}
        # The service column is the backend the case exercises: data-, geo- or messaging-service.
        service = next((s for s in ["geo-service", "messaging-service"] if s in r["cpu_ms_per_request"]), "data-service")
        cpu = " · ".join(f"{r['cpu_ms_per_request'].get(p, 0):.3f}" if p in r["cpu_ms_per_request"] else "–"
                         for p in ["gateway", service, "users-service", "postgresql", "kinto"])
        # Pub/sub's floor is NATS, not PostgreSQL.
        floor = f"{r['vs_nats']} (NATS)" if "vs_nats" in r else r.get("vs_postgresql", "–")
        lines.append(
            f"| {r['system']} | {r['case']} | {r['connections']} | {r['requests_per_second']:,.0f} | {r['p50_ms']:.2f} "
            f"| {r['p99_ms']:.2f} | {cpu} | {floor} | {r.get('vs_kinto', '–')} | {r['errors'] or ''} |")
    lines += ["", "Peak RSS (MiB): " + ", ".join(f"{name} {mib:.1f}" for name, mib in run["peak_rss_mib"].items()) + "."]
    if run.get("idle_rss_mib"):
        lines += ["", "Idle RSS once started, before any load (MiB, anonymous + file-backed): " + ", ".join(
            f"{name} {mib['VmRSS']:.1f} ({mib['RssAnon']:.1f} + {mib['RssFile']:.1f})"
            for name, mib in run["idle_rss_mib"].items()) + "."]
    swift = [r for r in run["results"] if "vs_swift_floor" in r]
    if swift:
        lines += ["", "GET by id against the single-process Swift floor (`Benchmarks/Floor`): "
                  + ", ".join(f"{r['vs_swift_floor']} at {r['connections']}" for r in swift) + "."]
    if run.get("streams"):
        lines += ["", "| large body | MiB | seconds | MiB/s | peak RSS MiB during the transfer | over the bound |",
                  "|---|---:|---:|---:|---|---|"]
        for r in run["streams"]:
            peaks = ", ".join(f"{name} {mib}" for name, mib in r["peak_rss_mib"].items())
            lines.append(f"| {r['case']} | {r['bytes'] >> 20:,} | {r['seconds']} | {r['mib_per_second']:,} | {peaks} "
                         f"| {', '.join(r['over_bound']) or 'no'} |")
    downloads = [r for r in run["results"] if r["case"].startswith("download_") and r["system"] == "product"]
    if downloads:
        lines += ["", "| download | conns | product MiB/s | nginx MiB/s | product ÷ nginx |", "|---|---:|---:|---:|---:|"]
        for r in downloads:
            floor = _find(run["results"], "nginx", r["case"], r["connections"])
            ratio = round(r["mib_per_second"] / floor["mib_per_second"], 3) if floor and floor["mib_per_second"] else "–"
            lines.append(f"| {r['case']} | {r['connections']} | {r['mib_per_second']:,} "
                         f"| {floor['mib_per_second'] if floor else '–':,} | {ratio} |")
    delivery = [r for r in run["results"] if r["case"] == "rt_delivery"]
    if delivery:
        lines += ["", "| real-time sockets | connect s | changes/s | delivered/s | p50 ms | p99 ms | lost "
                  "| idle KiB per connection (gateway · messaging) |", "|---:|---:|---:|---:|---:|---:|---:|---|"]
        for r in delivery:
            memory = r["kib_per_idle_connection"]
            lines.append(f"| {r['sockets']:,} | {r['connect_seconds']} | {r['changes_per_second']:,} "
                         f"| {r['requests_per_second']:,.0f} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | {r['errors']} "
                         f"| {memory['gateway']} · {memory['messaging-service']} |")
    return "\n".join(lines) + "\n"


def write(run: dict, directory: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    directory.mkdir(parents=True, exist_ok=True)
    add_ratios(run["results"])
    data, table = directory / "results.json", directory / "results.md"
    data.write_text(json.dumps(run, indent=2) + "\n")
    table.write_text(markdown(run))
    return data, table
