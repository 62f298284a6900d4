"""The JWKS fetched from the issuer, and fetched again for an unknown kid at most once per cooldown."""
import json
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import package_under_test  # noqa: F401 (chooses the package imported below)
from signed_security_events import jwks
from tessera_verification import IssuerKeys


class JwksServer:
    def __init__(self):
        self.document = {"keys": []}
        self.fetches = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                owner.fetches += 1
                data = json.dumps(owner.document).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/.well-known/jwks.json"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class IssuerKeysFetch(unittest.TestCase):
    def setUp(self):
        self.jwks_server = JwksServer()

    def tearDown(self):
        self.jwks_server.close()

    def test_an_unknown_kid_is_looked_up_again_once_per_cooldown(self):
        clock = [0.0]
        keys = IssuerKeys(jwks_url=self.jwks_server.url, refresh_cooldown_seconds=30, clock=lambda: clock[0])
        published = jwks()["keys"][0]
        self.assertIsNone(keys.find_or_refresh(published["kid"]))
        self.assertEqual(self.jwks_server.fetches, 1)
        # A new key is published (tessera keys rotate): still within the cooldown, no fetch.
        self.jwks_server.document = jwks()
        clock[0] = 10.0
        for _ in range(50):
            self.assertIsNone(keys.find_or_refresh(published["kid"]))
        self.assertEqual(self.jwks_server.fetches, 1)
        clock[0] = 31.0
        self.assertIsNotNone(keys.find_or_refresh(published["kid"]))
        self.assertEqual(self.jwks_server.fetches, 2)
        # Known now: no fetch at all.
        clock[0] = 100.0
        self.assertIsNotNone(keys.find_or_refresh(published["kid"]))
        self.assertEqual(self.jwks_server.fetches, 2)

    def test_fetch_reads_the_keys_now(self):
        self.jwks_server.document = jwks()
        self.assertEqual(len(IssuerKeys.fetch(self.jwks_server.url)), 1)


if __name__ == "__main__":
    unittest.main()
