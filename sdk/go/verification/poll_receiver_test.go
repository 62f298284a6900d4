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
