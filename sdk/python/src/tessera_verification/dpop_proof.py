"""RFC 9449 (DPoP) proofs at a resource server, checked as Tessera's Node verifier checks them:
one JWT with `typ` dpop+jwt, an allowed asymmetric `alg`, a public `jwk` whose signature
verifies, `htm` and `htu` of this request, an `iat` within the window, `ath` of the access token,
and a `jti` never taken before."""
from __future__ import annotations

import hashlib
import json
import math
import threading
from collections import OrderedDict
from typing import Any, Dict, Optional, Tuple
from urllib.parse import urlsplit

from jwt.algorithms import get_default_algorithms
from jwt.exceptions import InvalidKeyError

from .compact_jws import JsonObject, decode_base64url, encode_base64url, json_object_of, split_compact

#: The algorithms a proof may be signed with: asymmetric only (RFC 9449 section 4.2).
DPOP_SIGNING_ALGORITHMS = ("ES256", "RS256", "PS256", "EdDSA")
#: How long after its `iat` a proof is taken (plus the clock skew).
DPOP_PROOF_LIFETIME_SECONDS = 60

_max_proof_length = 4096
_max_jti_length = 128
_private_members = ("d", "p", "q", "dp", "dq", "qi", "oth", "k")
_thumbprint_members = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}
_algorithms = get_default_algorithms()


class DpopProofRefused(Exception):
    """Why a proof was refused: names which check failed, never the proof or the token."""


class SpentProofIds:
    """The `jti`s of the proofs taken, each kept while its proof's `iat` is inside the window.

    Bounded without ever taking a replay: when full, the oldest entry goes and the window's lower
    edge rises to its `iat`, so a proof as old as a forgotten one is refused by its age instead.
    """

    def __init__(self, *, clock_skew_seconds: int, capacity: int = 200_000) -> None:
        self._window = DPOP_PROOF_LIFETIME_SECONDS + clock_skew_seconds
        self._capacity = capacity
        self._iats: "OrderedDict[str, int]" = OrderedDict()
        self._floor = float("-inf")
        self._lock = threading.Lock()

    def spend(self, jkt: str, jti: str, iat: int, now: int) -> bool:
        """True the first time a key's jti is spent; False for a replay, or a proof no newer than a forgotten one."""
        with self._lock:
            edge = now - self._window
            while self._iats:
                oldest_key, oldest_iat = next(iter(self._iats.items()))
                if oldest_iat >= edge:
                    break
                del self._iats[oldest_key]
            if iat <= self._floor:
                return False
            key = f"{jkt} {jti}"
            if key in self._iats:
                return False
            if len(self._iats) >= self._capacity:
                _, oldest_iat = self._iats.popitem(last=False)
                self._floor = max(self._floor, oldest_iat)
                if iat <= self._floor:
                    return False
            self._iats[key] = iat
            return True

    def __len__(self) -> int:
        return len(self._iats)


def access_token_hash(access_token: str) -> str:
    """RFC 9449 section 4.2, `ath`: the base64url SHA-256 of the access token's ASCII."""
    return encode_base64url(hashlib.sha256(access_token.encode("ascii")).digest())


def jwk_thumbprint(jwk: JsonObject) -> str:
    """RFC 7638: the SHA-256 of the key's required members as JSON, in order, without whitespace."""
    members = _thumbprint_members[jwk["kty"]]
    canonical = "{" + ",".join(f"{json.dumps(member)}:{json.dumps(jwk[member])}" for member in members) + "}"
    return encode_base64url(hashlib.sha256(canonical.encode("utf-8")).digest())


def check_dpop_proof(
    proof: str,
    *,
    method: str,
    url: str,
    now: int,
    clock_skew_seconds: int,
    spent_ids: SpentProofIds,
    access_token: Optional[str] = None,
) -> str:
    """The RFC 7638 thumbprint of the proof's key (what `cnf.jkt` must hold); raises DpopProofRefused."""
    if len(proof) > _max_proof_length:
        raise DpopProofRefused("the DPoP proof is too long")
    segments = split_compact(proof)
    if segments is None:
        raise DpopProofRefused("the DPoP proof is not a compact JWS")
    encoded_header, encoded_payload, encoded_signature = segments
    algorithm, key, jkt = _proof_key_of(encoded_header)
    try:
        signature = decode_base64url(encoded_signature)
        verified = algorithm.verify(f"{encoded_header}.{encoded_payload}".encode("ascii"), key, signature)
    except Exception:  # a malformed signature of any kind is a signature that does not verify
        verified = False
    if not verified:
        raise DpopProofRefused("the DPoP proof's signature does not verify")

    claims = json_object_of(encoded_payload)
    if claims is None:
        raise DpopProofRefused("the DPoP proof's claims are not a JSON object")
    jti, iat = claims.get("jti"), claims.get("iat")
    if not isinstance(jti, str) or jti == "" or len(jti) > _max_jti_length:
        raise DpopProofRefused(f"the DPoP proof's jti must be a string of 1 to {_max_jti_length} characters")
    if claims.get("htm") != method:
        raise DpopProofRefused("the DPoP proof's htm is not this request's method")
    htu = claims.get("htu")
    if not isinstance(htu, str) or not _same_target(htu, url):
        raise DpopProofRefused("the DPoP proof's htu is not this request's URL")
    if isinstance(iat, bool) or not isinstance(iat, (int, float)) or not math.isfinite(iat):
        raise DpopProofRefused("the DPoP proof has no iat")
    if iat > now + clock_skew_seconds or iat < now - DPOP_PROOF_LIFETIME_SECONDS - clock_skew_seconds:
        raise DpopProofRefused("the DPoP proof's iat is outside the accepted window")
    if access_token is not None and claims.get("ath") != access_token_hash(access_token):
        raise DpopProofRefused("the DPoP proof's ath does not match the access token")
    # Last, so that a proof refused for another reason spends nothing.
    if not spent_ids.spend(jkt, jti, math.floor(iat), now):
        raise DpopProofRefused("the DPoP proof was used before (its jti is single use)")
    return jkt


def _proof_key_of(encoded_header: str) -> Tuple[Any, Any, str]:
    header = json_object_of(encoded_header)
    if header is None or header.get("typ") != "dpop+jwt":
        raise DpopProofRefused("the DPoP proof's typ must be dpop+jwt")
    alg = header.get("alg")
    if alg not in DPOP_SIGNING_ALGORITHMS:
        raise DpopProofRefused(f"the DPoP proof's alg must be one of {', '.join(DPOP_SIGNING_ALGORITHMS)}")
    jwk = header.get("jwk")
    if not isinstance(jwk, dict) or any(member in jwk for member in _private_members):
        raise DpopProofRefused("the DPoP proof's jwk must be a public key")
    key = _public_key_of(jwk, alg)
    if key is None:
        raise DpopProofRefused("the DPoP proof's jwk does not fit its alg")
    return _algorithms[alg], key, jwk_thumbprint(jwk)


def _public_key_of(jwk: Dict[str, Any], alg: str) -> Optional[Any]:
    if alg == "ES256":
        fits = jwk.get("kty") == "EC" and jwk.get("crv") == "P-256"
    elif alg == "EdDSA":
        fits = jwk.get("kty") == "OKP" and jwk.get("crv") == "Ed25519"
    else:
        fits = jwk.get("kty") == "RSA"
    members = _thumbprint_members.get(jwk.get("kty", ""), ())
    if not fits or not all(isinstance(jwk.get(member), str) for member in members):
        return None
    try:
        key = _algorithms[alg].from_jwk(json.dumps(jwk))
    except (InvalidKeyError, ValueError, TypeError, KeyError):
        return None
    if jwk["kty"] == "RSA" and key.key_size < 2048:
        return None
    return key


_default_ports = {"http": 80, "https": 443}


def _target_of(url: str) -> Optional[str]:
    """Scheme, host, port and path after RFC 3986 section 6 normalisation (case of scheme and
    host, default ports dropped, an empty path as "/"); the query and fragment ignored."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname
    if not scheme or not host:
        return None
    if ":" in host:
        host = f"[{host}]"
    authority = host if port is None or _default_ports.get(scheme) == port else f"{host}:{port}"
    return f"{scheme}://{authority}{parts.path or '/'}"


def _same_target(htu: str, url: str) -> bool:
    claimed = _target_of(htu)
    return claimed is not None and claimed == _target_of(url)
