"""Verifies a Tessera access token with PyJWT, as a Python service would: the signing key from the
JWKS by the token's kid (PyJWKClient), signature, expiry, issuer and audience checked by jwt.decode.

Usage: verify_token.py JWKS_URL CA_FILE ISSUER AUDIENCE < token
Prints the verified header and claims as JSON, or {"error": ...} and exits 1.
"""
import json
import ssl
import sys

import jwt

jwks_url, ca_file, issuer, audience = sys.argv[1:5]
token = sys.stdin.read().strip()
try:
    # The server's certificate is self-signed in tests: trusted by file, as a private CA would be.
    context = ssl.create_default_context(cafile=ca_file)
    signing_key = jwt.PyJWKClient(jwks_url, ssl_context=context).get_signing_key_from_jwt(token)
    claims = jwt.decode(
        token,
        signing_key.key,
        algorithms=["ES256", "EdDSA"],
        issuer=issuer,
        audience=audience,
        options={"require": ["exp", "iat", "iss", "sub", "aud", "jti"]},
    )
    print(json.dumps({"header": jwt.get_unverified_header(token), "claims": claims}))
except jwt.PyJWTError as error:
    print(json.dumps({"error": type(error).__name__, "message": str(error)}))
    sys.exit(1)
