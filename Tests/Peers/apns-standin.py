#!/usr/bin/env python3
"""An APNs provider API stand-in for the test suite: HTTP/2 over TLS (asyncio, ssl and PyPI's h2)
that checks what Apple checks, so a pass proves the real protocol
(../shared/reference/push-delivery.md §4.3).

- TLS with ALPN `h2` only: a client that does not select h2 is disconnected.
- Each connection starts with SETTINGS_MAX_CONCURRENT_STREAMS = 1 and raises it to 1000 after the
  first request whose provider token verifies.
- POST /3/device/<64 hex digits>; `authorization: bearer <JWT>` with alg ES256, the configured
  kid, iss = the team, an integer iat within the hour, and a signature (raw r||s) that verifies
  with the configured public key; a different token on the same connection within 20 minutes is
  429 TooManyProviderTokenUpdates. apns-topic, apns-push-type (background needs
  content-available and priority 5), apns-priority, apns-expiration, apns-id, a JSON body with an
  `aps` dictionary of at most 4096 bytes — each answered with Apple's reason when wrong.
- Device tokens ending in a fault code answer as told: ...0410 Unregistered (410, timestamp now),
  ...0400 BadDeviceToken, ...0429 TooManyRequests, ...0503 ServiceUnavailable on the first two
  attempts and 200 after.
- Every request is appended to <out>/apns.jsonl (token, headers, payload, status, reason) and the
  number of HTTP/2 connections so far is kept in <out>/connections; `ready` is written to <out>
  once it listens. It stops when its
  standard input closes.
"""
import argparse
import asyncio
import json
import os
import re
import ssl
import sys
import time
import uuid

import jwt
from h2.config import H2Configuration
from h2.connection import H2Connection
from h2.events import ConnectionTerminated, DataReceived, RequestReceived, StreamEnded
from h2.settings import SettingCodes

TOKEN = re.compile(r"^[0-9a-f]{64}$")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


class Peer:
    def __init__(self, args):
        self.args = args
        with open(args.public_key, "rb") as file:
            self.public_key = file.read()
        self.attempts = {}
        self.connections = 0
        self.log = open(os.path.join(args.out, "apns.jsonl"), "a", buffering=1)

    def record(self, **entry):
        self.log.write(json.dumps(entry) + "\n")

    def check_token(self, bearer):
        """None when the provider token verifies, else Apple's reason."""
        if not bearer.lower().startswith("bearer "):
            return "MissingProviderToken"
        token = bearer[7:]
        try:
            header = jwt.get_unverified_header(token)
            claims = jwt.decode(token, self.public_key, algorithms=["ES256"], options={"verify_iat": False, "verify_aud": False})
        except jwt.PyJWTError:
            return "InvalidProviderToken"
        if header.get("alg") != "ES256" or header.get("kid") != self.args.key_id or claims.get("iss") != self.args.team_id:
            return "InvalidProviderToken"
        if type(claims.get("iat")) is not int or claims["iat"] > time.time() + 60:
            return "InvalidProviderToken"
        if claims["iat"] < time.time() - 3600:
            return "ExpiredProviderToken"
        return None

    def answer(self, headers, body, connection_state):
        """(status, reason or None, extra response headers)."""
        method, path = headers.get(":method"), headers.get(":path", "")
        if method != "POST":
            return 405, "MethodNotAllowed", {}
        if not path.startswith("/3/device/"):
            return 404, "BadPath", {}
        device = path[len("/3/device/"):]
        if not device:
            return 400, "MissingDeviceToken", {}
        if "authorization" not in headers:
            return 403, "MissingProviderToken", {}
        reason = self.check_token(headers["authorization"])
        if reason:
            return 403, reason, {}
        bearer = headers["authorization"]
        previous = connection_state.get("token")
        if previous is not None and previous[0] != bearer and time.time() - previous[1] < 1200:
            return 429, "TooManyProviderTokenUpdates", {}
        if previous is None or previous[0] != bearer:
            connection_state["token"] = (bearer, time.time())
        connection_state["verified"] = True
        if not TOKEN.match(device):
            return 400, "BadDeviceToken", {}
        if headers.get("apns-topic") != self.args.topic:
            return 400, "MissingTopic" if "apns-topic" not in headers else "BadTopic", {}
        push_type, priority = headers.get("apns-push-type"), headers.get("apns-priority", "10")
        if push_type not in ("alert", "background"):
            return 400, "InvalidPushType", {}
        if priority not in ("10", "5", "1"):
            return 400, "BadPriority", {}
        if "apns-expiration" in headers and not headers["apns-expiration"].isdigit():
            return 400, "BadExpirationDate", {}
        if "apns-id" in headers and not UUID.match(headers["apns-id"]):
            return 400, "BadMessageId", {}
        if len(body) > 4096:
            return 413, "PayloadTooLarge", {}
        try:
            payload = json.loads(body)
        except ValueError:
            return 400, "PayloadEmpty", {}
        if not isinstance(payload, dict) or not isinstance(payload.get("aps"), dict):
            return 400, "PayloadEmpty", {}
        aps = payload["aps"]
        if push_type == "background" and (aps.get("content-available") != 1 or "alert" in aps or priority != "5"):
            return 400, "InvalidPushType", {}
        if device.endswith("0410"):
            return 410, "Unregistered", {"timestamp": int(time.time() * 1000)}
        if device.endswith("0400"):
            return 400, "BadDeviceToken", {}
        if device.endswith("0429"):
            return 429, "TooManyRequests", {}
        if device.endswith("0503"):
            self.attempts[device] = self.attempts.get(device, 0) + 1
            if self.attempts[device] <= 2:
                return 503, "ServiceUnavailable", {}
        return 200, None, {"payload": payload}


async def serve_connection(peer, reader, writer):
    if writer.get_extra_info("ssl_object").selected_alpn_protocol() != "h2":
        writer.close()
        return
    peer.connections += 1
    with open(os.path.join(peer.args.out, "connections"), "w") as count:
        count.write(str(peer.connections))
    connection = H2Connection(config=H2Configuration(client_side=False, header_encoding="utf-8"))
    connection.initiate_connection()
    connection.update_settings({SettingCodes.MAX_CONCURRENT_STREAMS: 1})
    writer.write(connection.data_to_send())
    state, streams, raised = {}, {}, False
    while True:
        data = await reader.read(65536)
        if not data:
            break
        for event in connection.receive_data(data):
            if isinstance(event, RequestReceived):
                names = [name for name, _ in event.headers]
                streams[event.stream_id] = (dict(event.headers), bytearray(), len(names) != len(set(names)))
            elif isinstance(event, DataReceived):
                streams[event.stream_id][1].extend(event.data)
                connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, StreamEnded):
                headers, body, duplicated = streams.pop(event.stream_id)
                if duplicated:
                    status, reason, extra = 400, "DuplicateHeaders", {}
                else:
                    status, reason, extra = peer.answer(headers, bytes(body), state)
                apns_id = headers.get("apns-id") or str(uuid.uuid4())
                recorded = {key: value for key, value in headers.items() if not key.startswith(":") and key != "authorization"}
                peer.record(token=headers.get(":path", "").split("/")[-1], headers=recorded, payload=extra.get("payload"),
                            status=status, reason=reason, authorization=headers.get("authorization"))
                response = [(":status", str(status)), ("apns-id", apns_id)]
                content = b""
                if reason:
                    error = {"reason": reason}
                    if "timestamp" in extra:
                        error["timestamp"] = extra["timestamp"]
                    content = json.dumps(error).encode()
                    response.append(("content-type", "application/json"))
                response.append(("content-length", str(len(content))))
                # Raised before the answer, while the client's stream is open: AsyncHTTPClient
                # 1.37 asserts (debug builds) when an idle HTTP/2 connection's limit changes.
                if state.get("verified") and not raised:
                    connection.update_settings({SettingCodes.MAX_CONCURRENT_STREAMS: 1000})
                    raised = True
                connection.send_headers(event.stream_id, response, end_stream=not content)
                if content:
                    connection.send_data(event.stream_id, content, end_stream=True)
            elif isinstance(event, ConnectionTerminated):
                writer.close()
                return
        writer.write(connection.data_to_send())
        await writer.drain()
    writer.close()


async def main():
    parser = argparse.ArgumentParser()
    for name in ("--port", "--cert", "--key", "--key-id", "--team-id", "--public-key", "--topic", "--out"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(args.cert, args.key)
    context.set_alpn_protocols(["h2"])
    peer = Peer(args)
    server = await asyncio.start_server(lambda r, w: serve_connection(peer, r, w), "127.0.0.1", int(args.port), ssl=context)
    with open(os.path.join(args.out, "ready"), "w") as ready:
        ready.write("ready\n")
    loop = asyncio.get_running_loop()
    stdin_closed = loop.run_in_executor(None, sys.stdin.read)
    async with server:
        await stdin_closed


if __name__ == "__main__":
    asyncio.run(main())
