"""The WSGI middleware answers refusals itself and hands the claims to the application."""
import json
import unittest

import package_under_test  # noqa: F401 (chooses the package imported below)
from package_under_test import VECTORS
from tessera_verification import AccessTokenVerifier, IssuerKeys, Requirement
from tessera_verification.wsgi import protect

with open(VECTORS, encoding="utf-8") as vectors_file:
    vectors = json.load(vectors_file)
valid = next(case for case in vectors["cases"] if case["name"] == "valid bearer token")


def call(application, authorization=None):
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/orders", "wsgi.url_scheme": "https", "HTTP_HOST": "api.test.example"}
    if authorization is not None:
        environ["HTTP_AUTHORIZATION"] = authorization
    answered = {}

    def start_response(status, headers):
        answered["status"], answered["headers"] = status, dict(headers)

    body = b"".join(application(environ, start_response))
    return answered["status"], answered["headers"], body


class Middleware(unittest.TestCase):
    def setUp(self):
        verifier = AccessTokenVerifier(IssuerKeys.from_jwks(vectors["jwks"]), vectors["issuer"], now=lambda: valid["now"])

        def orders(environ, start_response):
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [environ["tessera.claims"]["sub"].encode()]

        self.application = protect(orders, verifier, Requirement("v5", permission="orders:read"))
        self.refunds = protect(orders, verifier, Requirement("v5", permission="orders:refund"))

    def test_a_valid_token_reaches_the_application_with_its_claims(self):
        status, _, body = call(self.application, valid["authorization"])
        self.assertEqual((status, body), ("200 OK", b"acc_test_0001"))

    def test_refusals_are_answered_with_their_challenge(self):
        status, headers, body = call(self.application)
        self.assertEqual(status, "401 Unauthorized")
        self.assertTrue(headers["WWW-Authenticate"].startswith("Bearer, DPoP algs="))
        self.assertEqual(json.loads(body)["status"], 401)
        status, headers, _ = call(self.refunds, valid["authorization"])
        self.assertEqual((status, headers["WWW-Authenticate"]), ("403 Forbidden", 'Bearer error="insufficient_scope", scope="orders:refund"'))


if __name__ == "__main__":
    unittest.main()
