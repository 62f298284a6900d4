"""A downstream service as a Python team would write it with tessera_verification (installed from
its wheel): http.server protecting two routes with Tessera access tokens, and Shared Signals
consumed by poll so that revocations reach it without Kafka.

Usage: downstream.py --tessera URL --ca CRT --issuer ISS [--issuer ISS…] --account ID
The receiver token is read from stdin (never argv: it would show in the process list). Prints one
JSON line once it serves: {"port": P, "stream_id": …}.
"""
import argparse
import json
import logging
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tessera_verification import (
    AccessTokenVerifier,
    IssuerKeys,
    PresentedRequest,
    Requirement,
    RevocationProjection,
    SecurityEventVerifier,
    SharedSignalsPoller,
    SharedSignalsPushReceiver,
    push_request_handler,
)

ROUTES = {
    "/charges": Requirement("v5", permission="transaction:charge"),
    "/refunds": Requirement("v5", permission="transaction:refund"),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tessera", required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--issuer", action="append", required=True)
    parser.add_argument("--account")
    parser.add_argument("--push", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    secret = sys.stdin.readline().strip()

    tls = ssl.create_default_context(cafile=args.ca)
    keys = IssuerKeys.fetch(f"{args.tessera}/.well-known/jwks.json", ssl_context=tls)
    projection = RevocationProjection()
    verifier = AccessTokenVerifier(keys, args.issuer, projection=projection)
    poller = None
    pushes = BaseHTTPRequestHandler
    if args.push:
        # A push SET's aud is the endpoint URL, known once the port is bound: no audience (every SET
        # refused) until then, when the verifier is replaced below.
        receiver = SharedSignalsPushReceiver(SecurityEventVerifier(keys, args.tessera, ()), projection, authorization=secret, max_access_token_lifetime_seconds=3600)
        pushes = push_request_handler(receiver, "/ssf/events")
    else:
        poller = SharedSignalsPoller(args.tessera, secret, projection, keys=keys, ssl_context=tls, accounts=[args.account], max_access_token_lifetime_seconds=3600).start()

    class Service(pushes):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            requirement = ROUTES.get(self.path)
            if requirement is None:
                return self.answer(404, [], b"")
            origin = f"http://{self.headers.get('Host')}"
            request = PresentedRequest(method="GET", url=origin + self.path, dpop=self.headers.get_all("DPoP"))
            decision = verifier.check(self.headers.get("Authorization"), requirement, request)
            if not decision.allowed:
                return self.answer(*decision.response())
            body = json.dumps({"account": decision.claims["sub"], "client_id": decision.claims["client_id"]}).encode()
            self.answer(200, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))], body)

        def answer(self, status, headers, body):
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            if not any(name.lower() == "content-length" for name, _ in headers):
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Service)
    port = server.server_address[1]
    if args.push:
        receiver.verifier = SecurityEventVerifier(keys, args.tessera, f"http://127.0.0.1:{port}/ssf/events")
    print(json.dumps({"port": port, "stream_id": poller.stream_id if poller else None}), flush=True)
    try:
        server.serve_forever()
    finally:
        if poller:
            poller.stop()


if __name__ == "__main__":
    main()
