"""Verify Tessera access tokens (Bearer and DPoP-bound) and hear its revocations through Shared
Signals, in any Python service: no Kafka, no call to Tessera per request."""
from .access_refusal import AccessDecision
from .access_token_verifier import AUDIENCES, AccessTokenVerifier, PresentedRequest, Requirement
from .dpop_proof import DPOP_SIGNING_ALGORITHMS, SpentProofIds, access_token_hash, jwk_thumbprint
from .issuer_keys import IssuerKeys
from .revocation_projection import RevocationProjection
from .security_events import (
    CREDENTIAL_CHANGE,
    REVOCATION_EVENT_TYPES,
    SESSION_REVOKED,
    TOKEN_ROTATED,
    SecurityEventRefused,
    SecurityEventVerifier,
    apply_security_event,
)
from .shared_signals_poll import SharedSignalsError, SharedSignalsPoller
from .shared_signals_push import SharedSignalsPushReceiver, push_request_handler

__version__ = "0.1.0"

__all__ = [
    "AUDIENCES",
    "AccessDecision",
    "AccessTokenVerifier",
    "CREDENTIAL_CHANGE",
    "DPOP_SIGNING_ALGORITHMS",
    "IssuerKeys",
    "PresentedRequest",
    "REVOCATION_EVENT_TYPES",
    "Requirement",
    "RevocationProjection",
    "SESSION_REVOKED",
    "SecurityEventRefused",
    "SecurityEventVerifier",
    "SharedSignalsError",
    "SharedSignalsPoller",
    "SharedSignalsPushReceiver",
    "SpentProofIds",
    "TOKEN_ROTATED",
    "access_token_hash",
    "apply_security_event",
    "jwk_thumbprint",
    "push_request_handler",
]
