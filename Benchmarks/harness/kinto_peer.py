"""Kinto, the peer: started from the venv the run script prepared, on its own database of the
benchmark's cluster, with a bucket, a collection and `rows` records r1…rN."""
from __future__ import annotations

import base64
import pathlib
import subprocess

from web import call, wait_until

AUTHORIZATION = "Basic " + base64.b64encode(b"bench:bench-secret").decode()


class Kinto:
    def __init__(self, venv: pathlib.Path, state: pathlib.Path, database: dict[str, str], port: int):
        self.venv, self.state, self.port = venv, state, port
        self.url = f"http://127.0.0.1:{port}"
        template = (pathlib.Path(__file__).parents[1] / "kinto.ini").read_text()
        database_url = (f"postgresql://{database['user']}:{database['password']}@{database['host']}:"
                        f"{database['port']}/{database['kinto_database']}")
        self.ini = state / "kinto.ini"
        self.ini.write_text(template.replace("@PORT@", str(port)).replace("@DATABASE_URL@", database_url))
        self.process: subprocess.Popen | None = None

    def start(self):
        kinto = str(self.venv / "bin" / "kinto")
        subprocess.run([kinto, "migrate", "--ini", str(self.ini)], check=True, capture_output=True)
        log = open(self.state / "logs" / "kinto.log", "w")
        self.process = subprocess.Popen([kinto, "start", "--ini", str(self.ini)], stdout=log, stderr=log)
        wait_until(lambda: call("GET", self.url + "/v1/__heartbeat__")[0] == 200, 60, "Kinto")

    def seed(self, rows: int, buckets: int):
        headers = {"Authorization": AUTHORIZATION}
        call("PUT", self.url + "/v1/buckets/bench", {}, headers)
        call("PUT", self.url + "/v1/buckets/bench/collections/items", {}, headers)
        for start in range(1, rows + 1, 500):
            requests = [{"path": f"/buckets/bench/collections/items/records/r{n}",
                         "body": {"data": {"k": n % buckets, "name": f"item {n}"}}}
                        for n in range(start, min(rows, start + 499) + 1)]
            _, answer = call("POST", self.url + "/v1/batch", {"defaults": {"method": "PUT"}, "requests": requests}, headers)
            if any(not 200 <= item["status"] < 300 for item in answer["responses"]):
                raise RuntimeError("Kinto refused part of a seeding batch")

    def stop(self):
        if self.process:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
