package verification

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// The SET event types Tessera's transmitter sends that a verifier acts on or knows.
const (
	EventSessionRevoked    = "https://schemas.openid.net/secevent/caep/event-type/session-revoked"
	EventCredentialChange  = "https://schemas.openid.net/secevent/caep/event-type/credential-change"
	EventTokenClaimsChange = "https://schemas.openid.net/secevent/caep/event-type/token-claims-change"
	EventVerification      = "https://schemas.openid.net/secevent/ssf/event-type/verification"
	// EventTokenRotated is Tessera's own: sent only to streams that name it in events_requested.
	EventTokenRotated = "urn:tessera:secevent:token-rotated"
)

// SETRejection is why a SET was refused, as RFC 8935 section 2.4's error codes name it, so a push
// receiver answers it as is and Tessera retries or drops accordingly.
type SETRejection struct {
	// Err is invalid_request (malformed: the same bytes would be refused again), invalid_key,
	// invalid_issuer or invalid_audience.
	Err         string `json:"err"`
	Description string `json:"description,omitempty"`
}

func (rejection *SETRejection) Error() string { return rejection.Err + ": " + rejection.Description }

func setRejection(err, description string) *SETRejection {
	return &SETRejection{Err: err, Description: description}
}

// SecurityEvent is a verified SET: its jti and the revocations it carries (none for the events
// that refuse no token: verification, token-claims-change, a credential-change without a cut).
type SecurityEvent struct {
	ID          string
	Revocations []RevocationEvent
}

// SETVerifier verifies Security Event Tokens from Tessera's transmitter (RFC 8417): ES256 with a
// key of the issuer's JWKS (the access tokens' keys), typ secevent+jwt, iss, aud, and maps their
// CAEP and Tessera events onto the projection's revocations.
type SETVerifier struct {
	// Keys are the transmitter's keys; with Refresh, a SET naming an unknown kid gets one refresh.
	Keys    *KeySet
	Refresh func(context.Context)
	// Issuer is the transmitter's issuer, from /.well-known/ssf-configuration.
	Issuer string
	// Audience is the stream's aud: urn:tessera:ssf:receiver:… for a poll stream, the endpoint URL for push.
	Audience string
	// MaxAccessTokenLifetime stands in for a missing tessera_rejects_until (an older
	// transmitter): the event's time plus it. Default an hour, Tessera's default TESSERA_ACCESS_TOKEN_TTL.
	MaxAccessTokenLifetime time.Duration
}

const maxSETLength = 16 * 1024

// Verify checks one SET and reads its revocations.
func (verifier *SETVerifier) Verify(ctx context.Context, set string) (SecurityEvent, error) {
	if len(set) > maxSETLength {
		return SecurityEvent{}, setRejection("invalid_request", "the SET is too long")
	}
	jws, ok := splitCompact(set)
	if !ok {
		return SecurityEvent{}, setRejection("invalid_request", "the SET is not a compact JWS")
	}
	header, ok := parseJSONObject(jws.encodedHeader)
	if !ok {
		return SecurityEvent{}, setRejection("invalid_request", "the SET's header is not a JSON object")
	}
	if typ, _ := header.str("typ"); !strings.EqualFold(typ, "secevent+jwt") && !strings.EqualFold(typ, "application/secevent+jwt") {
		return SecurityEvent{}, setRejection("invalid_request", "the SET's typ is not secevent+jwt")
	}
	if alg, _ := header.str("alg"); alg != "ES256" {
		return SecurityEvent{}, setRejection("invalid_key", "the SET is not signed with ES256")
	}
	if header.has("crit") || header.has("jwk") || header.has("jku") || header.has("x5u") {
		return SecurityEvent{}, setRejection("invalid_request", "the SET's header names its own key or critical extensions")
	}
	kid, _ := header.str("kid")
	key, known := verifier.Keys.Find(kid)
	if !known && verifier.Refresh != nil {
		verifier.Refresh(ctx)
		key, known = verifier.Keys.Find(kid)
	}
	if !known {
		return SecurityEvent{}, setRejection("invalid_key", "the SET is signed with a key the transmitter's JWKS does not list")
	}
	signature, ok := decodeBase64url(jws.encodedSignature)
	if !ok || base64.RawURLEncoding.EncodeToString(signature) != jws.encodedSignature || !verifyES256(key, jws.signingInput(), signature) {
		return SecurityEvent{}, setRejection("invalid_key", "the SET's signature does not verify")
	}
	claims, ok := parseJSONObject(jws.encodedPayload)
	if !ok {
		return SecurityEvent{}, setRejection("invalid_request", "the SET's claims are not a JSON object")
	}
	if iss, _ := claims.str("iss"); iss != verifier.Issuer {
		return SecurityEvent{}, setRejection("invalid_issuer", "the SET's iss is not the transmitter's issuer")
	}
	if !audienceIncludes(claims, verifier.Audience) {
		return SecurityEvent{}, setRejection("invalid_audience", "the SET's aud is not this stream's")
	}
	return verifier.securityEventOf(claims)
}

// securityEventOf reads a SET's claims once its signature, iss and aud have been checked.
func (verifier *SETVerifier) securityEventOf(claims jsonObject) (SecurityEvent, error) {
	jti, ok := claims.str("jti")
	if !ok || jti == "" {
		return SecurityEvent{}, setRejection("invalid_request", "the SET has no jti")
	}
	issuedAt, ok := claims.safeInteger("iat")
	if !ok {
		return SecurityEvent{}, setRejection("invalid_request", "the SET has no iat")
	}
	events, ok := claims.object("events")
	if !ok || len(events) == 0 {
		return SecurityEvent{}, setRejection("invalid_request", "the SET has no events")
	}
	subject, _ := claims.object("sub_id")
	revocations, err := verifier.revocationsOf(events, subject, issuedAt)
	if err != nil {
		return SecurityEvent{}, err
	}
	return SecurityEvent{ID: jti, Revocations: revocations}, nil
}

func audienceIncludes(claims jsonObject, audience string) bool {
	if aud, ok := claims.str("aud"); ok {
		return aud == audience
	}
	var audiences []string
	raw, present := claims["aud"]
	if !present || json.Unmarshal(raw, &audiences) != nil {
		return false
	}
	for _, candidate := range audiences {
		if candidate == audience {
			return true
		}
	}
	return false
}

// revocationsOf maps each event onto what the projection takes (the contract's table); events
// that refuse no token map to nothing.
func (verifier *SETVerifier) revocationsOf(events jsonObject, subject jsonObject, issuedAt int64) ([]RevocationEvent, error) {
	lifetime := int64(verifier.MaxAccessTokenLifetime / time.Second)
	if lifetime <= 0 {
		lifetime = 60 * 60
	}
	var revocations []RevocationEvent
	for eventType := range events {
		payload, ok := events.object(eventType)
		if !ok {
			return nil, setRejection("invalid_request", "an event's payload is not a JSON object")
		}
		times, err := timesOf(payload, issuedAt, lifetime)
		if err != nil {
			return nil, err
		}
		session, user := verifier.subjectsOf(subject)
		switch eventType {
		case EventSessionRevoked:
			switch {
			case session != "":
				revocations = append(revocations, TokenRevoked{FamilyID: session, RejectsUntil: times.rejectsUntil})
			case user != "":
				revocations = append(revocations, AccountTokensRevoked{AccountID: user, NotBefore: times.notBefore, RejectsUntil: times.rejectsUntil})
			default:
				return nil, setRejection("invalid_request", "a session-revoked SET names neither a session nor an account of this issuer")
			}
		case EventCredentialChange:
			changeType, _ := payload.str("change_type")
			clientID, cuts := payload.str("tessera_client_id")
			// A credential revoked without a token cut refuses nothing: its tokens stay valid until they expire.
			if changeType == "revoke" && cuts && clientID != "" {
				revocations = append(revocations, CredentialTokensRevoked{ClientID: clientID, NotBefore: times.notBefore, RejectsUntil: times.rejectsUntil})
			}
		case EventTokenRotated:
			generation, ok := payload.safeInteger("generation")
			if session == "" || !ok {
				return nil, setRejection("invalid_request", "a token-rotated SET needs a session and a generation")
			}
			revocations = append(revocations, TokenRotated{FamilyID: session, Generation: generation, RejectsUntil: times.rejectsUntil})
		}
	}
	return revocations, nil
}

// eventTimes are an event's tessera_not_before and tessera_rejects_until, or their fallbacks.
type eventTimes struct {
	notBefore    int64
	rejectsUntil int64
}

// timesOf reads the extension members, falling back for an older transmitter: not before =
// event_timestamp; rejects until = event_timestamp + the longest access-token lifetime.
func timesOf(payload jsonObject, issuedAt, lifetime int64) (eventTimes, error) {
	eventTimestamp := issuedAt
	if payload.has("event_timestamp") {
		timestamp, ok := payload.safeInteger("event_timestamp")
		if !ok {
			return eventTimes{}, setRejection("invalid_request", "event_timestamp is not an integer")
		}
		eventTimestamp = timestamp
	}
	times := eventTimes{notBefore: eventTimestamp, rejectsUntil: eventTimestamp + lifetime}
	for name, target := range map[string]*int64{"tessera_not_before": &times.notBefore, "tessera_rejects_until": &times.rejectsUntil} {
		if !payload.has(name) {
			continue
		}
		value, ok := payload.safeInteger(name)
		if !ok {
			return eventTimes{}, setRejection("invalid_request", name+" is not an integer")
		}
		*target = value
	}
	return times, nil
}

// subjectsOf reads sub_id: a complex subject's session (opaque, a family id) and user (iss_sub of
// this issuer, an account id), or a simple subject of either format.
func (verifier *SETVerifier) subjectsOf(subject jsonObject) (session, user string) {
	if subject == nil {
		return "", ""
	}
	read := func(part jsonObject) {
		switch format, _ := part.str("format"); format {
		case "opaque":
			session, _ = part.str("id")
		case "iss_sub":
			if iss, _ := part.str("iss"); iss == verifier.Issuer {
				user, _ = part.str("sub")
			}
		}
	}
	if format, _ := subject.str("format"); format != "complex" {
		read(subject)
		return session, user
	}
	if part, ok := subject.object("session"); ok {
		read(part)
	}
	if part, ok := subject.object("user"); ok {
		read(part)
	}
	return session, user
}
