"""SET verification, and the push receiver and poll loop against real HTTP servers (http.server)."""
import json
import threading
import time
import unittest
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import package_under_test  # noqa: F401 (chooses the package imported below)
from signed_security_events import AUDIENCE, ISSUER, family_revoked, jwks, sign
from tessera_verification import (
    REVOCATION_EVENT_TYPES,
    IssuerKeys,
    RevocationProjection,
    SecurityEventRefused,
    SecurityEventVerifier,
    SharedSignalsPoller,
    SharedSignalsPushReceiver,
    push_request_handler,
)


def verifier():
    return SecurityEventVerifier(IssuerKeys.from_jwks(jwks()), ISSUER, AUDIENCE)


class SecurityEventVerification(unittest.TestCase):
    def test_takes_a_set_signed_by_the_transmitter(self):
        self.assertEqual(verifier().verify(sign(family_revoked("fam-1")))["jti"], "set-1")

    def test_refuses_what_is_not_the_transmitters_set_for_this_stream(self):
        forged = sign(family_revoked("fam-1"))
        header, payload, signature = forged.split(".")
        cases = {
            "typ": (sign(family_revoked("fam-1"), typ="JWT"), "invalid_request"),
            "iss": (sign(family_revoked("fam-1", iss="https://elsewhere.example")), "invalid_issuer"),
            "aud": (sign(family_revoked("fam-1", aud="urn:tessera:ssf:receiver:other")), "invalid_audience"),
            "kid": (sign(family_revoked("fam-1"), kid="unknown"), "invalid_key"),
            "signature": (f"{header}.{payload}.{signature[:-4]}AAAA", "invalid_key"),
            "not a JWS": ("not-a-set", "invalid_request"),
        }
        for name, (token, err) in cases.items():
            with self.subTest(name), self.assertRaises(SecurityEventRefused) as refused:
                verifier().verify(token)
            self.assertEqual(refused.exception.err, err, name)


class PushReceiver(unittest.TestCase):
    def setUp(self):
        self.projection = RevocationProjection()
        self.receiver = SharedSignalsPushReceiver(verifier(), self.projection, authorization="Bearer receiver-secret")
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), push_request_handler(self.receiver, "/ssf/events"))
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/ssf/events"

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()

    def push(self, body, authorization="Bearer receiver-secret", content_type="application/secevent+jwt"):
        request = urllib.request.Request(self.url, data=body.encode(), method="POST", headers={"Content-Type": content_type, "Authorization": authorization})
        try:
            with urllib.request.urlopen(request, timeout=5) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def test_applies_a_pushed_set_and_answers_202(self):
        self.assertFalse(self.projection.is_rejected("fam-1", 0))
        self.assertEqual(self.push(sign(family_revoked("fam-1"))), (202, b""))
        self.assertTrue(self.projection.is_rejected("fam-1", 0))
        # Delivered twice (same jti): still 202, nothing changes.
        self.assertEqual(self.push(sign(family_revoked("fam-1")))[0], 202)
        self.assertEqual(len(self.projection), 1)

    def test_refuses_without_the_streams_authorization_header(self):
        self.assertEqual(self.push(sign(family_revoked("fam-1")), authorization="Bearer guessed")[0], 401)
        self.assertFalse(self.projection.is_rejected("fam-1", 0))

    def test_answers_rfc_8935_errors(self):
        status, body = self.push(sign(family_revoked("fam-1", aud="urn:other")))
        self.assertEqual((status, json.loads(body)["err"]), (400, "invalid_audience"))
        status, body = self.push(sign(family_revoked("fam-1")), content_type="application/json")
        self.assertEqual((status, json.loads(body)["err"]), (400, "invalid_request"))
        self.assertFalse(self.projection.is_rejected("fam-1", 0))


class FakeTransmitter:
    """Tessera's SSF endpoints, as far as a poll receiver uses them: what was asked is recorded."""

    def __init__(self):
        self.streams_created = []
        self.subjects_added = []
        self.polls = []
        self.queue = {}
        #: (status, Retry-After) the next polls are refused with, in order.
        self.refusals = []
        #: When each poll came (time.monotonic()) and the status it was answered.
        self.poll_times = []
        self.lock = threading.Lock()
        transmitter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                base = f"http://127.0.0.1:{self.server.server_address[1]}"
                if self.path == "/.well-known/ssf-configuration":
                    return self.answer(200, {"issuer": ISSUER, "jwks_uri": f"{base}/jwks", "configuration_endpoint": f"{base}/ssf/streams", "add_subject_endpoint": f"{base}/ssf/subjects/add"})
                if self.path == "/jwks":
                    return self.answer(200, jwks())
                self.answer(404, {})

            def do_POST(self):
                if self.headers.get("Authorization") != "Bearer tss_receiver":
                    return self.answer(401, {})
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                base = f"http://127.0.0.1:{self.server.server_address[1]}"
                if self.path == "/ssf/streams":
                    transmitter.streams_created.append(body)
                    return self.answer(201, {"stream_id": "stream-1", "aud": AUDIENCE, "delivery": {"method": "urn:ietf:rfc:8936", "endpoint_url": f"{base}/ssf/poll?stream_id=stream-1"}})
                if self.path == "/ssf/subjects/add":
                    transmitter.subjects_added.append(body)
                    return self.answer(200, {})
                if self.path.startswith("/ssf/poll"):
                    with transmitter.lock:
                        refusal = transmitter.refusals.pop(0) if transmitter.refusals else None
                        transmitter.poll_times.append((time.monotonic(), 200 if refusal is None else refusal[0]))
                    if refusal is not None:
                        return self.answer(refusal[0], {"detail": "refused"}, {"Retry-After": refusal[1]})
                    with transmitter.lock:
                        transmitter.polls.append(body)
                        for jti in body.get("ack", []) + list(body.get("setErrs", {})):
                            transmitter.queue.pop(jti, None)
                        sets = dict(transmitter.queue)
                    if not sets and not body.get("returnImmediately"):
                        time.sleep(0.05)
                    return self.answer(200, {"sets": sets, "moreAvailable": False})
                self.answer(404, {})

            def answer(self, status, body, headers=None):
                data = json.dumps(body).encode()
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def eventually(condition, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


class PollLoop(unittest.TestCase):
    def setUp(self):
        self.transmitter = FakeTransmitter()
        self.projection = RevocationProjection()
        self.poller = SharedSignalsPoller(self.transmitter.url, "tss_receiver", self.projection, accounts=["acc-1"])

    def tearDown(self):
        self.poller.stop()
        self.transmitter.close()

    def test_creates_a_poll_stream_for_the_revocation_events_and_adds_the_accounts(self):
        self.poller.start()
        self.assertEqual(self.transmitter.streams_created[0]["delivery"], {"method": "urn:ietf:rfc:8936"})
        self.assertEqual(self.transmitter.streams_created[0]["events_requested"], list(REVOCATION_EVENT_TYPES))
        self.assertIn("urn:tessera:secevent:token-rotated", self.transmitter.streams_created[0]["events_requested"])
        self.assertEqual(self.transmitter.subjects_added, [{"stream_id": "stream-1", "subject": {"format": "iss_sub", "iss": ISSUER, "sub": "acc-1"}}])

    def test_applies_verified_sets_acknowledges_them_and_reports_refused_ones(self):
        with self.transmitter.lock:
            self.transmitter.queue["set-1"] = sign(family_revoked("fam-1", jti="set-1"))
            self.transmitter.queue["set-2"] = sign(family_revoked("fam-2", jti="set-2", aud="urn:other"))
        self.poller.start()
        self.assertTrue(eventually(lambda: self.projection.is_rejected("fam-1", 0)))
        self.assertTrue(eventually(lambda: any("set-1" in poll.get("ack", []) for poll in self.transmitter.polls)))
        self.assertTrue(eventually(lambda: any("set-2" in poll.get("setErrs", {}) for poll in self.transmitter.polls)))
        self.assertEqual(next(poll["setErrs"]["set-2"]["err"] for poll in self.transmitter.polls if "set-2" in poll.get("setErrs", {})), "invalid_audience")
        self.assertFalse(self.projection.is_rejected("fam-2", 0))
        self.assertEqual((self.poller.applied, self.poller.refused), (1, 1))

    def test_refused_429_with_retry_after_asks_again_only_once_that_wait_has_passed(self):
        # Its own backoff starts at 1 s: the transmitter asks for 3.
        with self.transmitter.lock:
            self.transmitter.refusals.append((429, "3"))
        self.poller.start()
        self.assertTrue(eventually(lambda: len(self.transmitter.poll_times) >= 2, timeout=10.0))
        (refused_at, status), (next_at, _) = self.transmitter.poll_times[:2]
        self.assertEqual(status, 429)
        self.assertGreaterEqual(next_at - refused_at, 2.95)
        self.assertLess(next_at - refused_at, 5.0)


if __name__ == "__main__":
    unittest.main()
