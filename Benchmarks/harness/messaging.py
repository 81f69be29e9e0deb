"""Pub/sub delivery: messages published through the gateway and polled back by a subscription,
beside NATS (Debian's nats-server, driven by PyPI's nats-py) carrying the same messages on the
same machine in the same run. Every message carries the time it was published; the delivery
latency is the time its subscriber got it minus that. Publishers wait for each publish to be
acknowledged (the product's answer; NATS's PONG after a flush), so both sides do the same work.
Both drivers are Python: their figures include the driver's own cost, which is why the table
reports the NATS floor measured by the same kind of driver."""
from __future__ import annotations

import asyncio
import http.client
import json
import shutil
import socket
import subprocess
import threading
import time
import urllib.parse

from drivers import LoadError
from web import call


def _percentiles(latencies: list[float]) -> tuple[float, float]:
    if not latencies:
        raise LoadError("no message was delivered")
    ordered = sorted(latencies)
    return ordered[len(ordered) // 2], ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def _figures(published: int, latencies: list[float], seconds: float) -> dict:
    p50, p99 = _percentiles(latencies)
    return {"requests_per_second": len(latencies) / seconds, "p50_ms": p50, "p99_ms": p99, "requests": published,
            "errors": published - len(latencies)}


def product(prefix: str, publishers: int, seconds: float, channel: str = "bench") -> dict:
    """Publishes from `publishers` threads for `seconds`, one subscription polling; delivered
    messages per second and publish-to-delivery latency."""
    _, subscribed = call("POST", f"{prefix}/messaging/{channel}/subscribe", {})
    subscription = subscribed["subscriptionId"]
    url = urllib.parse.urlsplit(prefix)
    path = url.path
    deadline = time.time() + seconds
    published = [0] * publishers
    latencies: list[float] = []
    failures: list[str] = []

    def publish(index: int):
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
        while time.time() < deadline:
            body = json.dumps({"message": {"t": time.time()}, "publishPolicy": "PUBSUB"})
            connection.request("POST", f"{path}/messaging/{channel}", body, {"Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                failures.append(f"publish answered {response.status}")
                return
            published[index] += 1

    def poll():
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
        # Until every publisher is done and a poll comes back empty.
        while True:
            connection.request("GET", f"{path}/messaging/{channel}/{subscription}")
            response = connection.getresponse()
            answer = json.loads(response.read())
            now = time.time()
            messages = answer.get("messages", [])
            latencies.extend((now - message["data"]["t"]) * 1000 for message in messages)
            if not messages and time.time() > deadline + 0.5:
                return

    threads = [threading.Thread(target=publish, args=(index,)) for index in range(publishers)]
    threads.append(threading.Thread(target=poll))
    started = time.time()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise LoadError(failures[0])
    return _figures(sum(published), latencies, time.time() - started)


class Nats:
    """nats-server on a loopback port, for as long as the benchmark needs it."""

    def __init__(self, port: int):
        self.port = port
        self.process = None

    def start(self) -> bool:
        executable = shutil.which("nats-server")
        if not executable:
            return False
        self.process = subprocess.Popen([executable, "-a", "127.0.0.1", "-p", str(self.port)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return True
            except OSError:
                time.sleep(0.05)
        raise LoadError("nats-server did not start")

    def stop(self):
        if self.process:
            self.process.terminate()
            self.process.wait()

    def measure(self, publishers: int, seconds: float, subject: str = "bench") -> dict:
        return asyncio.run(self._measure(publishers, seconds, subject))

    async def _measure(self, publishers: int, seconds: float, subject: str) -> dict:
        import nats

        latencies: list[float] = []
        subscriber = await nats.connect(f"nats://127.0.0.1:{self.port}")

        async def received(message):
            latencies.append((time.time() - json.loads(message.data)["t"]) * 1000)

        await subscriber.subscribe(subject, cb=received)
        await subscriber.flush()
        deadline = time.time() + seconds
        published = [0] * publishers

        async def publish(index: int):
            connection = await nats.connect(f"nats://127.0.0.1:{self.port}")
            while time.time() < deadline:
                await connection.publish(subject, json.dumps({"t": time.time()}).encode())
                await connection.flush()
                published[index] += 1
            await connection.close()

        started = time.time()
        await asyncio.gather(*(publish(index) for index in range(publishers)))
        await subscriber.flush()
        await asyncio.sleep(0.5)
        await subscriber.close()
        return _figures(sum(published), latencies, time.time() - started - 0.5)
