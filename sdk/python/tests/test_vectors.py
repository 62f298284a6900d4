"""The shared verification vectors (test/vectors/verification/vectors.json), which the Node
verifier passes by construction: the same request gets the same status and challenge here."""
import json
import unittest

import package_under_test  # noqa: F401 (chooses the package imported below)
from package_under_test import VECTORS
from tessera_verification import AccessTokenVerifier, IssuerKeys, PresentedRequest, Requirement, RevocationProjection, apply_security_event

with open(VECTORS, encoding="utf-8") as vectors_file:
    vectors = json.load(vectors_file)


def decide(case):
    projection = RevocationProjection(clock_skew_seconds=vectors["clock_skew_seconds"])
    for payload in case["revocations"]:
        apply_security_event(projection, payload, max_access_token_lifetime_seconds=vectors["max_access_token_lifetime_seconds"])
    verifier = AccessTokenVerifier(
        IssuerKeys.from_jwks(vectors["jwks"]),
        vectors["issuer"],
        projection=projection,
        clock_skew_seconds=vectors["clock_skew_seconds"],
        now=lambda: case["now"],
    )
    request = case.get("request")
    presented = None if request is None else PresentedRequest(method=request["method"], url=request["url"], dpop=request.get("dpop"))
    return verifier.check(case["authorization"], Requirement(**case["requirement"]), presented)


class SharedVectors(unittest.TestCase):
    def test_there_are_cases(self):
        self.assertGreaterEqual(len(vectors["cases"]), 30)

    def test_every_case(self):
        for case in vectors["cases"]:
            with self.subTest(case["name"]):
                decision = decide(case)
                challenge = decision.www_authenticate
                scheme = challenge.split(" ")[0].rstrip(",") if challenge else None
                self.assertEqual({"status": decision.status, "error": decision.error, "scheme": scheme}, case["expected"])
                if decision.status == 200:
                    self.assertEqual(decision.claims["iss"], vectors["issuer"])

    def test_a_dpop_proof_is_taken_once(self):
        case = next(case for case in vectors["cases"] if case["name"] == "DPoP-bound token with a good proof")
        verifier = AccessTokenVerifier(IssuerKeys.from_jwks(vectors["jwks"]), vectors["issuer"], clock_skew_seconds=vectors["clock_skew_seconds"], now=lambda: case["now"])
        request = PresentedRequest(**case["request"])
        requirement = Requirement(**case["requirement"])
        self.assertEqual(verifier.check(case["authorization"], requirement, request).status, 200)
        replayed = verifier.check(case["authorization"], requirement, request)
        self.assertEqual((replayed.status, replayed.error, replayed.code), (401, "invalid_dpop_proof", "ERR_DPOP_PROOF_INVALID"))


if __name__ == "__main__":
    unittest.main()
