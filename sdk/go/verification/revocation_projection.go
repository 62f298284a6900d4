package verification

import "sync"

// RevocationEvent is one of the four revocations the projection takes, as @tessera/contracts
// names them: TokenRevoked, TokenRotated, AccountTokensRevoked, CredentialTokensRevoked.
type RevocationEvent interface {
	revocationEvent()
}

// TokenRevoked: every token of the family is refused until RejectsUntil (epoch seconds), the last
// expiry among the tokens it refuses.
type TokenRevoked struct {
	FamilyID     string
	RejectsUntil int64
}

// TokenRotated: tokens of the family with a generation below Generation are refused until RejectsUntil.
type TokenRotated struct {
	FamilyID     string
	Generation   int64
	RejectsUntil int64
}

// AccountTokensRevoked: tokens of the account (sub) issued before NotBefore are refused until RejectsUntil.
type AccountTokensRevoked struct {
	AccountID    string
	NotBefore    int64
	RejectsUntil int64
}

// CredentialTokensRevoked: tokens whose client_id is ClientID (an API Login ID or API ID) issued
// before NotBefore are refused until RejectsUntil.
type CredentialTokensRevoked struct {
	ClientID     string
	NotBefore    int64
	RejectsUntil int64
}

func (TokenRevoked) revocationEvent()            {}
func (TokenRotated) revocationEvent()            {}
func (AccountTokensRevoked) revocationEvent()    {}
func (CredentialTokensRevoked) revocationEvent() {}

// familyEntry is a family's lowest valid generation, or revoked, until forgetAt.
type familyEntry struct {
	forgetAt    int64
	lowestValid int64
	revoked     bool
}

// cut refuses tokens of an account or a client id with iat before notBefore, until forgetAt.
type cut struct {
	forgetAt  int64
	notBefore int64
}

// RevocationProjection is what a verifier knows of revocations, in memory: family id → lowest
// valid generation (or revoked), and cuts by account and by credential. An entry is forgotten
// once every token it refuses has expired: at the event's RejectsUntil plus the clock skew.
// Memory follows the revocation rate, not history. Applying is a max() of each part: duplicates
// and any order of delivery change nothing. Safe for concurrent use.
type RevocationProjection struct {
	mu               sync.RWMutex
	clockSkewSeconds int64
	families         map[string]*familyEntry
	accountCuts      map[string]*cut
	// credentialCuts is keyed by client id: API Login IDs and API IDs have distinct prefixes, so they never collide.
	credentialCuts map[string]*cut
	// forgottenUpTo is the latest time given to ForgetExpired: time only moves on, so nothing that
	// expires by then is worth storing.
	forgottenUpTo int64
}

// NewRevocationProjection returns an empty projection; entries are kept clockSkewSeconds past
// the last expiry of the tokens they refuse (60 in Tessera's default configuration).
func NewRevocationProjection(clockSkewSeconds int64) *RevocationProjection {
	return &RevocationProjection{
		clockSkewSeconds: clockSkewSeconds,
		families:         map[string]*familyEntry{},
		accountCuts:      map[string]*cut{},
		credentialCuts:   map[string]*cut{},
		forgottenUpTo:    -1 << 62,
	}
}

// Size is the number of families and cuts held.
func (projection *RevocationProjection) Size() int {
	projection.mu.RLock()
	defer projection.mu.RUnlock()
	return len(projection.families) + len(projection.accountCuts) + len(projection.credentialCuts)
}

// Apply takes one revocation.
func (projection *RevocationProjection) Apply(event RevocationEvent) {
	projection.mu.Lock()
	defer projection.mu.Unlock()
	switch event := event.(type) {
	case TokenRevoked:
		projection.applyFamily(event.FamilyID, 0, true, event.RejectsUntil)
	case TokenRotated:
		projection.applyFamily(event.FamilyID, event.Generation, false, event.RejectsUntil)
	case AccountTokensRevoked:
		projection.applyCut(projection.accountCuts, event.AccountID, event.NotBefore, event.RejectsUntil)
	case CredentialTokensRevoked:
		projection.applyCut(projection.credentialCuts, event.ClientID, event.NotBefore, event.RejectsUntil)
	}
}

func (projection *RevocationProjection) applyFamily(familyID string, lowestValid int64, revoked bool, rejectsUntil int64) {
	forgetAt := rejectsUntil + projection.clockSkewSeconds
	// Every token this event refuses has expired already.
	if familyID == "" || forgetAt <= projection.forgottenUpTo {
		return
	}
	entry, known := projection.families[familyID]
	if !known {
		projection.families[familyID] = &familyEntry{forgetAt: forgetAt, lowestValid: lowestValid, revoked: revoked}
		return
	}
	entry.lowestValid = max(entry.lowestValid, lowestValid)
	entry.revoked = entry.revoked || revoked
	entry.forgetAt = max(entry.forgetAt, forgetAt)
}

func (projection *RevocationProjection) applyCut(cuts map[string]*cut, key string, notBefore, rejectsUntil int64) {
	forgetAt := rejectsUntil + projection.clockSkewSeconds
	if key == "" || forgetAt <= projection.forgottenUpTo {
		return
	}
	existing, known := cuts[key]
	if !known {
		cuts[key] = &cut{forgetAt: forgetAt, notBefore: notBefore}
		return
	}
	existing.forgetAt = max(existing.forgetAt, forgetAt)
	existing.notBefore = max(existing.notBefore, notBefore)
}

// IsRejected is whether a token of this family and generation has been rotated away or revoked.
func (projection *RevocationProjection) IsRejected(familyID string, generation int64) bool {
	projection.mu.RLock()
	defer projection.mu.RUnlock()
	entry, known := projection.families[familyID]
	return known && (entry.revoked || generation < entry.lowestValid)
}

// IsCutOff is whether a cut of the token's account or client id was made after the token was issued.
func (projection *RevocationProjection) IsCutOff(accountID, clientID string, issuedAt int64) bool {
	projection.mu.RLock()
	defer projection.mu.RUnlock()
	if byAccount, known := projection.accountCuts[accountID]; known && issuedAt < byAccount.notBefore {
		return true
	}
	byClient, known := projection.credentialCuts[clientID]
	return known && issuedAt < byClient.notBefore
}

// Refuses is whether the projection refuses the token: its family revoked or rotated past its
// generation, or its account or credential cut after it was issued.
func (projection *RevocationProjection) Refuses(claims *AccessTokenClaims) bool {
	return claims.FamilyID != "" && projection.IsRejected(claims.FamilyID, claims.Generation) ||
		projection.IsCutOff(claims.Subject, claims.ClientID, claims.IssuedAt)
}

// ForgetExpired drops the entries that can no longer refuse an unexpired token and returns how
// many went. A full scan: call it now and then (a minute), not per request.
func (projection *RevocationProjection) ForgetExpired(nowSeconds int64) int {
	projection.mu.Lock()
	defer projection.mu.Unlock()
	projection.forgottenUpTo = max(projection.forgottenUpTo, nowSeconds)
	forgotten := 0
	for familyID, entry := range projection.families {
		if entry.forgetAt <= nowSeconds {
			delete(projection.families, familyID)
			forgotten++
		}
	}
	for _, cuts := range []map[string]*cut{projection.accountCuts, projection.credentialCuts} {
		for key, expired := range cuts {
			if expired.forgetAt <= nowSeconds {
				delete(cuts, key)
				forgotten++
			}
		}
	}
	return forgotten
}
