"""Writes Tests/Corpus/hostile-requests.jsonl: the hostile-input corpus HostileCorpusTests sends
through the gateway. Each line is one request (method, path after the app prefix, headers, body as
text or hex) that must be answered 4xx with the error envelope, change nothing in the database and
leave the system serving. Run it again after editing the lists below; the output is committed so
a change to the corpus shows in review.

The fixtures the paths name (table Probe with columns name and v, object PROBE_ID, file
probe/a.txt, channel probe, geo category probe, email template probe) are created by the test
before the corpus runs."""
import json
import pathlib
import urllib.parse

SQL = [
    "' OR 1=1 --",
    "' OR '1'='1",
    '" OR ""="',
    "'; DROP TABLE \"Users\"; --",
    '"; DROP SCHEMA platform CASCADE; --',
    "1; SELECT pg_sleep(30)",
    "1' AND (SELECT 1 FROM pg_sleep(30))='1",
    "') OR ('1'='1",
    "x' UNION SELECT usename, passwd FROM pg_shadow --",
    "$$; DELETE FROM platform.apps; $$",
    "Probe\"; TRUNCATE \"Probe\"; --",
    "name; COPY platform.apps TO '/tmp/x'",
    "\\'; DROP TABLE x; --",
    "1/**/OR/**/1=1",
    "%27%20OR%201%3D1",
    "admin'--",
    "' || (SELECT current_user) || '",
    "1) OR pg_sleep(30) IS NULL --",
]

TRAVERSAL = [
    "../../../../etc/passwd",
    "..%2f..%2f..%2fetc%2fpasswd",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "%252e%252e%252fetc%252fpasswd",
    "..\\..\\..\\windows\\win.ini",
    "..%5c..%5cetc%5cpasswd",
    "%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd",
    "....//....//etc/passwd",
    "..;/..;/etc/passwd",
    "%2e%2e/%2e%2e/etc/passwd",
    "..%00/etc/passwd",
    "%uff0e%uff0e%u2215etc%u2215passwd",
    "/etc/passwd",
    "..%c0%af..%c0%afetc%c0%afpasswd",
    "%2e%2e%5c%2e%2e%5cetc%5cpasswd",
    ".%2e/.%2e/etc/passwd",
]

# Identifiers no table, column, relation or name may be.
BAD_NAMES = [
    " ",
    "a b",
    "1abc",
    "a" * 300,
    "na\u0000me",
    "\u202eProbe",
    "Pro\u200bbe",
    "name\r\nX-Injected: 1",
    "<script>alert(1)</script>",
    "${jndi:ldap://x/a}",
    "{{7*7}}",
    "name\"",
    "a.b.c",
    "__proto__.x",
]

MALFORMED_JSON = [
    "{",
    "}",
    '{"name":}',
    '{"name": "a",}',
    "[1, 2",
    "{'name': 'a'}",
    '{"name": "a"} trailing',
    "nul",
    "tru",
    '{"name": "\\x41"}',
    '{"name": "\\ud800"}',
    '{"name": "\\udc00\\ud800"}',
    '{"name": "\\u00"}',
    '{"name": NaN}',
    '{"name": Infinity}',
    '{"name": -Infinity}',
    '{"name": 01}',
    '{"name": 1.}',
    '{"name": .5}',
    '{"name": +1}',
    '{"name": 0x10}',
    '{name: "a"}',
    '{"name" "a"}',
    '{"name": "a" "v": 1}',
    '\ufeff{"name": "a"}',
    '{"name": "a"}\u0000',
    "\u0000",
    '{"name": "unterminated',
    '{"a": [1, 2,, 3]}',
    '{"a": {"b": }}',
    "[}",
    '{"name": "\t"}',
    '{"name": "line\nbreak"}',
]

# Valid JSON whose values cannot be stored or must not be read as asked.
HOSTILE_VALUES = [
    '{"name": "a\\u0000b"}',
    '{"v": 1e400}',
    '{"v": -1e400}',
    '{"v": 123456789012345678901234567890123456789}',
    '{"v": [1, 2]}',
    '{"v": {"$gt": 0}}',
    '{"objectId": {"$ne": null}}',
    '{"v": "1; DROP TABLE \\"Probe\\""}',
]

INVALID_UTF8 = [
    "ff",
    "c0af",
    "e080af",
    "f8888080af",
    "ed a0 80".replace(" ", ""),
    "7b226e616d65223a2280ff227d",  # {"name":"\x80\xff"}
    "7b226e616d65223a22c0af227d",  # an overlong '/'
    "7b226e616d65223a22eda080227d",  # a UTF-8 encoded surrogate
    "7b22ff223a317d",  # {"\xff":1}
    "fffe7b007d00",  # UTF-16 with a BOM
]

# JSON routes that take a body, as (method, path).
JSON_ROUTES = [
    ("POST", "data/Probe"),
    ("PUT", "data/Probe/PROBE_ID"),
    ("PUT", "data/Probe"),
    ("PUT", "data/Probe/upsert"),
    ("PUT", "data/Probe/deep-save"),
    ("POST", "data/Probe/find"),
    ("POST", "data/Probe/count"),
    ("POST", "data/Probe/bql"),
    ("POST", "data/bulk/Probe"),
    ("PUT", "data/bulk/Probe"),
    ("PUT", "data/bulkupsert/Probe"),
    ("POST", "data/bulk/Probe/delete"),
    ("POST", "data/Probe/properties"),
    ("PUT", "data/Probe/properties/name"),
    ("PUT", "data/Probe/permissions/FIND"),
    ("POST", "transaction/unit-of-work"),
    ("POST", "users/register"),
    ("POST", "users/login"),
    ("PUT", "users/settings"),
    ("POST", "users/assignRole"),
    ("POST", "messaging/probe"),
    ("POST", "messaging/probe/subscribe"),
    ("PUT", "messaging/settings"),
    ("POST", "messaging/registrations"),
    ("PUT", "messaging/pushtemplates/probe"),
    ("PUT", "emailtemplate/probe"),
    ("POST", "geo/points"),
    ("POST", "geo/fences"),
    ("PUT", "data/Probe/PROBE_ID/rel"),
    ("POST", "data/Probe/PROBE_ID/rel/load"),
    ("PUT", "files/probe/a.txt"),
]

# Routes whose JSON body must be an object of columns: a hostile value or key is refused.
OBJECT_ROUTES = [("POST", "data/Probe"), ("PUT", "data/Probe/PROBE_ID"), ("PUT", "data/Probe/upsert")]

# Query parameters of finds, each given SQL.
FIND_PARAMETERS = ["where", "sortBy", "props", "groupBy", "having", "loadRelations", "property", "excludeProps"]

# Paths with one identifier segment, as (method, template); {} is replaced.
NAME_PATHS = [
    ("GET", "data/{}"),
    ("GET", "data/{}/count"),
    ("POST", "data/{}/find"),
    ("GET", "data/{}/properties"),
    ("POST", "data/{}"),
    ("DELETE", "data/{}/schema"),
    ("GET", "data/Probe/{}"),
    ("PUT", "data/Probe/properties/{}"),
    ("DELETE", "data/Probe/properties/{}"),
    ("GET", "data/Probe/PROBE_ID/{}"),
    ("PUT", "data/Probe/permissions/{}"),
    ("GET", "users/role/{}"),
]

FILE_PATHS = [("GET", "files/{}"), ("DELETE", "files/{}"), ("POST", "files/{}"), ("PUT", "files/{}")]
OTHER_TRAVERSAL_PATHS = [("GET", "data/{}"), ("GET", "emailtemplate/{}"), ("GET", "messaging/pushtemplates/{}")]

WRONG_CONTENT = [
    ("application/xml", "<object><name>a</name></object>"),
    ("application/x-www-form-urlencoded", "name=a&v=1"),
    ("multipart/form-data; boundary=x", '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\na\r\n--x--\r\n'),
    ("text/plain", "name: a"),
    ("application/yaml", "name: a\nv: 1\n"),
    ("application/octet-stream", "\u0001\u0002\u0003"),
]

HEADER_INJECTION = [
    ("user-token", "' OR 1=1 --"),
    ("user-token", "x" * 4096),
    ("user-token", "../../etc/passwd"),
    ("user-token", "\u00ff\u00fe"),
    ("content-length", "-1"),
    ("content-length", "abc"),
    ("content-length", "99999999999999999999999"),
    ("transfer-encoding", "chunked, identity"),
]


def case(identifier, category, method, path, body=None, hex_body=None, headers=None, nested=None, key="serverCode",
         expect="4xx"):
    """One request; `nested` = (opener, core, closer, depth) stands for opener * depth + core +
    closer * depth, so deep bodies stay small in the file. `expect` is 4xx, or `read` for a read
    whose parameter may legitimately hold the payload (a quoted literal is a valid sort item): any
    answer but 5xx, and the database unchanged all the same."""
    entry = {"id": identifier, "category": category, "method": method, "path": path, "key": key, "expect": expect}
    if headers:
        entry["headers"] = headers
    if body is not None:
        entry["body"] = body
    if hex_body is not None:
        entry["bodyHex"] = hex_body
    if nested is not None:
        entry["nested"] = dict(zip(("open", "core", "close", "depth"), nested))
    return entry


def segment(text):
    """A value as one path segment: percent-encoded, slashes included."""
    return urllib.parse.quote(text, safe="")


def raw_segment(text):
    """A traversal payload as the attacker writes it: its own encoding kept, spaces escaped."""
    return text.replace(" ", "%20").replace("\\", "%5C")


def cases():
    out = []
    json_headers = [["content-type", "application/json"]]
    for n, payload in enumerate(SQL):
        for method, template in NAME_PATHS:
            body = '{"name": "a"}' if method in ("POST", "PUT") else None
            out.append(case(f"sql-name-{method}-{template}-{n}", "sql-in-identifier", method,
                            template.format(segment(payload)), body, headers=json_headers if body else None))
        for parameter in FIND_PARAMETERS:
            query = urllib.parse.urlencode({parameter: payload})
            out.append(case(f"sql-query-{parameter}-{n}", "sql-in-parameter", "GET", f"data/Probe?{query}",
                            expect="4xx" if parameter in ("where", "having") else "read"))
        out.append(case(f"sql-find-body-{n}", "sql-in-parameter", "POST", "data/Probe/find",
                        json.dumps({"where": payload}), headers=json_headers))
        for method, path in OBJECT_ROUTES:
            out.append(case(f"sql-key-{method}-{path}-{n}", "sql-in-json-key", method, path,
                            json.dumps({payload: 1}), headers=json_headers))
        out.append(case(f"sql-column-def-{n}", "sql-in-json-value", "POST", "data/Probe/properties",
                        json.dumps({"name": payload, "type": "STRING"}), headers=json_headers))
    for n, name in enumerate(BAD_NAMES):
        for method, template in NAME_PATHS:
            if not name and template.endswith("{}"):
                continue  # an empty last segment is another route, not a bad name
            body = '{"name": "a"}' if method in ("POST", "PUT") else None
            out.append(case(f"name-{method}-{template}-{n}", "invalid-identifier", method,
                            template.format(segment(name)), body, headers=json_headers if body else None))
        if name:
            for method, path in OBJECT_ROUTES:
                out.append(case(f"name-key-{method}-{path}-{n}", "invalid-identifier", method, path,
                                json.dumps({name: 1}), headers=json_headers))
    for n, payload in enumerate(TRAVERSAL):
        for method, template in FILE_PATHS + OTHER_TRAVERSAL_PATHS:
            out.append(case(f"traversal-{method}-{template}-{n}", "path-traversal", method,
                            template.format(raw_segment(payload))))
        out.append(case(f"traversal-copy-{n}", "path-traversal", "PUT", "files/probe/a.txt",
                        json.dumps({"copy": payload}), headers=[["content-type", "application/json"]]))
    for n, body in enumerate(MALFORMED_JSON):
        for method, path in JSON_ROUTES:
            out.append(case(f"malformed-{method}-{path}-{n}", "malformed-json", method, path, body,
                            headers=json_headers))
    for n, body in enumerate(HOSTILE_VALUES):
        for method, path in OBJECT_ROUTES:
            out.append(case(f"value-{method}-{path}-{n}", "hostile-value", method, path, body, headers=json_headers))
    for n, hex_body in enumerate(INVALID_UTF8):
        for method, path in JSON_ROUTES[:12] + JSON_ROUTES[16:18]:
            out.append(case(f"utf8-{method}-{path}-{n}", "invalid-utf8", method, path, hex_body=hex_body,
                            headers=json_headers))
    for depth in (600, 5_000, 100_000):
        for opener, closer in (("[", "]"), ('{"a":', "}")):
            for method, path in JSON_ROUTES[:6] + [("POST", "transaction/unit-of-work"), ("POST", "messaging/probe")]:
                out.append(case(f"nested-{opener}-{depth}-{method}-{path}", "deep-nesting", method, path,
                                nested=(opener, "1", closer, depth), headers=json_headers))
    for n, (content_type, body) in enumerate(WRONG_CONTENT):
        for method, path in JSON_ROUTES:
            out.append(case(f"content-type-{method}-{path}-{n}", "wrong-content-type", method, path, body,
                            headers=[["content-type", content_type]]))
    for n, number in enumerate(["99999999999999999999", "-1", "1e10", "0x10", "NaN", "1.5", "-99999999999"]):
        for parameter in ("pageSize", "offset", "relationsDepth", "relationsPageSize"):
            out.append(case(f"number-{parameter}-{n}", "huge-number", "GET", f"data/Probe?{parameter}={number}"))
    for n, (name, value) in enumerate(HEADER_INJECTION):
        out.append(case(f"header-{n}", "header-injection", "POST", "data/Probe/find", '{"where": "v = 1"}',
                        headers=[["content-type", "application/json"], [name, value]]))
    return out


def main():
    corpus = cases()
    identifiers = [entry["id"] for entry in corpus]
    assert len(identifiers) == len(set(identifiers)), "case ids repeat"
    target = pathlib.Path(__file__).with_name("hostile-requests.jsonl")
    with target.open("w", encoding="utf-8") as file:
        for entry in corpus:
            file.write(json.dumps(entry, ensure_ascii=True) + "\n")
    print(f"{len(corpus)} cases written to {target}")


if __name__ == "__main__":
    main()
