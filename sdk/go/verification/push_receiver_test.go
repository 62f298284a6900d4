package verification

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestPushReceiverAppliesSETsAndAnswersRFC8935(t *testing.T) {
	issuer := newTestIssuer(t)
	projection := NewRevocationProjection(60)
	sets := newSETVerifier(t, issuer)
	receiver, err := NewPushReceiver(NewSignalConsumer(sets, projection), "Bearer receiver-own-secret")
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewServer(receiver)
	defer server.Close()
	push := func(authorization, contentType, body string) (int, string) {
		request, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, server.URL, strings.NewReader(body))
		request.Header.Set("Authorization", authorization)
		request.Header.Set("Content-Type", contentType)
		response, err := server.Client().Do(request)
		if err != nil {
			t.Fatal(err)
		}
		defer response.Body.Close()
		var answer struct {
			Err string `json:"err"`
		}
		_ = json.NewDecoder(response.Body).Decode(&answer)
		return response.StatusCode, answer.Err
	}
	revocation := issuer.set(t, setClaims(sessionSubject, EventSessionRevoked, map[string]any{"event_timestamp": 1_800_000_000, "tessera_rejects_until": 4_000_000_000}))

	if status, code := push("Bearer another-secret", "application/secevent+jwt", revocation); status != 400 || code != "authentication_failed" {
		t.Fatalf("a wrong Authorization: %d %q", status, code)
	}
	if projection.IsRejected("fam_1", 0) {
		t.Fatal("a refused push changed the projection")
	}
	if status, code := push("Bearer receiver-own-secret", "application/json", revocation); status != 400 || code != "invalid_request" {
		t.Fatalf("another media type: %d %q", status, code)
	}
	if status, code := push("Bearer receiver-own-secret", "application/secevent+jwt", strings.Repeat("a", maxPushBody+1)); status != 400 || code != "invalid_request" {
		t.Fatalf("a body over the bound: %d %q", status, code)
	}
	wrongAudience := issuer.set(t, map[string]any{"iss": testTransmitter, "aud": "https://other.example/ssf", "jti": "j2", "iat": 1, "events": map[string]any{EventSessionRevoked: map[string]any{}}, "sub_id": sessionSubject})
	if status, code := push("Bearer receiver-own-secret", "application/secevent+jwt", wrongAudience); status != 400 || code != "invalid_audience" {
		t.Fatalf("another audience: %d %q", status, code)
	}
	if status, _ := push("Bearer receiver-own-secret", "application/secevent+jwt", revocation); status != 202 {
		t.Fatalf("a good SET: %d", status)
	}
	if !projection.IsRejected("fam_1", 0) {
		t.Fatal("the family the SET revoked is not refused")
	}
	// Delivered again (at least once, same jti): accepted again, nothing new.
	if status, _ := push("Bearer receiver-own-secret", "application/secevent+jwt", revocation); status != 202 || projection.Size() != 1 {
		t.Fatalf("a duplicate: %d, %d entries", status, projection.Size())
	}
}
