"""An OpenID Shared Signals receiver written apart from Tessera, as a partner's service would be:
the standard library's http.server over TLS for push (RFC 8935), urllib for poll (RFC 8936), and
PyJWT with PyJWKClient to verify each SET against the transmitter's JWKS.

Each SET is checked for: its signature (ES256, the JWKS key its kid names), header typ
secevent+jwt, iss, aud, iat, jti, txn, no `sub` claim, sub_id, and the shape of its one event
(CAEP session-revoked, credential-change, token-claims-change, or the SSF verification event).
Every SET received is one JSON line in --record (kept across restarts of this receiver), with its
jti, txn, event type, whether it verified, and whether its jti was seen before.

Usage:
  receiver.py push --port P --cert CRT --key KEY --jwks URL --ca CA --issuer ISS --audience AUD --record FILE [--delay-ms N]
  receiver.py poll --poll-url URL --token-file F --jwks URL --ca CA --issuer ISS --audience AUD --record FILE --expect N [--timeout S]
"""
import argparse
import json
import os
import ssl
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt

SESSION_REVOKED = "https://schemas.openid.net/secevent/caep/event-type/session-revoked"
CREDENTIAL_CHANGE = "https://schemas.openid.net/secevent/caep/event-type/credential-change"
TOKEN_CLAIMS_CHANGE = "https://schemas.openid.net/secevent/caep/event-type/token-claims-change"
VERIFICATION = "https://schemas.openid.net/secevent/ssf/event-type/verification"


class Record:
    """The receipts, one JSON line each, and the jtis seen (read back on start)."""

    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.seen = set()
        if os.path.exists(path):
            with open(path, encoding="utf-8") as existing:
                for line in existing:
                    receipt = json.loads(line)
                    if receipt.get("jti"):
                        self.seen.add(receipt["jti"])

    def add(self, receipt):
        with self.lock:
            jti = receipt.get("jti")
            receipt["duplicate"] = jti in self.seen
            if jti:
                self.seen.add(jti)
            with open(self.path, "a", encoding="utf-8") as out:
                out.write(json.dumps(receipt) + "\n")
            return receipt


def check_event_shape(claims, issuer):
    """The SET's one event and its subject, as SSF 1.0 and CAEP 1.0 require; raises ValueError."""
    if "sub" in claims:
        raise ValueError("a SET must not carry sub (SSF 1.0: sub_id)")
    for claim in ("txn", "sub_id", "events"):
        if claim not in claims:
            raise ValueError(f"missing {claim}")
    events = claims["events"]
    if not isinstance(events, dict) or len(events) != 1:
        raise ValueError("events must hold exactly one event")
    (event_type, payload), = events.items()
    subject = claims["sub_id"]
    if event_type == VERIFICATION:
        if subject.get("format") != "opaque" or not subject.get("id"):
            raise ValueError("a verification event names its stream as an opaque subject")
        if "state" in payload and not isinstance(payload["state"], str):
            raise ValueError("verification state must be a string")
        return event_type
    if subject.get("format") != "complex":
        raise ValueError("sub_id must be a complex subject")
    user = subject.get("user", {})
    if user.get("format") != "iss_sub" or user.get("iss") != issuer or not user.get("sub"):
        raise ValueError("sub_id.user must be iss_sub of this issuer")
    if "session" in subject and (subject["session"].get("format") != "opaque" or not subject["session"].get("id")):
        raise ValueError("sub_id.session must be opaque")
    if not isinstance(payload.get("event_timestamp"), int):
        raise ValueError("event_timestamp is required")
    if event_type == SESSION_REVOKED:
        pass
    elif event_type == CREDENTIAL_CHANGE:
        if not isinstance(payload.get("credential_type"), str):
            raise ValueError("credential_type is required")
        if payload.get("change_type") not in ("create", "revoke", "update", "delete"):
            raise ValueError("change_type must be create, revoke, update or delete")
    elif event_type == TOKEN_CLAIMS_CHANGE:
        if not isinstance(payload.get("claims"), dict):
            raise ValueError("claims is required")
    else:
        raise ValueError(f"unknown event type {event_type}")
    return event_type


class Verifier:
    def __init__(self, jwks_url, ca_file, issuer, audience):
        self.jwks = jwt.PyJWKClient(jwks_url, ssl_context=ssl.create_default_context(cafile=ca_file))
        self.issuer = issuer
        self.audience = audience

    def verify(self, token):
        """The receipt of one SET: verified, or the reason it is not."""
        try:
            header = jwt.get_unverified_header(token)
            if header.get("typ") != "secevent+jwt":
                raise ValueError(f"typ is {header.get('typ')!r}, not secevent+jwt")
            key = self.jwks.get_signing_key_from_jwt(token)
            claims = jwt.decode(
                token,
                key.key,
                algorithms=["ES256"],
                issuer=self.issuer,
                audience=self.audience,
                options={"require": ["iss", "aud", "iat", "jti"], "verify_exp": False},
            )
            event_type = check_event_shape(claims, self.issuer)
            return {"ok": True, "jti": claims["jti"], "txn": claims["txn"], "type": event_type, "kid": header.get("kid"), "sub_id": claims["sub_id"], "event": claims["events"][event_type]}
        except (jwt.PyJWTError, ValueError, KeyError, AttributeError) as error:
            return {"ok": False, "error": f"{type(error).__name__}: {error}"}


def push(args):
    record = Record(args.record)
    verifier = Verifier(args.jwks, args.ca, args.issuer, args.audience)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode("utf-8")
            if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/secevent+jwt":
                return self.answer(400, {"err": "invalid_request", "description": "Content-Type must be application/secevent+jwt"})
            if args.delay_ms:
                time.sleep(args.delay_ms / 1000)
            receipt = record.add(verifier.verify(body))
            if not receipt["ok"]:
                return self.answer(400, {"err": "invalid_request", "description": receipt["error"]})
            self.answer(202, None)

        def answer(self, status, body):
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            if body is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print("listening", flush=True)
    server.serve_forever()


def poll(args):
    record = Record(args.record)
    verifier = Verifier(args.jwks, args.ca, args.issuer, args.audience)
    with open(args.token_file, encoding="utf-8") as token_file:
        token = token_file.read().strip()
    context = ssl.create_default_context(cafile=args.ca)
    ack = []
    deadline = time.time() + args.timeout
    while time.time() < deadline:
        request = urllib.request.Request(
            args.poll_url,
            data=json.dumps({"maxEvents": 50, "returnImmediately": False, "ack": ack}).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
            method="POST",
        )
        with urllib.request.urlopen(request, context=context, timeout=60) as answer:
            if answer.status != 200:
                raise SystemExit(f"poll answered {answer.status}")
            sets = json.load(answer)["sets"]
        ack = []
        for jti, set_token in sets.items():
            receipt = record.add(verifier.verify(set_token))
            if receipt.get("jti") != jti:
                receipt = record.add({"ok": False, "error": f"the sets key {jti} is not the SET's jti"})
            ack.append(jti)
        unique = len({r for r in record.seen})
        if unique >= args.expect and not ack:
            print(json.dumps({"received": unique}), flush=True)
            return
    print(json.dumps({"received": len(record.seen), "timed_out": True}), flush=True)
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["push", "poll"])
    for name in ("--jwks", "--ca", "--issuer", "--audience", "--record"):
        parser.add_argument(name, required=True)
    parser.add_argument("--port", type=int)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--delay-ms", type=int, default=0)
    parser.add_argument("--poll-url")
    parser.add_argument("--token-file")
    parser.add_argument("--expect", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args()
    push(args) if args.mode == "push" else poll(args)


if __name__ == "__main__":
    main()
