package verification

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// TestPollReceiverAppliesAcknowledgesAndStopsOnCancel runs the receiver against a transmitter
// that answers one good SET and one forged one, then holds the next poll open as a long poll does.
func TestPollReceiverAppliesAcknowledgesAndStopsOnCancel(t *testing.T) {
	issuer := newTestIssuer(t)
	forger := newTestIssuer(t)
	good := issuer.set(t, setClaims(sessionSubject, EventSessionRevoked, map[string]any{"event_timestamp": 1_800_000_000, "tessera_rejects_until": 4_000_000_000}))
	forgedClaims := setClaims(map[string]any{"format": "complex", "session": map[string]any{"format": "opaque", "id": "fam_forged"}}, EventSessionRevoked, map[string]any{"event_timestamp": 1})
	forgedClaims["jti"] = "jti-forged"
	forged := forger.set(t, forgedClaims)

	var streamRequest struct {
		EventsRequested []string `json:"events_requested"`
	}
	var subjects []map[string]string
	polls := make(chan pollRequest, 4)
	var pollCount atomic.Int32
	mux := http.NewServeMux()
	var transmitter *httptest.Server
	authorized := func(request *http.Request) bool {
		return request.Header.Get("Authorization") == "Bearer receiver-token"
	}
	mux.HandleFunc("GET /.well-known/ssf-configuration", func(writer http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(writer).Encode(map[string]string{"issuer": testTransmitter, "configuration_endpoint": transmitter.URL + "/ssf/streams", "add_subject_endpoint": transmitter.URL + "/ssf/subjects/add"})
	})
	mux.HandleFunc("POST /ssf/streams", func(writer http.ResponseWriter, request *http.Request) {
		if !authorized(request) || json.NewDecoder(request.Body).Decode(&streamRequest) != nil {
			writer.WriteHeader(http.StatusUnauthorized)
			return
		}
		writer.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(writer).Encode(map[string]any{"stream_id": "s1", "aud": testAudience, "delivery": map[string]string{"method": "urn:ietf:rfc:8936", "endpoint_url": transmitter.URL + "/ssf/poll?stream_id=s1"}})
	})
	mux.HandleFunc("POST /ssf/subjects/add", func(writer http.ResponseWriter, request *http.Request) {
		var added struct {
			Subject map[string]string `json:"subject"`
		}
		if !authorized(request) || json.NewDecoder(request.Body).Decode(&added) != nil {
			writer.WriteHeader(http.StatusUnauthorized)
			return
		}
		subjects = append(subjects, added.Subject)
		_, _ = writer.Write([]byte("{}"))
	})
	mux.HandleFunc("POST /ssf/poll", func(writer http.ResponseWriter, request *http.Request) {
		var poll pollRequest
		if !authorized(request) || json.NewDecoder(request.Body).Decode(&poll) != nil {
			writer.WriteHeader(http.StatusUnauthorized)
			return
		}
		polls <- poll
		if pollCount.Add(1) == 1 {
			_ = json.NewEncoder(writer).Encode(pollAnswer{Sets: map[string]string{"jti-1": good, "jti-forged": forged}})
			return
		}
		<-request.Context().Done() // a long poll with nothing to send
	})
	transmitter = httptest.NewServer(mux)
	defer transmitter.Close()

	keys := NewKeySet()
	if err := LoadJWKS(context.Background(), issuer.server.Client(), issuer.jwksURL(), keys); err != nil {
		t.Fatal(err)
	}
	projection := NewRevocationProjection(60)
	receiver, err := NewPollReceiver(PollConfig{TransmitterURL: transmitter.URL, ReceiverToken: "receiver-token", Accounts: []string{"acc_1"}, Keys: keys, Projection: projection, HTTPClient: transmitter.Client()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- receiver.Run(ctx) }()

	select {
	case stream := <-receiver.Ready():
		if stream.StreamID != "s1" || stream.Audience != testAudience || stream.Issuer != testTransmitter {
			t.Fatalf("the stream: %+v", stream)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream was not set up")
	}
	if !slices.Contains(streamRequest.EventsRequested, EventTokenRotated) || len(subjects) != 1 || subjects[0]["sub"] != "acc_1" || subjects[0]["iss"] != testTransmitter {
		t.Fatalf("requested %v with subjects %v", streamRequest.EventsRequested, subjects)
	}
	first := <-polls
	second := <-polls
	if first.Ack != nil || first.ReturnImmediately {
		t.Fatalf("the first poll: %+v", first)
	}
	if !slices.Equal(second.Ack, []string{"jti-1"}) || second.SetErrs["jti-forged"] == nil || second.SetErrs["jti-forged"].Err != "invalid_key" {
		t.Fatalf("the second poll acknowledges the good SET and reports the forged one: %+v", second)
	}
	if !projection.IsRejected("fam_1", 0) || projection.IsRejected("fam_forged", 0) {
		t.Fatal("the good SET's family is refused, the forged one's is not")
	}

	cancel()
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run returned %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Run did not stop within 2 s of its context's cancellation, during a long poll")
	}
}

// TestPollReceiverWaitsRetryAfter: a poll refused 429 with Retry-After: 2 is asked again only once
// those 2 s have passed, not after the receiver's own 250 ms backoff.
func TestPollReceiverWaitsRetryAfter(t *testing.T) {
	pollTimes := make(chan time.Time, 4)
	var pollCount atomic.Int32
	mux := http.NewServeMux()
	var transmitter *httptest.Server
	mux.HandleFunc("GET /.well-known/ssf-configuration", func(writer http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(writer).Encode(map[string]string{"issuer": testTransmitter, "configuration_endpoint": transmitter.URL + "/ssf/streams", "add_subject_endpoint": transmitter.URL + "/ssf/subjects/add"})
	})
	mux.HandleFunc("POST /ssf/streams", func(writer http.ResponseWriter, _ *http.Request) {
		writer.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(writer).Encode(map[string]any{"stream_id": "s1", "aud": testAudience, "delivery": map[string]string{"method": "urn:ietf:rfc:8936", "endpoint_url": transmitter.URL + "/ssf/poll?stream_id=s1"}})
	})
	mux.HandleFunc("POST /ssf/subjects/add", func(writer http.ResponseWriter, _ *http.Request) {
		_, _ = writer.Write([]byte("{}"))
	})
	mux.HandleFunc("POST /ssf/poll", func(writer http.ResponseWriter, request *http.Request) {
		pollTimes <- time.Now()
		// Read whole, so that the server notices the receiver hanging up a long poll.
		var poll pollRequest
		_ = json.NewDecoder(request.Body).Decode(&poll)
		if pollCount.Add(1) == 1 {
			writer.Header().Set("Content-Type", "application/problem+json")
			writer.Header().Set("Retry-After", "2")
			writer.WriteHeader(http.StatusTooManyRequests)
			_, _ = writer.Write([]byte(`{"status":429}`))
			return
		}
		<-request.Context().Done() // a long poll with nothing to send
	})
	transmitter = httptest.NewServer(mux)
	defer transmitter.Close()

	receiver, err := NewPollReceiver(PollConfig{TransmitterURL: transmitter.URL, ReceiverToken: "receiver-token", Accounts: []string{"acc_1"}, Keys: NewKeySet(), Projection: NewRevocationProjection(60), HTTPClient: transmitter.Client()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = receiver.Run(ctx) }()
	var refusedAt, nextAt time.Time
	for index, at := range []*time.Time{&refusedAt, &nextAt} {
		select {
		case *at = <-pollTimes:
		case <-time.After(10 * time.Second):
			t.Fatalf("poll %d did not come within 10 s", index+1)
		}
	}
	if waited := nextAt.Sub(refusedAt); waited < 1950*time.Millisecond || waited > 3*time.Second {
		t.Fatalf("asked again %v after a 429 with Retry-After: 2", waited)
	}
}

func TestRetryAfterOf(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	for header, want := range map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		" 1 ":                           time.Second,
		"soon":                          0,
		"-1":                            0,
		"Thu, 03 Dec 2026 12:00:10 GMT": 10 * time.Second,
		"Thu, 03 Dec 2026 11:59:00 GMT": 0,
		"86400":                         longestRetryAfter,
	} {
		if got := retryAfterOf(header, now); got != want {
			t.Errorf("retryAfterOf(%q) = %v, want %v", header, got, want)
		}
	}
}
