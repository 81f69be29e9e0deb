"""The whole system as separate processes, for fault and soak runs: Deploy/dev.sh (its own
PostgreSQL cluster, all seven executables under supervision) with a state folder and ports of its
own, plus what a run needs to break it: a service's process by name, PostgreSQL's stop and start, a
second gateway, each process' resident memory."""
import json
import os
import pathlib
import signal
import subprocess
import time
import urllib.request

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
BACKENDS = ["users-service", "data-service", "relations-service", "messaging-service", "files-service", "geo-service"]


class DevSystem:
    """Deploy/dev.sh under `state` (relative to the repository), PostgreSQL on `pg_port`, the
    gateway on `gateway_port`; `environment` is added to every process's."""

    def __init__(self, state, pg_port, gateway_port, configuration="debug", environment=None):
        self.state = REPOSITORY / state
        self.pg_port = pg_port
        self.gateway_port = gateway_port
        self.configuration = configuration
        self.environment = environment or {}
        self.process = None
        self.keys = {}

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *_):
        self.stop()

    def start(self, timeout=900):
        env_file = self.state / "dev.env"
        if env_file.exists():
            env_file.unlink()
        environment = dict(os.environ, BAAS_DEV_STATE=str(self.state), BAAS_DEV_ENV_FILE=str(env_file),
                           BAAS_DEV_POSTGRES_PORT=str(self.pg_port), BAAS_GATEWAY_PORT=str(self.gateway_port),
                           BAAS_DEV_SMTP_PORT=str(self.gateway_port + 1), BAAS_LOG_LEVEL="warning", **self.environment)
        self.state.mkdir(parents=True, exist_ok=True)
        self.log = open(self.state / "dev.out", "w")
        self.process = subprocess.Popen(
            ["bash", "Deploy/dev.sh", self.configuration], cwd=REPOSITORY, env=environment,
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while not env_file.exists():
            if self.process.poll() is not None:
                raise RuntimeError(f"Deploy/dev.sh exited: see {self.state / 'dev.out'}")
            if time.monotonic() > deadline:
                raise RuntimeError("the system did not become ready")
            time.sleep(0.5)
        line = env_file.read_text().replace("export ", "").split()
        self.keys = dict(item.split("=", 1) for item in line)
        self.url = self.keys["BAAS_URL"]
        self.app = self.keys["BAAS_APP_ID"]

    def stop(self):
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.process = None
        # dev.sh stops PostgreSQL on its way out, but not when it is killed above, and the
        # cluster a fault restarted is no child of it: never leave it holding the port.
        self.postgres("pg_stop")

    def prefix(self, key="BAAS_SERVER_KEY"):
        return f"/{self.app}/{self.keys[key]}"

    # Processes

    def pid(self, executable):
        """The pid of the running `executable serve` started by this system, or None."""
        for entry in pathlib.Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                command = (entry / "cmdline").read_bytes().split(b"\0")
                environment = (entry / "environ").read_bytes()
            except OSError:
                continue
            if (len(command) >= 2 and command[0].endswith(b"/" + executable.encode()) and command[1] == b"serve"
                    and f"BAAS_DEV_STATE={self.state}".encode() in environment):
                return int(entry.name)
        return None

    def binary(self, executable):
        return os.readlink(f"/proc/{self.pid(executable)}/exe")

    def resident_kib(self, executable):
        """The process's resident memory in KiB (VmRSS)."""
        pid = self.pid(executable)
        if pid is None:
            return None
        for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return None

    # PostgreSQL

    def postgres(self, action):
        """Stops (`pg_stop`) or starts (`pg_start`) the system's PostgreSQL cluster."""
        arguments = f'"{self.state}/pg"' + (f" {self.pg_port}" if action == "pg_start" else "")
        subprocess.run(["bash", "-c", f"source Deploy/lib/common.sh && {action} {arguments}"], cwd=REPOSITORY,
                       check=True, stdout=subprocess.DEVNULL)

    # A second gateway

    def second_gateway(self, port, environment=None):
        """Starts another gateway process over the same database and services on `port`."""
        password = (self.state / "pg" / "password").read_text().strip()
        variables = dict(os.environ, BAAS_POSTGRES_HOST="127.0.0.1", BAAS_POSTGRES_PORT=str(self.pg_port),
                         BAAS_POSTGRES_USER="baas", BAAS_POSTGRES_DATABASE="baas", BAAS_POSTGRES_PASSWORD=password,
                         BAAS_PKI_DIR=str(self.state / "pki"), BAAS_GATEWAY_PORT=str(port), BAAS_OPS_PORT=str(port + 1),
                         BAAS_GATEWAY_DEFAULT_APP_ID=self.app, BAAS_LOG_LEVEL="warning", **self.environment,
                         **(environment or {}))
        log = open(self.state / "logs" / "gateway-2.log", "w")
        process = subprocess.Popen([self.binary("gateway"), "serve"], env=variables, stdout=log, stderr=log)
        url = f"http://127.0.0.1:{port}"
        for _ in range(240):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port + 1}/ready", timeout=2) as answer:
                    if answer.status == 200:
                        return process, url
            except OSError:
                pass
            time.sleep(0.25)
        process.kill()
        raise RuntimeError("the second gateway did not become ready")


def request(url, method="GET", body=None, headers=None, timeout=30):
    """(status, parsed JSON or text) of one request; a connection failure is status 0."""
    data = None if body is None else json.dumps(body).encode()
    hs = {"content-type": "application/json"} if data is not None else {}
    hs.update(headers or {})
    call = urllib.request.Request(url, data=data, method=method, headers=hs)
    try:
        with urllib.request.urlopen(call, timeout=timeout) as answer:
            return answer.status, parse(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, parse(error.read())
    except OSError as error:
        return 0, str(error)


def parse(raw):
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")
