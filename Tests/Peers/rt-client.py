#!/usr/bin/env python3
"""A real socket.io client (PyPI's python-socketio) speaking the Backendless RT protocol, for
the real-time tests.

It connects to the gateway as RT clients do (`{url}/{appId}/?apiKey=…&userToken=…`, namespace
`/{appId}`, websocket transport), then reads commands from standard input, one JSON object per
line: `{"emit": "SUB_ON", "data": {...}}` sends an event on the namespace; `{"disconnect": true}`
leaves; `{"transport": true}` records the transport in use (`polling` or `websocket`). With
`--transports polling,websocket` it starts with long-polling and upgrades, as the SDKs do. With
`--reconnect` it behaves as the SDKs do when a connection is lost: it connects again
(with the same `clientId`) and sends `SUB_ON` again for every subscription it holds, with the
same ids. Every event the server sends (`SUB_READY`, `SUB_RES`, `MET_RES`, anything else) and
every connect, connect error and disconnect is appended to `events.jsonl` in the output folder as
`{"event": name, "data": payload}`, flushed at once. Writes `ready` into the folder once connected
(or `failed` with the reason when the connection is refused). Stops when standard input closes.
"""
import argparse
import json
import os
import sys
import threading

import socketio


def main():
    arguments = argparse.ArgumentParser()
    arguments.add_argument("--url", required=True)
    arguments.add_argument("--app", required=True)
    arguments.add_argument("--key", required=True)
    arguments.add_argument("--token")
    arguments.add_argument("--client-id", default="test-client")
    arguments.add_argument("--reconnect", action="store_true")
    arguments.add_argument("--transports", default="websocket",
                           help="comma list: 'polling,websocket' starts with long-polling and upgrades, as the SDKs do")
    arguments.add_argument("--out", required=True)
    options = arguments.parse_args()

    namespace = "/" + options.app
    lock = threading.Lock()
    log = open(os.path.join(options.out, "events.jsonl"), "a")

    def record(event, data=None):
        with lock:
            log.write(json.dumps({"event": event, "data": data}) + "\n")
            log.flush()

    client = socketio.Client(reconnection=options.reconnect, reconnection_delay=0.2, reconnection_delay_max=1)
    # python-engineio hands each message to a thread of its own, so two events could be
    # recorded in the other order than they arrived: handle them in arrival order instead.
    trigger = client.eio._trigger_event

    def in_order(event, *args, **kwargs):
        kwargs.pop("run_async", None)
        return trigger(event, *args, **kwargs)

    client.eio._trigger_event = in_order
    subscriptions = {}
    connections = [0]

    @client.on("*", namespace=namespace)
    def any_event(event, data=None):
        record(event, data)

    @client.on("connect", namespace=namespace)
    def connected():
        record("connect")
        connections[0] += 1
        if connections[0] > 1:
            for data in list(subscriptions.values()):
                client.emit("SUB_ON", data, namespace=namespace)

    @client.on("connect_error", namespace=namespace)
    def refused(data=None):
        record("connect_error", data)

    @client.on("disconnect", namespace=namespace)
    def disconnected(*_):
        record("disconnect")

    query = "apiKey=" + options.key + "&clientId=" + options.client_id + "&userToken=" + (options.token or "null")
    try:
        client.connect(options.url + "/?" + query, namespaces=[namespace], socketio_path=options.app,
                       transports=options.transports.split(","), wait_timeout=30)
    except Exception as error:  # the refusal is the test's to judge
        with open(os.path.join(options.out, "failed"), "w") as out:
            out.write(str(error))
        return
    open(os.path.join(options.out, "ready"), "w").close()
    for line in sys.stdin:
        if not line.strip():
            continue
        command = json.loads(line)
        if command.get("disconnect"):
            client.disconnect()
            continue
        if command.get("transport"):
            record("transport", client.transport())
            continue
        data = command.get("data")
        if command["emit"] == "SUB_ON":
            subscriptions[data["id"]] = data
        elif command["emit"] == "SUB_OFF":
            subscriptions.pop(data["id"], None)
        client.emit(command["emit"], data, namespace=namespace)
    client.disconnect()


if __name__ == "__main__":
    main()
