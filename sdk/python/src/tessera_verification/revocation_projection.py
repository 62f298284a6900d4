"""What has been revoked, in memory: the port of @tessera/verification's RevocationProjection.

Families (a `fid` and every refresh after it) revoked or rotated past a generation, and cuts of
every token of an account or of a client id issued before a time. Each entry is forgotten once
every token it rejects has expired (its `rejects_until` plus the clock skew), so memory follows the
revocation rate, not history. Applying is a max() of each part: duplicates and any order of
delivery change nothing. Thread-safe: a Shared Signals thread applies while requests read.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Dict, Tuple


class _Family:
    __slots__ = ("forget_at", "lowest_valid", "revoked")

    def __init__(self, forget_at: int, lowest_valid: int, revoked: bool) -> None:
        self.forget_at = forget_at
        self.lowest_valid = lowest_valid
        self.revoked = revoked


class RevocationProjection:
    def __init__(self, *, clock_skew_seconds: int = 60) -> None:
        self._clock_skew = clock_skew_seconds
        self._families: "OrderedDict[str, _Family]" = OrderedDict()
        # key → (forget_at, not_before); cuts are operator actions, so there are few.
        self._account_cuts: Dict[str, Tuple[int, int]] = {}
        self._credential_cuts: Dict[str, Tuple[int, int]] = {}
        self._forgotten_up_to = float("-inf")
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._families) + len(self._account_cuts) + len(self._credential_cuts)

    def revoke_family(self, family_id: str, rejects_until: int) -> None:
        """Every token of the family is refused (CAEP session-revoked with a session)."""
        self._apply_family(family_id, rejects_until, 0, True)

    def rotate_family(self, family_id: str, generation: int, rejects_until: int) -> None:
        """Tokens of the family with a generation below `generation` are refused (a refresh rotated it)."""
        self._apply_family(family_id, rejects_until, generation, False)

    def cut_account(self, account_id: str, not_before: int, rejects_until: int) -> None:
        """Tokens whose `sub` is the account and whose `iat` is before `not_before` are refused."""
        self._apply_cut(self._account_cuts, account_id, not_before, rejects_until)

    def cut_credential(self, client_id: str, not_before: int, rejects_until: int) -> None:
        """Tokens whose `client_id` is this and whose `iat` is before `not_before` are refused."""
        self._apply_cut(self._credential_cuts, client_id, not_before, rejects_until)

    def is_rejected(self, family_id: str, generation: int) -> bool:
        """True when a token of this family and generation was rotated away or revoked."""
        family = self._families.get(family_id)
        return family is not None and (family.revoked or generation < family.lowest_valid)

    def is_cut_off(self, account_id: str, client_id: str, issued_at: int) -> bool:
        """True when a cut of the token's account or client id was made after the token was issued."""
        if not self._account_cuts and not self._credential_cuts:
            return False
        by_account = self._account_cuts.get(account_id)
        if by_account is not None and issued_at < by_account[1]:
            return True
        by_client = self._credential_cuts.get(client_id)
        return by_client is not None and issued_at < by_client[1]

    def forget_expired(self, now_seconds: int) -> int:
        """Drops entries that can no longer reject an unexpired token; returns how many went."""
        with self._lock:
            self._forgotten_up_to = max(self._forgotten_up_to, now_seconds)
            forgotten = 0
            while self._families:
                family_id, family = next(iter(self._families.items()))
                if family.forget_at > now_seconds:
                    break
                del self._families[family_id]
                forgotten += 1
            for cuts in (self._account_cuts, self._credential_cuts):
                for key in [key for key, (forget_at, _) in cuts.items() if forget_at <= now_seconds]:
                    del cuts[key]
                    forgotten += 1
            return forgotten

    def _apply_family(self, family_id: str, rejects_until: int, lowest_valid: int, revoked: bool) -> None:
        forget_at = rejects_until + self._clock_skew
        with self._lock:
            # Every token this rejects has expired already: nothing worth storing.
            if forget_at <= self._forgotten_up_to:
                return
            family = self._families.get(family_id)
            if family is None:
                self._families[family_id] = _Family(forget_at, lowest_valid, revoked)
                return
            family.lowest_valid = max(family.lowest_valid, lowest_valid)
            family.revoked = family.revoked or revoked
            if forget_at > family.forget_at:
                family.forget_at = forget_at
                # To the back: forget_expired() scans from the front, in order of when entries were last extended.
                self._families.move_to_end(family_id)

    def _apply_cut(self, cuts: Dict[str, Tuple[int, int]], key: str, not_before: int, rejects_until: int) -> None:
        forget_at = rejects_until + self._clock_skew
        with self._lock:
            if forget_at <= self._forgotten_up_to:
                return
            current = cuts.get(key)
            cuts[key] = (forget_at, not_before) if current is None else (max(current[0], forget_at), max(current[1], not_before))
