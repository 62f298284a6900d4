"""Poll delivery (RFC 8936) on a thread: the receiver needs no server of its own. It creates a poll
stream at Tessera's transmitter with its receiver token, names the accounts it cares about, asks
for every event type that refuses tokens (the rotation one included), then long-polls: each SET
is verified, applied to the projection and acknowledged in the next poll."""
from __future__ import annotations

import datetime
import email.utils
import json
import logging
import ssl
import threading
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterable, List, Optional

from .issuer_keys import IssuerKeys
from .revocation_projection import RevocationProjection
from .security_events import REVOCATION_EVENT_TYPES, SecurityEventRefused, SecurityEventVerifier, apply_security_event

_log = logging.getLogger(__name__)
_poll_method = "urn:ietf:rfc:8936"


class SharedSignalsError(Exception):
    """The transmitter answered a stream request with an error (the receiver token is never in it).

    `retry_after_seconds` is how long it asked to wait before asking again (its `Retry-After`, as a
    429 or a 503 sends), or None when it did not say."""

    def __init__(self, message: str, retry_after_seconds: Optional[float] = None) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds


#: Most of a Retry-After taken: a transmitter asking for longer is asked again after this, so
#: revocations are never held back for long.
_LONGEST_RETRY_AFTER_SECONDS = 300.0


def _retry_after_seconds(header: Optional[str]) -> Optional[float]:
    """RFC 9110 section 10.2.3: whole seconds, or an HTTP date; None when absent or neither."""
    if header is None:
        return None
    text = header.strip()
    if text.isdigit():
        return min(float(text), _LONGEST_RETRY_AFTER_SECONDS)
    try:
        at = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if at.tzinfo is None:
        return None
    return min(max(0.0, (at - datetime.datetime.now(datetime.timezone.utc)).total_seconds()), _LONGEST_RETRY_AFTER_SECONDS)


class SharedSignalsPoller:
    """Keeps `projection` up to date from Tessera's Shared Signals transmitter by polling.

    `transmitter_url` is Tessera's public URL (its `/.well-known/ssf-configuration` names the rest);
    `receiver_token` comes from `tessera ssf-receivers create`. Give `stream_id` to go on with a
    stream made before (a restart): SETs not acknowledged yet are then delivered again.
    """

    def __init__(
        self,
        transmitter_url: str,
        receiver_token: str,
        projection: RevocationProjection,
        *,
        accounts: Iterable[str] = (),
        stream_id: Optional[str] = None,
        keys: Optional[IssuerKeys] = None,
        ssl_context: Optional[ssl.SSLContext] = None,
        max_access_token_lifetime_seconds: int = 3600,
        max_events: int = 100,
        description: str = "tessera_verification (Python)",
        request_timeout_seconds: float = 70.0,
    ) -> None:
        self.projection = projection
        self._transmitter_url = transmitter_url.rstrip("/")
        self._receiver_token = receiver_token
        self._accounts = list(accounts)
        self._keys = keys
        self._ssl_context = ssl_context
        self._lifetime = max_access_token_lifetime_seconds
        self._max_events = max_events
        self._description = description
        self._timeout = request_timeout_seconds
        self._stopping = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._pending_acks: List[str] = []
        self._pending_errors: Dict[str, Dict[str, str]] = {}
        self.stream_id = stream_id
        self.audience: Optional[str] = None
        self.issuer: Optional[str] = None
        self._poll_url: Optional[str] = None
        self._add_subject_url: Optional[str] = None
        self._verifier: Optional[SecurityEventVerifier] = None
        #: SETs applied, and SETs refused (reported back to Tessera as setErrs), since start.
        self.applied = 0
        self.refused = 0

    def start(self) -> "SharedSignalsPoller":
        """Reads the transmitter's metadata, creates (or reads) the stream and adds the accounts —
        raising SharedSignalsError or OSError if that fails — then polls on a daemon thread."""
        metadata = self._request("GET", f"{self._transmitter_url}/.well-known/ssf-configuration", authorized=False)
        self.issuer = metadata["issuer"]
        self._add_subject_url = metadata["add_subject_endpoint"]
        if self._keys is None:
            self._keys = IssuerKeys.fetch(metadata["jwks_uri"], ssl_context=self._ssl_context)
        if self.stream_id is None:
            stream = self._request(
                "POST",
                metadata["configuration_endpoint"],
                {"delivery": {"method": _poll_method}, "events_requested": list(REVOCATION_EVENT_TYPES), "description": self._description},
            )
        else:
            stream = self._request("GET", f"{metadata['configuration_endpoint']}?{urllib.parse.urlencode({'stream_id': self.stream_id})}")
        self.stream_id = stream["stream_id"]
        self.audience = stream["aud"]
        self._poll_url = stream["delivery"]["endpoint_url"]
        self._verifier = SecurityEventVerifier(self._keys, self.issuer, self.audience)
        for account_id in self._accounts:
            self.add_account(account_id)
        self._thread = threading.Thread(target=self._run, name="tessera-ssf-poll", daemon=True)
        self._thread.start()
        return self

    def add_account(self, account_id: str) -> None:
        """Every SET about this account (its tokens' `sub`) is delivered from now on."""
        self._request("POST", self._add_subject_url, {"stream_id": self.stream_id, "subject": {"format": "iss_sub", "iss": self.issuer, "sub": account_id}})

    def stop(self, timeout_seconds: float = 5.0) -> None:
        """Ends the loop after the poll under way, acknowledging what was applied."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout_seconds)

    def poll_once(self, *, wait: bool) -> int:
        """One poll: acknowledges what the last one applied, applies what comes; returns how many SETs came."""
        assert self._poll_url is not None and self._verifier is not None, "start() first"
        body: Dict[str, Any] = {"maxEvents": self._max_events, "returnImmediately": not wait, "ack": self._pending_acks}
        if self._pending_errors:
            body["setErrs"] = self._pending_errors
        answer = self._request("POST", self._poll_url, body)
        self._pending_acks, self._pending_errors = [], {}
        sets = answer.get("sets") or {}
        for jti, security_event_token in sets.items():
            try:
                claims = self._verifier.verify(security_event_token)
                if claims["jti"] != jti:
                    raise SecurityEventRefused("invalid_request", "the SET's jti is not the key it was polled under")
            except SecurityEventRefused as refused:
                _log.warning("tessera_verification: SET %s refused: %s (%s)", jti, refused.err, refused.description)
                self._pending_errors[jti] = {"err": refused.err, "description": refused.description}
                self.refused += 1
                continue
            apply_security_event(self.projection, claims, max_access_token_lifetime_seconds=self._lifetime)
            self._pending_acks.append(jti)
            self.applied += 1
        return len(sets)

    def _run(self) -> None:
        backoff = 1.0
        while not self._stopping.is_set():
            try:
                self.poll_once(wait=True)
                backoff = 1.0
            except (OSError, ValueError, KeyError, SharedSignalsError) as error:
                # A refusal that says when to ask again (a 429 or 503 with Retry-After) is asked again then, not sooner.
                retry_after = error.retry_after_seconds if isinstance(error, SharedSignalsError) else None
                wait = backoff if retry_after is None else max(backoff, retry_after)
                _log.warning("tessera_verification: polling %s failed (%s: %s); again in %.0f s", self.stream_id, type(error).__name__, error, wait)
                self._stopping.wait(wait)
                if retry_after is None:
                    backoff = min(backoff * 2, 30.0)
        if self._pending_acks or self._pending_errors:
            try:
                self.poll_once(wait=False)
            except (OSError, ValueError, KeyError, SharedSignalsError):
                pass  # what is not acknowledged is delivered again; applying it twice changes nothing

    def _request(self, method: str, url: str, body: Optional[Dict[str, Any]] = None, *, authorized: bool = True) -> Dict[str, Any]:
        headers = {"Accept": "application/json"}
        if authorized:
            headers["Authorization"] = f"Bearer {self._receiver_token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, context=self._ssl_context, timeout=self._timeout) as answer:
                text = answer.read()
        except urllib.error.HTTPError as error:
            detail = error.read()[:500].decode("utf-8", "replace")
            raise SharedSignalsError(f"{method} {urllib.parse.urlsplit(url).path} answered {error.code}: {detail}", _retry_after_seconds(error.headers.get("Retry-After"))) from None
        value = json.loads(text) if text else {}
        if not isinstance(value, dict):
            raise SharedSignalsError(f"{method} {urllib.parse.urlsplit(url).path} answered no JSON object")
        return value
