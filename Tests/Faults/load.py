"""A mixed load on a running system, from threads each holding a keep-alive connection: writes
and reads of data objects, relations, user-token checks and logins, publishing, geo and file
listings. Every answer is recorded (when, which service owns the path, status, how long, whether a
failure carried the error envelope), and every acknowledged write's id kept, to read back."""
import http.client
import json
import random
import threading
import time
import urllib.parse

TABLE = "FaultLoad"
# Accounts the soak logs in as, in turn.
ACCOUNTS = 6


def prepare(system):
    """The fixtures the load needs: the table with a relation column, a user, a file, a category.

    dev.sh reports the system up once the default app exists, while a service may still be
    starting: each fixture is retried until it is made (within two minutes), never assumed.
    """
    from system import request
    prefix = system.url + system.prefix()
    made(lambda: request(prefix + f"/data/{TABLE}/properties", "POST",
                         [{"name": "n", "type": "INT"}, {"name": "rel", "type": "DATA_REF", "relatedTable": TABLE}]),
         also=(400,))  # 1024: a second run finds the columns there
    for account in ["load"] + [f"load{n}" for n in range(ACCOUNTS)]:
        made(lambda: request(prefix + "/users/register", "POST", {"email": f"{account}@example.com", "password": "pw"}),
             also=(409,))
    status, login = made(lambda: request(prefix + "/users/login", "POST", {"login": "load@example.com", "password": "pw"}))
    made(lambda: request(prefix + "/geo/categories/load", "PUT"))
    boundary = "load"
    body = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nload\r\n'
            f"--{boundary}--\r\n").encode()

    def upload():
        connection = http.client.HTTPConnection(system.url.removeprefix("http://"), timeout=30)
        try:
            connection.request("POST", system.prefix() + "/files/load/a.txt?overwrite=true", body,
                               {"content-type": f"multipart/form-data; boundary={boundary}"})
            answer = connection.getresponse()
            return answer.status, answer.read()
        except OSError as error:
            return 0, str(error)
        finally:
            connection.close()
    made(upload)
    return login["user-token"]


def made(send, also=(), within=120):
    """The answer of `send()` once it is a success (or one of the statuses `also` accepts)."""
    deadline = time.monotonic() + within
    while True:
        status, answer = send()
        if 200 <= status < 300 or status in also:
            return status, answer
        if time.monotonic() > deadline:
            raise RuntimeError(f"a fixture was not made: {status} {answer}")
        time.sleep(1)


class Load:
    """`connections` threads sending the mix at `url` + `prefix` until stopped."""

    def __init__(self, url, prefix, token, connections=8, think=0.0, soak=False):
        self.host = url.removeprefix("http://")
        self.prefix = prefix
        self.token = token
        self.connections = connections
        self.think = think
        # The soak's mix adds logins and subscriptions polled for their messages. Logins are
        # paced under users-service's limits (10 a minute per account, 60 per client address).
        self.soak = soak
        self.subscriptions = []
        self.next_login = 0.0
        self.logins = 0
        self.records = []
        self.acked = []
        self.lock = threading.Lock()
        self.running = threading.Event()
        self.threads = []

    def start(self):
        self.running.set()
        for number in range(self.connections):
            thread = threading.Thread(target=self.worker, args=(number,), daemon=True)
            thread.start()
            self.threads.append(thread)

    def stop(self):
        self.running.clear()
        for thread in self.threads:
            thread.join()

    def operations(self):
        ids = self.acked
        known = ids[random.randrange(len(ids))] if ids else None
        choices = [
            ("data", "POST", f"/data/{TABLE}", {"n": random.randrange(1_000_000)}),
            ("data", "GET", f"/data/{TABLE}?pageSize=5&sortBy=created%20desc", None),
            ("users", "GET", f"/users/isvalidusertoken/{self.token}", None),
            ("messaging", "POST", "/messaging/load", {"message": "m"}),
            ("geo", "GET", "/geo/categories", None),
            ("files", "GET", "/files/load/", None),
        ]
        if known:
            choices += [("data", "GET", f"/data/{TABLE}/{known}", None),
                        ("relations", "GET", f"/data/{TABLE}/{known}/rel", None),
                        ("data", "PUT", f"/data/{TABLE}/{known}", {"n": random.randrange(1_000_000)})]
        if self.soak:
            with self.lock:
                due = time.monotonic() >= self.next_login
                if due:
                    self.next_login = time.monotonic() + 1.25
                    self.logins += 1
            if due:
                account = f"load{self.logins % ACCOUNTS}@example.com"
                return [("users", "POST", "/users/login", {"login": account, "password": "pw"})]
            if len(self.subscriptions) < 200:
                choices.append(("messaging", "POST", "/messaging/load/subscribe", {}))
            if self.subscriptions:
                subscription = self.subscriptions[random.randrange(len(self.subscriptions))]
                choices.append(("messaging", "GET", f"/messaging/load/{subscription}", None))
        return choices

    def worker(self, number):
        connection = None
        while self.running.is_set():
            service, method, path, body = random.choice(self.operations())
            if connection is None:
                connection = http.client.HTTPConnection(self.host, timeout=60)
            started = time.monotonic()
            status, answer = 0, None
            try:
                data = None if body is None else json.dumps(body).encode()
                headers = {"content-type": "application/json"} if data else {}
                connection.request(method, self.prefix + path, data, headers)
                response = connection.getresponse()
                status, answer = response.status, response.read()
                if response.getheader("connection", "").lower() == "close":
                    connection.close()
                    connection = None
            except (OSError, http.client.HTTPException):
                connection.close()
                connection = None
            elapsed = time.monotonic() - started
            envelope = status < 400 or has_envelope(answer)
            with self.lock:
                self.records.append((started, service, status, elapsed, envelope))
                if status == 200 and method == "POST" and service == "data":
                    self.acked.append(json.loads(answer)["objectId"])
                if status == 200 and path.endswith("/subscribe") and len(self.subscriptions) < 200:
                    self.subscriptions.append(json.loads(answer)["subscriptionId"])
            if self.think:
                time.sleep(self.think)

    def between(self, start, end):
        with self.lock:
            return [record for record in self.records if start <= record[0] < end]


def has_envelope(raw):
    try:
        answer = json.loads(raw)
        return isinstance(answer.get("code"), int) and isinstance(answer.get("message"), str)
    except (ValueError, TypeError, AttributeError):
        return False


def missing_writes(system, ids):
    """The acknowledged ids that cannot be read back."""
    from system import request
    prefix = system.url + system.prefix()
    lost = []
    for chunk in range(0, len(ids), 100):
        batch = ids[chunk:chunk + 100]
        where = urllib.parse.quote("objectId IN (" + ",".join(f"'{i}'" for i in batch) + ")")
        status, found = request(f"{prefix}/data/{TABLE}?where={where}&pageSize=100&props=objectId")
        present = {item["objectId"] for item in found} if status == 200 else set()
        lost += [i for i in batch if i not in present]
    return lost
