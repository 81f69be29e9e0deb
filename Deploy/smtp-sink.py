#!/usr/bin/env python3
"""A real SMTP server for the test suite (aiosmtpd from PyPI) on 127.0.0.1.

Every accepted message is parsed with Python's standard email parser and written to the
output folder as NNNN.json: envelope, headers, the decoded text and HTML parts, each
attachment's name, type, size and SHA-256, and whether the session used TLS and AUTH. With --cert/--key it offers STARTTLS and requires it; with
--user/--password it requires AUTH (only over TLS). Writes `ready` into the folder once it
listens and stops when its standard input closes, or with --until-signal on SIGTERM or SIGINT
(Deploy/dev.sh runs it that way as the local mail catcher).
"""
import argparse
import email
import hashlib
import itertools
import json
import os
import signal
import ssl
import sys
from email import policy

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Sink:
    def __init__(self, folder):
        self.folder = folder
        self.numbers = itertools.count()

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.original_content or envelope.content, policy=policy.default)
        parts = {}
        attachments = []
        for part in message.walk():
            kind = part.get_content_type()
            if part.is_attachment():
                data = part.get_payload(decode=True)
                attachments.append({
                    "filename": part.get_filename(), "contentType": kind, "size": len(data),
                    "sha256": hashlib.sha256(data).hexdigest(),
                })
            elif kind in ("text/plain", "text/html") and kind not in parts:
                parts[kind] = part.get_content()
        record = {
            "mailFrom": envelope.mail_from,
            "recipients": envelope.rcpt_tos,
            "headers": {name.lower(): str(value) for name, value in message.items()},
            "text": parts.get("text/plain"),
            "html": parts.get("text/html"),
            "attachments": attachments,
            "tls": session.ssl is not None,
            "authenticated": bool(session.authenticated),
        }
        path = os.path.join(self.folder, "%04d.json" % next(self.numbers))
        with open(path + ".tmp", "w") as out:
            json.dump(record, out)
        os.rename(path + ".tmp", path)
        return "250 Message accepted"


def main():
    arguments = argparse.ArgumentParser()
    arguments.add_argument("--port", type=int, required=True)
    arguments.add_argument("--out", required=True)
    arguments.add_argument("--cert")
    arguments.add_argument("--key")
    arguments.add_argument("--user")
    arguments.add_argument("--password")
    arguments.add_argument("--until-signal", action="store_true")
    options = arguments.parse_args()

    settings = {}
    if options.cert:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(options.cert, options.key)
        settings.update(tls_context=context, require_starttls=True)
    if options.user:
        def authenticate(server, session, envelope, mechanism, data):
            valid = isinstance(data, LoginPassword) and data.login.decode() == options.user \
                and data.password.decode() == options.password
            # handled=False: aiosmtpd answers 235 or 535 itself.
            return AuthResult(success=valid, handled=False)
        settings.update(authenticator=authenticate, auth_required=True, auth_require_tls=True)

    controller = Controller(Sink(options.out), hostname="127.0.0.1", port=options.port, **settings)
    controller.start()
    open(os.path.join(options.out, "ready"), "w").close()
    try:
        if options.until_signal:
            for stop in (signal.SIGTERM, signal.SIGINT):
                signal.signal(stop, lambda *_: sys.exit(0))
            while True:
                signal.pause()
        else:
            sys.stdin.read()
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
