"""Authlib's OAuth2Session against Tessera's OAuth 2.0 endpoints, as a Python service would use it.

Usage: oauth_session.py ISSUER CA_FILE AUTH_METHOD   (client id and secret on stdin, one per line)

Reads the RFC 8414 metadata, then: client_credentials, a refresh, introspection and revocation
through Authlib's own calls. Prints one JSON object with what each step answered; never a secret.
"""
import json
import sys

import requests
from authlib.integrations.requests_client import OAuth2Session

issuer, ca_file, method = sys.argv[1], sys.argv[2], sys.argv[3]
client_id, client_secret = sys.stdin.read().split("\n")[:2]

metadata = requests.get(f"{issuer}/.well-known/oauth-authorization-server", verify=ca_file, timeout=10).json()
session = OAuth2Session(client_id, client_secret, token_endpoint_auth_method=method, scope="transaction:charge")

issued = session.fetch_token(metadata["token_endpoint"], grant_type="client_credentials", verify=ca_file)
refreshed = session.refresh_token(metadata["token_endpoint"], refresh_token=issued["refresh_token"], verify=ca_file)
introspected = session.introspect_token(metadata["introspection_endpoint"], token=refreshed["access_token"], verify=ca_file).json()
revoked = session.revoke_token(metadata["revocation_endpoint"], token=refreshed["refresh_token"], token_type_hint="refresh_token", verify=ca_file)
after = session.introspect_token(metadata["introspection_endpoint"], token=refreshed["access_token"], verify=ca_file).json()

print(json.dumps({
    "issuer": metadata["issuer"],
    "issued": {"token_type": issued["token_type"], "scope": issued.get("scope"), "has_refresh_token": "refresh_token" in issued},
    "first_access_token": issued["access_token"],
    "refreshed_access_token": refreshed["access_token"],
    "introspected": introspected,
    "revoke_status": revoked.status_code,
    "after_revoke": after,
}))
