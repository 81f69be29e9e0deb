"""Real-time data change events (issue 17), two measurements.

Commit throughput: the product's create statement as pgbench runs it at 32 connections, three
ways — with the `pg_notify` the engine used to send in the writing transaction (NOTIFY takes a
cluster-wide lock at commit), with the logical message it sends now on a table nobody watches
(a primary-key probe), and on a watched table while the product's own relay decodes the slot,
copies every event into its change log and a subscriber's where clause is tested on each.

Delivery: N sockets (10,000; 200 in the quick mode) speak the Backendless RT protocol to the
gateway (Engine.IO 4 / Socket.IO 5 framing written here over PyPI's `websockets`), each
subscribed to `created` on one of 100 tables with a where clause selecting its own slot, so every
change reaches one socket. Resident memory of the gateway and messaging-service is read before
and after they connect (per idle connection). Then pgbench commits R changes a second (1,000;
100 quick) spread over the 100 tables with the product's own create statement — the REST create
path peaks below that on this machine, and it is the delivery that is measured — and each socket
records when its event arrives: latency is arrival minus the object's `created` (the commit's
transaction start, by the database's clock on the same machine)."""
from __future__ import annotations

import asyncio
import json
import pathlib
import threading
import time

from drivers import LoadError, pgbench
from procstats import status_mib
from web import call

TABLES = 100

CREATE = """\\set s random(0, {slots} - 1)
WITH w AS (INSERT INTO {schema}."{table}" AS t ("objectId", "ownerId", slot)
  VALUES (upper(gen_random_uuid()::text), NULL, :s) RETURNING t.*)
SELECT o.object::text, {event}
FROM (SELECT row_to_json(r) AS object FROM (SELECT t."objectId", (extract(epoch from t.created) * 1000)::bigint AS created,
  (extract(epoch from t.updated) * 1000)::bigint AS updated, t."ownerId", t.slot, '{table}'::text AS "___class"
  FROM w t) r) o;
"""
EMIT = ("CASE WHEN EXISTS (SELECT 1 FROM data.watched_tables WHERE app_id = '{app}' AND table_name = '{table}' "
        "AND watched_until > now()) THEN pg_logical_emit_message(true, 'baas.data/{app}/{table}', "
        "json_build_object('event', 'created', 'object', o.object)::text) END")
NOTIFY = ("pg_notify('baas_data_changes', json_build_object('app', '{app}', 'table', '{table}', 'operation', 'create', "
          "'ids', json_build_array(o.object->>'objectId'))::text)")


def script(state: pathlib.Path, name: str, schema: str, app: str, table: str, event: str, slots: int = 100) -> pathlib.Path:
    """The create statement on `table` with a random `slot` below `slots`, ending with `event`."""
    path = state / f"{name}.sql"
    path.write_text(CREATE.format(slots=slots, schema=schema, table=table,
                                  event=event.format(app=app, table=table)))
    return path


def create_tables(product, names: list[str]):
    for name in names:
        call("POST", product.prefix(server=True) + f"/data/{name}/properties", [{"name": "slot", "type": "INT"}])


class Socket:
    """One RT client: connects, joins the app's namespace, subscribes, answers pings, and
    records the latency of every event it receives."""

    def __init__(self, url: str, app: str, table: str, slot: int, latencies: list[float]):
        self.url, self.app, self.table, self.slot, self.latencies = url, app, table, slot, latencies
        self.connection = None

    async def open(self):
        import websockets

        self.connection = await websockets.connect(self.url, compression=None, ping_interval=None, max_size=1 << 20,
                                                   open_timeout=120, close_timeout=5)
        opened = await self.connection.recv()
        if not opened.startswith("0{"):
            raise LoadError(f"not an Engine.IO open packet: {opened[:80]}")
        await self.connection.send(f"40/{self.app},")
        await self._until(lambda text: text.startswith(f"40/{self.app},"))
        options = {"event": "created", "tableName": self.table, "whereClause": f"slot = {self.slot}"}
        await self.connection.send(f'42/{self.app},' + json.dumps(["SUB_ON", {"id": "s", "name": "OBJECTS_CHANGES",
                                                                               "options": options}]))
        await self._until(lambda text: '"SUB_READY"' in text)

    async def _until(self, accepted) -> str:
        while True:
            text = await self.connection.recv()
            if text == "2":
                await self.connection.send("3")
            elif accepted(text):
                return text
            elif text.startswith("44") or '"error"' in text:
                raise LoadError(f"refused: {text[:200]}")

    async def listen(self):
        import websockets

        namespace = f"42/{self.app},"
        try:
            async for text in self.connection:
                if text == "2":
                    await self.connection.send("3")
                elif text.startswith(namespace + '["SUB_RES",'):
                    arrived = time.time() * 1000
                    self.latencies.append(arrived - json.loads(text[len(namespace):])[1]["data"]["created"])
        except websockets.ConnectionClosed:
            pass  # the harness closes every socket at the end; a socket lost earlier shows as lost events


class Sockets:
    """N sockets on their own event loop thread, so the harness's other drivers run beside them."""

    def __init__(self, url: str, app: str, key: str, tables: list[str], count: int):
        self.url = url.replace("http://", "ws://") + f"/{app}/?EIO=4&transport=websocket&apiKey={key}"
        self.latencies: list[float] = []
        # Socket i listens to table i mod T, slot i div T: each (table, slot) pair has one socket.
        self.slots = max(1, count // len(tables))
        self.sockets = [Socket(self.url, app, tables[i % len(tables)], i // len(tables), self.latencies)
                        for i in range(count)]
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine, timeout: float):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def open(self, concurrency: int = 100) -> float:
        """Connects and subscribes every socket (`concurrency` at a time); seconds it took."""
        started = time.monotonic()

        async def open_all():
            gate = asyncio.Semaphore(concurrency)

            async def one(socket: Socket):
                async with gate:
                    await socket.open()
                asyncio.ensure_future(socket.listen())

            await asyncio.gather(*(one(socket) for socket in self.sockets))

        self.run(open_all(), 1800)
        return time.monotonic() - started

    def close(self):
        async def close_all():
            await asyncio.gather(*(s.connection.close() for s in self.sockets if s.connection), return_exceptions=True)
        try:
            self.run(close_all(), 120)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)


def rss(pids: dict[str, int]) -> dict[str, float]:
    return {name: status_mib(pid, "VmRSS") for name, pid in pids.items()}


def measure(run, product, quick: bool) -> list[dict]:
    """Both measurements; results in the harness's shape (`run.measure` for the timed loads)."""
    from procstats import ProcessGroup

    state = run.options.state / "realtime"
    state.mkdir(parents=True, exist_ok=True)
    connection = {key: run.database[key] for key in ["host", "port", "user", "password", "database"]}
    pids = product.pids()
    groups = [ProcessGroup(name, pids[name]) for name in ["gateway", "messaging-service"]] + [run.postgres]
    app, schema = product.app_id, product.schema
    tables = [f"Rt{i}" for i in range(TABLES)]
    create_tables(product, tables + ["RtCommit"])

    # Commit throughput, three ways.
    notify = script(state, "commit_notify", schema, app, "RtCommit", NOTIFY)
    emit = script(state, "commit_emit", schema, app, "RtCommit", EMIT)
    for case, path in [("commit_notify", notify), ("commit_unwatched", emit)]:
        run.measure("postgresql", case, 32, [run.postgres], lambda: pgbench(path, 32, run.seconds, {}, connection))
    watcher = Sockets(product.url, app, product.rest_key, ["RtCommit"], 1)
    watcher.sockets[0].slot = -1  # matches nothing: every event is relayed, logged, read and tested, none sent
    watcher.open()
    try:
        run.measure("product", "commit_watched", 32, groups, lambda: pgbench(emit, 32, run.seconds, {}, connection))
    finally:
        watcher.close()

    # Delivery to N sockets.
    count, rate = (200, 100) if quick else (10_000, 1_000)
    before = rss({"gateway": pids["gateway"], "messaging-service": pids["messaging-service"]})
    sockets = Sockets(product.url, app, product.rest_key, tables, count)
    try:
        connect_seconds = sockets.open()
        time.sleep(5)
        after = rss({"gateway": pids["gateway"], "messaging-service": pids["messaging-service"]})
        per_connection = {name: round((after[name] - before[name]) * 1024 / count, 1) for name in before}
        scripts = [script(state, f"deliver_{t}", schema, app, t, EMIT, slots=sockets.slots) for t in tables]

        def deliver() -> dict:
            sockets.latencies.clear()
            started = time.monotonic()
            figures = pgbench_rate(scripts, rate, run.seconds, connection)
            seconds = time.monotonic() - started
            time.sleep(2)  # events still in flight
            latencies = sorted(sockets.latencies)
            if not latencies:
                raise LoadError("no change event was delivered")
            return {"requests_per_second": len(latencies) / seconds, "p50_ms": latencies[len(latencies) // 2],
                    "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
                    "requests": figures["requests"], "errors": figures["requests"] - len(latencies)}

        result = run.measure("product", "rt_delivery", count, groups, deliver)
        result.update({"sockets": count, "changes_per_second": rate, "connect_seconds": round(connect_seconds, 1),
                       "rss_before_mib": before, "rss_after_mib": after, "kib_per_idle_connection": per_connection})
        print(f"  {count} sockets connected in {connect_seconds:.0f} s; idle KiB per connection: {per_connection}", flush=True)
        return [result]
    finally:
        sockets.close()


def pgbench_rate(scripts: list[pathlib.Path], rate: int, seconds: float, connection: dict[str, str]) -> dict:
    """pgbench at a fixed `rate` of transactions a second, each one of `scripts` at random."""
    import os
    import re
    import subprocess

    command = ["pgbench", "-n", "-M", "prepared", "-c", "8", "-j", "2", "-R", str(rate), "-T", str(max(3, round(seconds))),
               "-h", connection["host"], "-p", connection["port"], "-U", connection["user"], connection["database"]]
    for path in scripts:
        command += ["-f", f"{path}@1"]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PGPASSWORD": connection["password"]})
    if done.returncode != 0:
        raise LoadError(f"pgbench failed: {done.stderr}")
    processed = re.search(r"number of transactions actually processed: (\d+)", done.stdout)
    return {"requests": int(processed.group(1)) if processed else 0}
