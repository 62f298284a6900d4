package verification

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"
)

const (
	testTransmitter = "https://tessera.test"
	testAudience    = "urn:tessera:ssf:receiver:r1"
)

func newSETVerifier(t *testing.T, issuer *testIssuer) *SETVerifier {
	t.Helper()
	keys := NewKeySet()
	if err := LoadJWKS(context.Background(), issuer.server.Client(), issuer.jwksURL(), keys); err != nil {
		t.Fatal(err)
	}
	return &SETVerifier{Keys: keys, Issuer: testTransmitter, Audience: testAudience, MaxAccessTokenLifetime: 900 * time.Second}
}

func setClaims(subject map[string]any, eventType string, payload map[string]any) map[string]any {
	return map[string]any{
		"iss": testTransmitter, "aud": testAudience, "jti": "jti-1", "iat": 1_800_000_000, "txn": "txn-1",
		"sub_id": subject, "events": map[string]any{eventType: payload},
	}
}

var (
	accountSubject = map[string]any{"format": "iss_sub", "iss": testTransmitter, "sub": "acc_1"}
	sessionSubject = map[string]any{"format": "complex", "user": accountSubject, "session": map[string]any{"format": "opaque", "id": "fam_1"}}
	userSubject    = map[string]any{"format": "complex", "user": accountSubject}
)

func TestSETsMapOntoTheProjectionsRevocations(t *testing.T) {
	issuer := newTestIssuer(t)
	verifier := newSETVerifier(t, issuer)
	cases := []struct {
		name    string
		subject map[string]any
		event   string
		payload map[string]any
		want    []RevocationEvent
	}{
		{"a family revoked", sessionSubject, EventSessionRevoked,
			map[string]any{"event_timestamp": 1_800_000_000, "tessera_rejects_until": 1_800_000_600},
			[]RevocationEvent{TokenRevoked{FamilyID: "fam_1", RejectsUntil: 1_800_000_600}}},
		{"a family revoked by an older transmitter: event time plus the longest lifetime", sessionSubject, EventSessionRevoked,
			map[string]any{"event_timestamp": 1_800_000_000},
			[]RevocationEvent{TokenRevoked{FamilyID: "fam_1", RejectsUntil: 1_800_000_900}}},
		{"an account's tokens cut", userSubject, EventSessionRevoked,
			map[string]any{"event_timestamp": 1_800_000_000, "tessera_not_before": 1_799_999_999, "tessera_rejects_until": 1_800_000_600},
			[]RevocationEvent{AccountTokensRevoked{AccountID: "acc_1", NotBefore: 1_799_999_999, RejectsUntil: 1_800_000_600}}},
		{"an account cut by an older transmitter: not before is the event's time", userSubject, EventSessionRevoked,
			map[string]any{"event_timestamp": 1_800_000_000},
			[]RevocationEvent{AccountTokensRevoked{AccountID: "acc_1", NotBefore: 1_800_000_000, RejectsUntil: 1_800_000_900}}},
		{"a credential's tokens cut", userSubject, EventCredentialChange,
			map[string]any{"change_type": "revoke", "credential_type": "api-key", "event_timestamp": 1_800_000_000, "tessera_client_id": "tsl_1", "tessera_not_before": 1_800_000_000, "tessera_rejects_until": 1_800_000_600},
			[]RevocationEvent{CredentialTokensRevoked{ClientID: "tsl_1", NotBefore: 1_800_000_000, RejectsUntil: 1_800_000_600}}},
		{"a credential revoked without a cut refuses nothing", userSubject, EventCredentialChange,
			map[string]any{"change_type": "revoke", "credential_type": "api-key", "event_timestamp": 1_800_000_000}, nil},
		{"a family rotated", sessionSubject, EventTokenRotated,
			map[string]any{"generation": 3, "event_timestamp": 1_800_000_000, "tessera_rejects_until": 1_800_000_600},
			[]RevocationEvent{TokenRotated{FamilyID: "fam_1", Generation: 3, RejectsUntil: 1_800_000_600}}},
		{"a claims change refuses nothing", userSubject, EventTokenClaimsChange,
			map[string]any{"event_timestamp": 1_800_000_000, "claims": map[string]any{"scope": "a b"}}, nil},
		{"an account of another issuer is not this verifier's", map[string]any{"format": "complex", "user": map[string]any{"format": "iss_sub", "iss": "https://elsewhere", "sub": "acc_1"}, "session": map[string]any{"format": "opaque", "id": "fam_1"}},
			EventSessionRevoked, map[string]any{"event_timestamp": 1_800_000_000},
			[]RevocationEvent{TokenRevoked{FamilyID: "fam_1", RejectsUntil: 1_800_000_900}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			event, err := verifier.Verify(context.Background(), issuer.set(t, setClaims(c.subject, c.event, c.payload)))
			if err != nil {
				t.Fatal(err)
			}
			if event.ID != "jti-1" || !reflect.DeepEqual(event.Revocations, c.want) {
				t.Fatalf("got %s %#v, want %#v", event.ID, event.Revocations, c.want)
			}
		})
	}
}

func TestSETsRefusedWithRFC8935Codes(t *testing.T) {
	issuer := newTestIssuer(t)
	other := newTestIssuer(t)
	verifier := newSETVerifier(t, issuer)
	good := setClaims(sessionSubject, EventSessionRevoked, map[string]any{"event_timestamp": 1})
	with := func(name string, value any) map[string]any {
		claims := map[string]any{}
		for key, existing := range good {
			claims[key] = existing
		}
		claims[name] = value
		return claims
	}
	cases := []struct {
		name string
		set  string
		want string
	}{
		{"another issuer", issuer.set(t, with("iss", "https://elsewhere")), "invalid_issuer"},
		{"another stream's audience", issuer.set(t, with("aud", "urn:tessera:ssf:receiver:r2")), "invalid_audience"},
		{"an access token's typ", signES256(t, issuer.key, map[string]string{"alg": "ES256", "typ": "at+jwt", "kid": issuer.kid}, good), "invalid_request"},
		{"an unknown kid", signES256(t, issuer.key, map[string]string{"alg": "ES256", "typ": "secevent+jwt", "kid": "kid-unknown"}, good), "invalid_key"},
		{"signed by another key under the issuer's kid", other.set(t, good), "invalid_key"},
		{"no events", issuer.set(t, with("events", map[string]any{})), "invalid_request"},
		{"not a JWS", "not.a-set", "invalid_request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := verifier.Verify(context.Background(), c.set)
			var rejection *SETRejection
			if !errors.As(err, &rejection) || rejection.Err != c.want {
				t.Fatalf("got %v, want %s", err, c.want)
			}
		})
	}
}
