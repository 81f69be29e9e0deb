"""The product under test: the seven executables on their own ports, one app, and the seeded
tables — `Item` (plain) and `Secret` (object ACLs and an owner policy), each with an indexed
column `k` — plus the users the login and ACL cases act as."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess

from web import call, wait_until

BACKENDS = ["users", "data", "relations", "messaging", "files", "geo"]
RPC_BASE, OPS_BASE = 8200, 9200
PASSWORD = "bench-password-1"


def object_id(n: int) -> str:
    """The seeded objects' ids, as common.lua and the pgbench scripts spell them."""
    return f"00000000-0000-4000-8000-{n:012d}"


class Product:
    def __init__(self, bin_dir: pathlib.Path, state: pathlib.Path, database: dict[str, str], gateway_port: int,
                 port_offset: int = 0, replacing: dict[str, str] | None = None):
        """`replacing` runs another executable in a backend's place (`{"files": "stream-test-service"}`);
        `port_offset` moves every port, so two products can run side by side."""
        self.bin, self.state, self.database = bin_dir, state, database
        self.url = f"http://127.0.0.1:{gateway_port}"
        self.port_offset, self.replacing = port_offset, replacing or {}
        self.processes: dict[str, subprocess.Popen] = {}
        self.env = {
            **os.environ,
            "BAAS_POSTGRES_HOST": database["host"], "BAAS_POSTGRES_PORT": database["port"],
            "BAAS_POSTGRES_USER": database["user"], "BAAS_POSTGRES_PASSWORD": database["password"],
            "BAAS_POSTGRES_DATABASE": database["database"], "BAAS_PKI_DIR": str(state / "pki"),
            "BAAS_GATEWAY_PORT": str(gateway_port), "BAAS_GATEWAY_HOST": "127.0.0.1", "BAAS_LOG_LEVEL": "warning",
            # The login case measures bcrypt, not the limiter.
            "BAAS_USERS_LOGIN_ATTEMPTS_PER_MINUTE": "100000000",
            "BAAS_USERS_LOGIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE": "100000000",
        }
        for index, service in enumerate(BACKENDS, start=1):
            self.env[f"BAAS_PEER_{service.upper()}_URL"] = f"https://127.0.0.1:{RPC_BASE + port_offset + index}"

    def _run(self, executable: str, *arguments: str) -> str:
        return subprocess.run([str(self.bin / executable), *arguments], env=self.env, check=True,
                              capture_output=True, text=True).stdout

    def executable(self, service: str) -> str:
        return self.replacing.get(service, f"{service}-service")

    def start(self, app: str = "bench"):
        """Migrates, creates the app, starts everything and waits until the gateway says ready."""
        self._run("gateway", "pki-init", str(self.state / "pki"))
        for service in BACKENDS:
            self._run(self.executable(service), "migrate")
        created = dict(re.findall(r"^(BAAS_\w+)=(\S+)$", self._run("users-service", "apps", "create", app), re.M))
        self.app_id, self.rest_key, self.server_key = created["BAAS_APP_ID"], created["BAAS_REST_KEY"], created["BAAS_SERVER_KEY"]
        (self.state / "logs").mkdir(parents=True, exist_ok=True)
        for index, name in enumerate([f"{s}-service" for s in BACKENDS] + ["gateway"]):
            env = {**self.env, "BAAS_OPS_PORT": str(OPS_BASE + self.port_offset + (index + 1 if name != "gateway" else 0))}
            if name != "gateway":
                env["BAAS_RPC_PORT"] = str(RPC_BASE + self.port_offset + index + 1)
            executable = self.executable(name.removesuffix("-service")) if name != "gateway" else name
            log = open(self.state / "logs" / f"{name}.log", "w")
            self.processes[name] = subprocess.Popen([str(self.bin / executable), "serve"], env=env, stdout=log, stderr=log)
        wait_until(lambda: call("GET", self.prefix() + "/info")[1].get("ready") is True, 120, "the services to be ready")

    def stop(self):
        for process in self.processes.values():
            process.terminate()
        for process in self.processes.values():
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()

    def prefix(self, server: bool = False) -> str:
        return f"{self.url}/{self.app_id}/{self.server_key if server else self.rest_key}"

    @property
    def schema(self) -> str:
        return "app_" + "".join(c for c in self.app_id.lower() if c in "0123456789abcdef")

    def sql(self, text: str) -> str:
        return subprocess.run(["psql", "-h", self.database["host"], "-p", self.database["port"], "-U", self.database["user"],
                               "-d", self.database["database"], "-v", "ON_ERROR_STOP=1", "-qAt", "-c", text], check=True,
                              env={**os.environ, "PGPASSWORD": self.database["password"]}, capture_output=True,
                              text=True).stdout.strip()

    def seed(self, rows: int, buckets: int):
        """Both tables with `rows` objects (k = n mod `buckets`), the users, the ACLs."""
        self.acl_user = self.register("bench-acl@example.com")
        self.login_user = "bench-login@example.com"
        self.register(self.login_user)
        for table in ["Item", "Secret"]:
            call("POST", self.prefix(server=True) + f"/data/{table}/properties",
                 [{"name": "k", "type": "INT", "indexed": True}, {"name": "name", "type": "STRING"}])
            owner = f"CASE WHEN g % 10 = 0 THEN '{self.acl_user}' END" if table == "Secret" else "NULL"
            self.sql(f"""INSERT INTO {self.schema}."{table}" ("objectId", k, name, "ownerId")
                SELECT '00000000-0000-4000-8000-' || lpad(g::text, 12, '0'), g % {buckets}, 'item ' || g, {owner}
                FROM generate_series(1, {rows}) g""")
        # Secret: the user owns every tenth object (owner policy GRANT), every tenth other one
        # is denied to all authenticated users, every hundredth granted to the user by name.
        call("PUT", self.prefix(server=True) + "/data/Secret/permissions/owner/GRANT", {"permission": "FIND"})
        self.sql(f"""INSERT INTO data.object_acl (app_id, table_name, object_id, operation, principal_kind, principal, decision)
            SELECT '{self.app_id}', 'secret', '00000000-0000-4000-8000-' || lpad(g::text, 12, '0'), 'Find', p.kind, p.name, p.decision
            FROM generate_series(1, {rows}) g,
                 (VALUES ('role', 'AuthenticatedUser', 'DENY', 1, 10), ('user', '{self.acl_user}', 'GRANT', 2, 100))
                 p(kind, name, decision, remainder, modulus)
            WHERE g % p.modulus = p.remainder""")
        self.seed_parts(rows)
        self.seed_geo(rows)
        self.sql(f'ANALYZE {self.schema}."Item"; ANALYZE {self.schema}."Secret"; ANALYZE data.object_acl')
        _, session = call("POST", self.prefix() + "/users/login", {"login": "bench-acl@example.com", "password": PASSWORD})
        self.acl_token = session["user-token"]

    def seed_parts(self, rows: int):
        """`Part` (a tenth as many rows as `Item`) and the 1:N relation `Item.parts`: every item
        links three parts, for the find with relations at depth 1."""
        call("POST", self.prefix(server=True) + "/data/Part/properties", [{"name": "name", "type": "STRING"}])
        call("POST", self.prefix(server=True) + "/data/Item/properties",
             [{"name": "parts", "type": "DATA_REF", "relatedTable": "Part", "cardinality": "n"}])
        parts = max(rows // 10, 1)
        self.sql(f"""INSERT INTO {self.schema}."Part" ("objectId", name)
            SELECT 'part-' || g, 'part ' || g FROM generate_series(1, {parts}) g""")
        self.parts_link = self.sql(f"""SELECT link_table FROM data.columns
            WHERE app_id = '{self.app_id}' AND table_name = 'Item' AND name = 'parts'""")
        self.sql(f"""INSERT INTO {self.schema}."{self.parts_link}" (parent, child)
            SELECT '00000000-0000-4000-8000-' || lpad(g::text, 12, '0'), 'part-' || ((g * 3 + k) % {parts} + 1)
            FROM generate_series(1, {rows}) g, generate_series(0, 2) k ORDER BY g, k""")
        self.sql(f'ANALYZE {self.schema}."Part"; ANALYZE {self.schema}."{self.parts_link}"')

    def seed_geo(self, rows: int):
        """`rows` geo points spread evenly over latitudes -60..60, in the Default category (the
        radius search's centers, `k` in 0..43199, are the same formula in Lua and pgbench)."""
        self.sql(f"""INSERT INTO geo.points (app_id, object_id, location, categories, created)
            SELECT '{self.app_id}', 'geo-' || g,
                public.ST_SetSRID(public.ST_MakePoint(random() * 360 - 180, degrees(asin(random() * 2 * sin(radians(60)) - sin(radians(60))))), 4326)::public.geography,
                ARRAY['Default'], g FROM generate_series(1, {rows}) g""")
        self.sql("ANALYZE geo.points")

    def register(self, email: str) -> str:
        _, user = call("POST", self.prefix() + "/users/register", {"email": email, "password": PASSWORD})
        return user["objectId"]

    def pids(self) -> dict[str, int]:
        return {name: process.pid for name, process in self.processes.items()}
