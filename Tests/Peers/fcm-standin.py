#!/usr/bin/env python3
"""An FCM HTTP v1 stand-in for the test suite: Google's OAuth token endpoint and `messages:send`
over TLS (the standard library's HTTP server; FCM takes HTTP/1.1), checking what Google checks
(../shared/reference/push-delivery.md §4.4).

- POST /token: form-encoded, grant_type urn:ietf:params:oauth:grant-type:jwt-bearer; the assertion
  verifies as RS256 with the service account's public key, with iss = the client email, aud = the
  token URI, a scope with auth/firebase.messaging, exp - iat <= 3600 and iat not in the future;
  answers a random access token valid 3599 s, else 400 invalid_grant. Issued tokens are counted
  in <out>/fcm-tokens.jsonl.
- POST /v1/projects/<id>/messages:send with `authorization: Bearer <issued token>` (401
  UNAUTHENTICATED otherwise; POST /__expire forgets every issued token); the project must be the
  account's (403 SENDER_ID_MISMATCH); {"message": {...}} with exactly one of token/topic/condition,
  string values in data and android.data, no reserved data key, android.priority NORMAL or HIGH,
  android.ttl like "3600s", at most 4096 bytes (400 INVALID_ARGUMENT otherwise).
- Device tokens ending in -unregistered answer 404 UNREGISTERED; -quota 429 QUOTA_EXCEEDED with
  retry-after 1 on the first two attempts; -unavailable 503 on the first two attempts.
- Every send is appended to <out>/fcm.jsonl; `ready` is written to <out> once it listens; it stops
  when its standard input closes.
"""
import argparse
import json
import os
import re
import secrets
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt

GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TTL = re.compile(r"^\d+(\.\d{1,9})?s$")
RESERVED = ("from", "gcm", "message_type")


class State:
    def __init__(self, args):
        self.args = args
        with open(args.public_key, "rb") as file:
            self.public_key = file.read()
        self.tokens = {}
        self.attempts = {}
        self.lock = threading.Lock()
        self.sends = open(os.path.join(args.out, "fcm.jsonl"), "a", buffering=1)
        self.issued = open(os.path.join(args.out, "fcm-tokens.jsonl"), "a", buffering=1)


def error(status, code, message, fcm_code=None, field=None):
    details = []
    if fcm_code:
        details.append({"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": fcm_code})
    if field:
        details.append({"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [{"field": field, "description": message}]})
    return status, {"error": {"code": status, "message": message, "status": code, "details": details}}, {}


def check_message(message):
    """None when the message is well formed, else the offending field."""
    if not isinstance(message, dict):
        return "message"
    if sum(key in message for key in ("token", "topic", "condition")) != 1:
        return "message.token"
    for path in ("data",):
        data = message.get(path, {})
        if not isinstance(data, dict) or any(not isinstance(value, str) for value in data.values()):
            return "message.data"
        if any(key in RESERVED or key.startswith("google") or key.startswith("gcm") for key in data):
            return "message.data"
    android = message.get("android", {})
    if not isinstance(android, dict):
        return "message.android"
    if any(not isinstance(value, str) for value in android.get("data", {}).values()):
        return "message.android.data"
    if "priority" in android and android["priority"] not in ("NORMAL", "HIGH"):
        return "message.android.priority"
    if "ttl" in android and not (isinstance(android["ttl"], str) and TTL.match(android["ttl"])):
        return "message.android.ttl"
    if "notification" in message:
        return "message.notification"  # Backendless clients get data-only messages
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, headers):
        content = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(content)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(content)

    def do_POST(self):
        state = self.server.state
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.path == "/token":
            self.reply(*self.token(state, body))
        elif self.path == "/__expire":
            with state.lock:
                state.tokens.clear()
            self.reply(200, {}, {})
        elif self.path.startswith("/v1/projects/") and self.path.endswith("/messages:send"):
            self.reply(*self.send_message(state, body))
        else:
            self.reply(404, {"error": {"code": 404, "status": "NOT_FOUND"}}, {})

    def token(self, state, body):
        form = urllib.parse.parse_qs(body.decode(), strict_parsing=False)
        if form.get("grant_type") != [GRANT]:
            return 400, {"error": "unsupported_grant_type"}, {}
        args = state.args
        try:
            claims = jwt.decode(form.get("assertion", [""])[0], state.public_key, algorithms=["RS256"], audience=args.token_uri,
                                issuer=args.client_email, options={"require": ["iat", "exp"]})
        except jwt.PyJWTError as failure:
            return 400, {"error": "invalid_grant", "error_description": "Invalid JWT: %s" % failure}, {}
        if "auth/firebase.messaging" not in claims.get("scope", "") or claims["exp"] - claims["iat"] > 3600 \
                or claims["iat"] > time.time() + 60 or type(claims["iat"]) is not int:
            return 400, {"error": "invalid_grant", "error_description": "Invalid JWT claims"}, {}
        token = "ya29." + secrets.token_urlsafe(24)
        with state.lock:
            state.tokens[token] = time.time() + 3599
        state.issued.write(json.dumps({"at": time.time()}) + "\n")
        return 200, {"access_token": token, "expires_in": 3599, "token_type": "Bearer"}, {}

    def send_message(self, state, body):
        bearer = self.headers.get("authorization", "")
        with state.lock:
            valid = bearer.startswith("Bearer ") and state.tokens.get(bearer[7:], 0) > time.time()
        if not valid:
            return error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        project = self.path[len("/v1/projects/"):-len("/messages:send")]
        if project != state.args.project:
            return error(403, "PERMISSION_DENIED", "SenderId mismatch", "SENDER_ID_MISMATCH")
        if len(body) > 4096 + 64:
            return error(400, "INVALID_ARGUMENT", "Message is too big", "INVALID_ARGUMENT", "message")
        try:
            message = json.loads(body).get("message")
        except (ValueError, AttributeError):
            return error(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
        field = check_message(message)
        if field:
            return error(400, "INVALID_ARGUMENT", "Invalid value at '%s'" % field, "INVALID_ARGUMENT", field)
        token = message.get("token", "")
        outcome = (200, None, {})
        if token.endswith("-unregistered"):
            outcome = error(404, "NOT_FOUND", "Requested entity was not found.", "UNREGISTERED")
        elif token.endswith("-quota") or token.endswith("-unavailable"):
            with state.lock:
                state.attempts[token] = state.attempts.get(token, 0) + 1
                attempt = state.attempts[token]
            if attempt <= 2:
                if token.endswith("-quota"):
                    status, payload, _ = error(429, "RESOURCE_EXHAUSTED", "Quota exceeded", "QUOTA_EXCEEDED")
                    outcome = (status, payload, {"retry-after": "1"})
                else:
                    outcome = error(503, "UNAVAILABLE", "The service is currently unavailable.", "UNAVAILABLE")
        state.sends.write(json.dumps({"message": message, "status": outcome[0]}) + "\n")
        if outcome[0] != 200:
            return outcome
        return 200, {"name": "projects/%s/messages/%s" % (project, secrets.token_hex(8))}, {}


def main():
    parser = argparse.ArgumentParser()
    for name in ("--port", "--cert", "--key", "--public-key", "--client-email", "--token-uri", "--project", "--out"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", int(args.port)), Handler)
    server.state = State(args)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(args.cert, args.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with open(os.path.join(args.out, "ready"), "w") as ready:
        ready.write("ready\n")
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
