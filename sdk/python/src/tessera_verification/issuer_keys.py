"""The issuer's signing keys (its JWKS, RFC 7517), looked at again when a token names a kid not
seen yet: `tessera keys rotate` publishes a new key before tokens are signed with it."""
from __future__ import annotations

import json
import logging
import ssl
import threading
import time
import urllib.request
from typing import Any, Callable, Dict, Mapping, Optional

from jwt.algorithms import ECAlgorithm

_log = logging.getLogger(__name__)


class IssuerKeys:
    """ES256 public keys by kid.

    Built from a JWKS document (`IssuerKeys.from_jwks`) or fetched from a URL (`IssuerKeys.fetch`);
    a fetched set is fetched again on an unknown kid, at most once per `refresh_cooldown_seconds`
    whatever the number of requests: anyone can put any kid in a token, so a flood of forged kids
    costs one fetch per cooldown.
    """

    def __init__(
        self,
        jwks: Optional[Mapping[str, Any]] = None,
        *,
        jwks_url: Optional[str] = None,
        ssl_context: Optional[ssl.SSLContext] = None,
        refresh_cooldown_seconds: float = 5.0,
        timeout_seconds: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._keys: Dict[str, Any] = {}
        self._jwks_url = jwks_url
        self._ssl_context = ssl_context
        self._cooldown = refresh_cooldown_seconds
        self._timeout = timeout_seconds
        self._clock = clock
        self._last_fetch = float("-inf")
        self._lock = threading.Lock()
        if jwks is not None:
            self._keys = _es256_keys_of(jwks)

    @classmethod
    def from_jwks(cls, jwks: Mapping[str, Any]) -> "IssuerKeys":
        """A fixed set: an unknown kid is refused without looking anywhere."""
        return cls(jwks)

    @classmethod
    def fetch(cls, jwks_url: str, *, ssl_context: Optional[ssl.SSLContext] = None, refresh_cooldown_seconds: float = 5.0) -> "IssuerKeys":
        """The JWKS at `jwks_url` (Tessera: `<public URL>/.well-known/jwks.json`), fetched now."""
        keys = cls(jwks_url=jwks_url, ssl_context=ssl_context, refresh_cooldown_seconds=refresh_cooldown_seconds)
        keys._load()
        return keys

    def find(self, kid: str) -> Optional[Any]:
        """The public key of `kid`, or None."""
        return self._keys.get(kid)

    def find_or_refresh(self, kid: str) -> Optional[Any]:
        """find(), with one fetch of the JWKS first when the kid is unknown and the cooldown allows."""
        key = self._keys.get(kid)
        if key is not None or self._jwks_url is None:
            return key
        self.refresh()
        return self._keys.get(kid)

    def refresh(self) -> None:
        """Fetch the JWKS again unless one was fetched within the cooldown. A failed fetch keeps the keys known."""
        with self._lock:
            if self._clock() - self._last_fetch < self._cooldown:
                return
            try:
                self._load()
            except (OSError, ValueError) as error:
                _log.warning("tessera_verification: the JWKS could not be fetched again (%s); keeping the %d keys known", type(error).__name__, len(self._keys))

    def _load(self) -> None:
        assert self._jwks_url is not None
        self._last_fetch = self._clock()
        request = urllib.request.Request(self._jwks_url, headers={"Accept": "application/json"})
        with urllib.request.urlopen(request, context=self._ssl_context, timeout=self._timeout) as answer:
            document = json.load(answer)
        if not isinstance(document, dict):
            raise ValueError("the JWKS is not a JSON object")
        # Replaced whole: a dict assignment is atomic, so readers see the old set or the new one.
        self._keys = _es256_keys_of(document)

    def __len__(self) -> int:
        return len(self._keys)


def _es256_keys_of(jwks: Mapping[str, Any]) -> Dict[str, Any]:
    """The P-256 signing keys of a JWKS by kid; other keys are skipped (Tessera publishes only these)."""
    keys: Dict[str, Any] = {}
    for jwk in jwks.get("keys", []):
        if not isinstance(jwk, dict) or jwk.get("kty") != "EC" or jwk.get("crv") != "P-256" or not isinstance(jwk.get("kid"), str):
            continue
        if jwk.get("use", "sig") != "sig" or jwk.get("alg", "ES256") != "ES256":
            continue
        public = {member: jwk[member] for member in ("kty", "crv", "x", "y") if member in jwk}
        try:
            keys[jwk["kid"]] = ECAlgorithm.from_jwk(json.dumps(public))
        except Exception as error:  # PyJWT raises InvalidKeyError or cryptography's ValueError for a bad point
            _log.warning("tessera_verification: skipping JWKS key %s (%s)", jwk["kid"], type(error).__name__)
    return keys
