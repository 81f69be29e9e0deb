#!/usr/bin/env python3
"""Runs the benchmark (see Benchmarks/README.md): the product through its gateway, the same
work as prepared SQL through pgbench (the physical floor), and Kinto (a peer), at fixed
concurrencies on one machine in one run. Benchmarks/run.sh installs what is missing, builds,
starts the private PostgreSQL cluster and calls this with its coordinates."""
from __future__ import annotations

import argparse
import datetime
import os
import pathlib
import shutil
import sys
import time

import files
import messaging
import realtime
import report
import streams
from drivers import LoadError, pgbench, wrk
from kinto_peer import AUTHORIZATION, Kinto
import subprocess

from procstats import ProcessGroup, status_mib
from product import PASSWORD, Product, object_id
from web import call, wait_until

HERE = pathlib.Path(__file__).resolve().parent
LUA, SQL = HERE.parent / "wrk", HERE.parent / "pgbench"
# The most a gateway or service process may hold resident while a large body crosses it.
STREAM_RSS_BOUND_MIB = 150


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bin", type=pathlib.Path, required=True, help="folder of the seven executables")
    parser.add_argument("--state", type=pathlib.Path, required=True, help="scratch folder (logs, PKI, scripts)")
    parser.add_argument("--pg-port", required=True)
    parser.add_argument("--pg-password-file", type=pathlib.Path, required=True)
    parser.add_argument("--kinto-venv", type=pathlib.Path, help="virtualenv with kinto[postgresql]; omit to skip Kinto")
    parser.add_argument("--quick", action="store_true", help="one second per case: checks the harness, not the speed")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--connections", default="1,32,128")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--out", type=pathlib.Path)
    parser.add_argument("--cases", help="comma list of product cases to run (default: all); an A/B of two "
                        "builds passes the same list and --bin twice")
    return parser.parse_args()


class Run:
    def __init__(self, options: argparse.Namespace):
        self.options = options
        self.seconds = 1 if options.quick else options.seconds
        self.connections = [int(c) for c in options.connections.split(",")]
        self.buckets = 1000
        self.results: list[dict] = []
        self.streams: list[dict] = []
        self.peak: dict[str, float] = {}
        self.idle: dict[str, float] = {}
        self.database = {"host": "127.0.0.1", "port": options.pg_port, "user": "baas",
                         "password": options.pg_password_file.read_text().strip(), "database": "baas_bench",
                         "kinto_database": "kinto_bench"}
        self.postgres = ProcessGroup("postgresql", self._postmaster(), tree=True)

    def _postmaster(self) -> int:
        pid_file = self.options.state / "pg" / "data" / "postmaster.pid"
        return int(pid_file.read_text().split()[0])

    def settle(self, groups: list[ProcessGroup], timeout: float = 60):
        """Waits until the measured processes are idle, so that work a load generator left in
        flight (a queue of bcrypt logins, say) is not counted in the next case."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            before = sum(group.cpu() for group in groups)
            time.sleep(0.3)
            if sum(group.cpu() for group in groups) - before < 0.03:
                return

    def measure(self, system: str, case: str, connections: int, groups: list[ProcessGroup], load) -> dict:
        self.settle(groups)
        before = {group.name: group.cpu() for group in groups}
        started = time.monotonic()
        figures = load()
        elapsed = time.monotonic() - started
        cpu = {group.name: round((group.cpu() - before[group.name]) * 1000 / max(1, figures["requests"]), 4)
               for group in groups}
        for group in groups:
            self.peak[group.label] = max(self.peak.get(group.label, 0.0), group.peak_rss())
        result = {"system": system, "case": case, "connections": connections, **figures,
                  "seconds": round(elapsed, 2), "cpu_ms_per_request": cpu}
        print(f"  {system:10} {case:20} c={connections:<4} {figures['requests_per_second']:>10,.0f} req/s "
              f"p50 {figures['p50_ms']:.2f} ms p99 {figures['p99_ms']:.2f} ms"
              + (f" ({figures['errors']} errors)" if figures["errors"] else ""), flush=True)
        self.results.append(result)
        return result

    def product_cases(self, product: Product) -> dict[str, tuple[str, dict[str, str]]]:
        plain = {"BENCH_PREFIX": product.prefix().removeprefix(product.url)}
        server = {"BENCH_PREFIX": product.prefix(server=True).removeprefix(product.url)}
        return {
            "get_by_id": ("get_by_id.lua", plain),
            "find": ("find.lua", plain),
            "find_relations": ("find.lua", {**plain, "BENCH_QUERY": "&loadRelations=parts"}),
            "count": ("count.lua", plain),
            "find_acl_user": ("find.lua", {**plain, "BENCH_TABLE": "Secret", "BENCH_TOKEN": product.acl_token}),
            "find_acl_server_key": ("find.lua", {**server, "BENCH_TABLE": "Secret"}),
            "update": ("update.lua", plain),
            "create": ("create.lua", plain),
            "login": ("login.lua", {**plain, "BENCH_LOGIN": product.login_user, "BENCH_PASSWORD": PASSWORD}),
            "hostile": ("hostile.lua", plain),
            "geo_radius": ("geo_radius.lua", plain),
        }

    def run_product_case(self, product: Product, case: str):
        script, env = self.product_cases(product)[case]
        pids = product.pids()
        services = ["gateway", "geo-service"] if case.startswith("geo") else ["gateway", "data-service", "users-service"]
        groups = [ProcessGroup(name, pids[name]) for name in services]
        groups.append(self.postgres)
        env = {"BENCH_LUA_DIR": str(LUA), "BENCH_ROWS": str(self.options.rows), "BENCH_BUCKETS": str(self.buckets), **env}
        refusals = case == "hostile"
        if not self.options.quick:
            self.settle(groups)
            wrk(product.url, LUA / script, 32, 2, env, refusals=refusals)  # warm-up, not recorded
        for connections in self.connections:
            self.measure("product", case, connections, groups,
                         lambda: wrk(product.url, LUA / script, connections, self.seconds, env, refusals=refusals))

    def run_case(self, product: Product, case: str, floor: bool):
        """Runs a product case, and its floor when it has one, unless --cases leaves it out."""
        if self.options.cases and case not in self.options.cases.split(","):
            return
        self.run_product_case(product, case)
        if floor:
            self.run_floor_case(case, product.schema, product.parts_link, product.app_id)
        if case == "get_by_id":
            self.run_single_process_floor(product)

    def record_idle_memory(self, product: Product):
        """Each process's resident set once the product is up and quiet, before any load."""
        groups = [ProcessGroup(name, pid) for name, pid in product.pids().items()]
        self.settle(groups)
        time.sleep(2)
        # RssAnon is the process's own memory; RssFile its mapped code and libraries, clean pages
        # the kernel shares and can drop (most of an idle Swift service's resident set).
        self.idle = {group.name: {field: round(status_mib(group.pid, field), 1) for field in ["VmRSS", "RssAnon", "RssFile"]}
                     for group in groups}
        print("  idle RSS (MiB, anon + file): " + ", ".join(
            f"{name} {mib['VmRSS']} ({mib['RssAnon']} + {mib['RssFile']})" for name, mib in self.idle.items()), flush=True)

    def run_single_process_floor(self, product: Product):
        """GET by id from the smallest Swift server that can answer it (`Benchmarks/Floor`): one
        process, Hummingbird and PostgresNIO, one prepared statement, the same JSON."""
        port = 8089
        env = {**os.environ, "BENCH_FLOOR_PORT": str(port), "BENCH_SCHEMA": product.schema,
               "BENCH_PG_HOST": self.database["host"], "BENCH_PG_PORT": self.database["port"],
               "BENCH_PG_USER": self.database["user"], "BENCH_PG_PASSWORD": self.database["password"],
               "BENCH_PG_DATABASE": self.database["database"]}
        log = open(self.options.state / "logs" / "bench-floor.log", "w")
        process = subprocess.Popen([str(self.options.bin / "bench-floor")], env=env, stdout=log, stderr=log)
        url = f"http://127.0.0.1:{port}"
        try:
            first = f"{url}{product.prefix().removeprefix(product.url)}/data/Item/{object_id(1)}"
            wait_until(lambda: call("GET", first)[0] == 200, 30, "the single-process floor to answer")
            group = ProcessGroup("swift-floor", process.pid)
            env = {"BENCH_LUA_DIR": str(LUA), "BENCH_ROWS": str(self.options.rows), "BENCH_BUCKETS": str(self.buckets),
                   "BENCH_PREFIX": product.prefix().removeprefix(product.url)}
            if not self.options.quick:
                wrk(url, LUA / "get_by_id.lua", 32, 2, env)  # warm-up, not recorded
            for connections in self.connections:
                self.measure("swift-floor", "get_by_id", connections, [group, self.postgres],
                             lambda: wrk(url, LUA / "get_by_id.lua", connections, self.seconds, env))
        finally:
            process.terminate()
            process.wait(timeout=20)

    def run_floor_case(self, case: str, schema: str, parts_link: str, app_id: str):
        connection = {key: self.database[key] for key in ["host", "port", "user", "password", "database"]}
        variables = {"rows": str(self.options.rows), "buckets": str(self.buckets)}
        script = self.options.state / f"{case}.sql"
        script.write_text((SQL / f"{case}.sql").read_text().replace("SCHEMA", schema).replace("PARTS_LINK", parts_link)
                          .replace("APP_ID", app_id))
        for connections in self.connections:
            self.measure("postgresql", case, connections, [self.postgres],
                         lambda: pgbench(script, connections, self.seconds, variables, connection))

    def run_streams(self):
        """A large upload and download through a second product whose files-service is the
        streaming test service (Tests/StreamTestSupport), bodies checked, resident sets bounded."""
        if self.options.cases and not {"stream_upload", "stream_download"} & set(self.options.cases.split(",")):
            return
        product = Product(self.options.bin, self.options.state / "streams", self.database, 8091, port_offset=50,
                          replacing={"files": "stream-test-service"})
        product.env["BAAS_INTERNAL_TIMEOUT_MS"] = "60000"
        size = (64 << 20) if self.options.quick else (1 << 30)
        try:
            product.start(app="bench-streams")
            pids = product.pids()
            self.streams = streams.measure(
                product.prefix(), {"gateway": pids["gateway"], "stream-test-service": pids["files-service"]}, size,
                STREAM_RSS_BOUND_MIB)
        finally:
            product.stop()

    def run_files(self):
        """files-service itself: a large upload and download on local disk and on S3 (moto's
        server, when installed), resident sets bounded; 1 MiB and 100 MiB downloads beside nginx
        serving the same bytes."""
        if self.options.cases and not {"files_large", "files_downloads"} & set(self.options.cases.split(",")):
            return
        size = (64 << 20) if self.options.quick else (2 << 30)
        state = self.options.state / "files"
        shutil.rmtree(state, ignore_errors=True)
        state.mkdir(parents=True)
        moto = files.Moto(state, 8095)
        for backend in ["local", "s3"]:
            if backend == "s3" and not moto.start():
                print("  moto's S3 server is not installed: the S3 transfer is skipped", flush=True)
                continue
            product = Product(self.options.bin, state / backend, self.database, 8092, port_offset=100)
            product.env.update({"BAAS_INTERNAL_TIMEOUT_MS": "60000", "BAAS_FILES_ROOT": str(state / backend / "store")})
            if backend == "local":
                # As docker-compose runs it: the gateway sends downloads from the store itself.
                product.env["BAAS_GATEWAY_FILES_ROOT"] = str(state / backend / "store")
            if backend == "s3":
                product.env.update(moto.environment(f"bench-{int(time.time())}"))
            nginx = files.Nginx(state, 8096)
            try:
                product.start(app=f"bench-files-{backend}")
                self.streams += files.large(product, backend, size, STREAM_RSS_BOUND_MIB)
                if backend == "local":
                    nginx.start()
                    pids = product.pids()
                    groups = {"product": [ProcessGroup(name, pids[name]) for name in ["gateway", "files-service"]],
                              "nginx": [ProcessGroup("nginx", nginx.process.pid, tree=True)]}

                    def record(system, case, connections, size, load):
                        result = self.measure(system, case, connections, groups[system], load)
                        result["mib_per_second"] = round(result["requests_per_second"] * size / (1 << 20), 1)
                    files.downloads(product, nginx, self.seconds, record)
            finally:
                nginx.stop()
                product.stop()
        moto.stop()

    def run_messaging(self, product: Product):
        """Publish → poll through the gateway, beside NATS carrying the same messages (when
        nats-server is installed), at up to 32 publishers: the drivers are Python threads."""
        if self.options.cases and "pubsub" not in self.options.cases.split(","):
            return
        pids = product.pids()
        groups = [ProcessGroup(name, pids[name]) for name in ["gateway", "messaging-service"]] + [self.postgres]
        nats = messaging.Nats(8097)
        for connections in [c for c in self.connections if c <= 32]:
            self.measure("product", "pubsub", connections, groups,
                         lambda: messaging.product(product.prefix(), connections, self.seconds, channel=f"bench{connections}"))
        try:
            if not nats.start():
                print("  nats-server is not installed: the NATS floor is skipped", flush=True)
                return
            for connections in [c for c in self.connections if c <= 32]:
                self.measure("nats", "pubsub", connections, [ProcessGroup("nats", nats.process.pid)],
                             lambda: nats.measure(connections, self.seconds))
        finally:
            nats.stop()

    def run_realtime(self, product: Product):
        """Commit throughput with change events (NOTIFY as before, the logical message unwatched
        and watched) and delivery to many subscribed sockets (realtime.py)."""
        if self.options.cases and "realtime" not in self.options.cases.split(","):
            return
        self.realtime = realtime.measure(self, product, self.options.quick)

    def run_peer(self):
        kinto = Kinto(self.options.kinto_venv, self.options.state, self.database, 8890)
        kinto_rows = 1_000 if self.options.quick else 10_000
        try:
            kinto.start()
            kinto.seed(kinto_rows, self.buckets)
            groups = [ProcessGroup("kinto", kinto.process.pid), self.postgres]
            self.settle(groups)
            env = {"BENCH_LUA_DIR": str(LUA), "BENCH_AUTHORIZATION": AUTHORIZATION, "BENCH_KINTO_ROWS": str(kinto_rows),
                   "BENCH_BUCKETS": str(self.buckets)}
            for case in ["kinto_get", "kinto_create"]:
                if not self.options.quick:
                    wrk(kinto.url, LUA / f"{case}.lua", 32, 2, env, allow_errors=True)
                # Kinto refuses concurrent writes to one collection within the same millisecond
                # (a unique index on its timestamps); those answers are counted, not hidden.
                for connections in self.connections:
                    self.measure("kinto", case, connections, groups,
                                 lambda: wrk(kinto.url, LUA / f"{case}.lua", connections, self.seconds, env, allow_errors=True))
        finally:
            kinto.stop()

    def execute(self) -> int:
        started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        product = Product(self.options.bin, self.options.state, self.database, 8090)
        if self.options.quick:
            product.env["BAAS_USERS_BCRYPT_COST"] = "4"
        product.env["BAAS_INTERNAL_TIMEOUT_MS"] = "60000"
        try:
            print("starting the product and seeding", flush=True)
            product.start()
            self.record_idle_memory(product)
            product.seed(self.options.rows, self.buckets)
            # Reads first, each beside its floor, on the table as seeded; then the writes and
            # their floors; login last, since it ends the ACL user's other sessions.
            for case in ["get_by_id", "find", "find_relations", "count", "geo_radius"]:
                self.run_case(product, case, floor=True)
            for case in ["find_acl_user", "find_acl_server_key", "hostile"]:
                self.run_case(product, case, floor=False)
            for case in ["update", "create"]:
                self.run_case(product, case, floor=True)
            self.run_case(product, "login", floor=False)
            print("messaging", flush=True)
            self.run_messaging(product)
            print("real-time", flush=True)
            self.run_realtime(product)
        finally:
            product.stop()
        print("large bodies", flush=True)
        self.run_streams()
        print("files", flush=True)
        self.run_files()
        if self.options.kinto_venv:
            print("Kinto", flush=True)
            self.run_peer()
        run = {"started": started, "mode": "quick" if self.options.quick else "full", "seconds": self.seconds,
               "rows": self.options.rows, "machine": machine(), "results": self.results, "peak_rss_mib": self.peak, "idle_rss_mib": self.idle, "streams": self.streams}
        out = self.options.out or (self.options.state / "results" if self.options.quick else HERE.parent / "results")
        data, table = report.write(run, out)
        print(table.read_text())
        print(f"results: {data} and {table}")
        over = [r["case"] for r in self.streams if r["over_bound"]]
        if over and not self.options.quick:
            # The quick mode's debug build says nothing about memory; a full run holds the bound.
            print(f"benchmark failed: {', '.join(over)} went over {STREAM_RSS_BOUND_MIB} MiB resident", file=sys.stderr)
            return 1
        return 0


def machine() -> str:
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    memory = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal"))
    return f"{os.cpu_count()} × {model}, {memory / 1024 / 1024:.0f} GiB"


if __name__ == "__main__":
    try:
        sys.exit(Run(arguments()).execute())
    except LoadError as error:
        print(f"benchmark failed: {error}", file=sys.stderr)
        sys.exit(1)
