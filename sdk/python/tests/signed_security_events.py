"""SETs signed with the committed test-only key, as Tessera's transmitter signs them."""
import json
import os

import jwt
from jwt.algorithms import ECAlgorithm

from package_under_test import TEST_KEYS

ISSUER = "https://tessera.test.example"
AUDIENCE = "urn:tessera:ssf:receiver:test"
SESSION_REVOKED = "https://schemas.openid.net/secevent/caep/event-type/session-revoked"

with open(os.path.join(TEST_KEYS, "test-only-signing-key.jwk.json"), encoding="utf-8") as key_file:
    SIGNING_JWK = json.load(key_file)
PUBLIC_JWK = {member: SIGNING_JWK[member] for member in ("kty", "crv", "x", "y")}
_private_key = ECAlgorithm.from_jwk(json.dumps(SIGNING_JWK))


def kid():
    from tessera_verification import jwk_thumbprint

    return jwk_thumbprint(PUBLIC_JWK)


def jwks():
    return {"keys": [{**PUBLIC_JWK, "kid": kid(), "alg": "ES256", "use": "sig"}]}


def family_revoked(family_id, jti="set-1", now=1_800_000_000, **overrides):
    claims = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "jti": jti,
        "iat": now,
        "txn": f"txn-{jti}",
        "sub_id": {"format": "complex", "user": {"format": "iss_sub", "iss": ISSUER, "sub": "acc-1"}, "session": {"format": "opaque", "id": family_id}},
        "events": {SESSION_REVOKED: {"event_timestamp": now, "initiating_entity": "user"}},
    }
    claims.update(overrides)
    return claims


def sign(claims, **header):
    return jwt.encode(claims, _private_key, algorithm="ES256", headers={"typ": "secevent+jwt", "kid": kid(), **header})
