package verification

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// PollConfig configures a PollReceiver.
type PollConfig struct {
	// TransmitterURL is Tessera's public URL (TESSERA_PUBLIC_URL): its metadata is at
	// /.well-known/ssf-configuration there.
	TransmitterURL string
	// ReceiverToken authenticates this receiver (npx tessera ssf-receivers create). Never logged.
	ReceiverToken string
	// Accounts are the account ids whose revocations this service hears (iss_sub subjects).
	Accounts []string
	// Families are token family ids (a token's fid) to follow one by one, as opaque subjects.
	Families []string
	// EventsRequested defaults to session-revoked, credential-change and Tessera's token-rotated.
	EventsRequested []string
	// Keys and RefreshKeys verify SETs: share the Verifier's (Verifier.Keys, Verifier.RefreshKeys).
	Keys        *KeySet
	RefreshKeys func(context.Context)
	// Projection receives the revocations: share the Verifier's (Verifier.Projection).
	Projection *RevocationProjection
	// MaxAccessTokenLifetime stands in for a missing tessera_rejects_until (default an hour, Tessera's default TESSERA_ACCESS_TOKEN_TTL).
	MaxAccessTokenLifetime time.Duration
	// HTTPClient defaults to http.DefaultClient; each request gets its own deadline (RequestTimeout).
	HTTPClient *http.Client
	// RequestTimeout bounds one request, a long poll included: above the transmitter's
	// TESSERA_SSF_POLL_WAIT (30 s by default). Default 60 s.
	RequestTimeout time.Duration
	// Logf reports failures and retries; nil is silent. Tokens and SETs are never passed to it.
	Logf func(format string, args ...any)
}

// StreamInfo is the poll stream created for this receiver.
type StreamInfo struct {
	StreamID string
	// Audience is the aud its SETs carry.
	Audience string
	// Issuer is the transmitter's issuer.
	Issuer  string
	PollURL string
}

// PollReceiver creates an RFC 8936 poll stream, adds its subjects, then long-polls: each SET is
// verified and applied, and acknowledged in the next poll (or reported in setErrs when refused).
// Run it once: each PollReceiver is one stream.
type PollReceiver struct {
	config PollConfig
	ready  chan StreamInfo
}

// NewPollReceiver checks the configuration; Run does the work.
func NewPollReceiver(config PollConfig) (*PollReceiver, error) {
	switch {
	case config.TransmitterURL == "":
		return nil, errors.New("verification: PollConfig.TransmitterURL is required")
	case config.ReceiverToken == "":
		return nil, errors.New("verification: PollConfig.ReceiverToken is required")
	case config.Keys == nil || config.Projection == nil:
		return nil, errors.New("verification: PollConfig.Keys and Projection are required")
	}
	if len(config.EventsRequested) == 0 {
		config.EventsRequested = []string{EventSessionRevoked, EventCredentialChange, EventTokenRotated}
	}
	if config.HTTPClient == nil {
		config.HTTPClient = http.DefaultClient
	}
	if config.RequestTimeout <= 0 {
		config.RequestTimeout = 60 * time.Second
	}
	if config.Logf == nil {
		config.Logf = func(string, ...any) {}
	}
	config.TransmitterURL = strings.TrimRight(config.TransmitterURL, "/")
	return &PollReceiver{config: config, ready: make(chan StreamInfo, 1)}, nil
}

// Ready delivers the stream once it exists with its subjects: revocations from then on are heard.
func (receiver *PollReceiver) Ready() <-chan StreamInfo { return receiver.ready }

// Run sets the stream up (retrying with backoff until it can) and polls until ctx is cancelled,
// then returns ctx's error.
func (receiver *PollReceiver) Run(ctx context.Context) error {
	var stream StreamInfo
	for backoff := newBackoff(); ; {
		var err error
		if stream, err = receiver.setUp(ctx); err == nil {
			break
		}
		receiver.config.Logf("tessera ssf: setting the poll stream up failed, retrying: %v", err)
		if err := backoff.wait(ctx); err != nil {
			return err
		}
	}
	receiver.ready <- stream
	consumer := NewSignalConsumer(&SETVerifier{
		Keys: receiver.config.Keys, Refresh: receiver.config.RefreshKeys, Issuer: stream.Issuer, Audience: stream.Audience,
		MaxAccessTokenLifetime: receiver.config.MaxAccessTokenLifetime,
	}, receiver.config.Projection)
	var acknowledgements pollAcknowledgements
	// held paces the polls while SETs are refused for a reason that may pass (a key not in the
	// JWKS yet): the transmitter answers such a SET again at once, so polling on would spin.
	held := newBackoff()
	for backoff := newBackoff(); ; {
		answer, err := receiver.poll(ctx, stream.PollURL, acknowledgements.next())
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			receiver.config.Logf("tessera ssf: poll failed, retrying: %v", err)
			// A refusal that says when to ask again (a 429 or 503 with Retry-After) is asked again then, not sooner.
			var refused *transmitterRefusal
			if errors.As(err, &refused) && refused.retryAfter > 0 {
				if err := backoff.waitAtLeast(ctx, refused.retryAfter); err != nil {
					return err
				}
				continue
			}
			if err := backoff.wait(ctx); err != nil {
				return err
			}
			continue
		}
		backoff.reset()
		acknowledgements.sent()
		kept := false
		for jti, set := range answer.Sets {
			if _, err := consumer.Consume(ctx, set); err != nil {
				var rejection *SETRejection
				if !errors.As(err, &rejection) {
					rejection = setRejection("invalid_request", "the SET could not be processed")
				}
				receiver.config.Logf("tessera ssf: SET %s refused: %s", jti, rejection.Err)
				// Reported in setErrs: Tessera drops an invalid_request SET and answers any other again.
				acknowledgements.refuse(jti, rejection)
				kept = kept || rejection.Err != "invalid_request"
				continue
			}
			acknowledgements.ack(jti)
		}
		if !kept {
			held.reset()
		} else if err := held.wait(ctx); err != nil {
			return err
		}
	}
}

// ssfConfiguration is the part of /.well-known/ssf-configuration a poll receiver reads.
type ssfConfiguration struct {
	Issuer                string `json:"issuer"`
	ConfigurationEndpoint string `json:"configuration_endpoint"`
	AddSubjectEndpoint    string `json:"add_subject_endpoint"`
}

func (receiver *PollReceiver) setUp(ctx context.Context) (StreamInfo, error) {
	var metadata ssfConfiguration
	if err := receiver.call(ctx, http.MethodGet, receiver.config.TransmitterURL+"/.well-known/ssf-configuration", nil, http.StatusOK, &metadata); err != nil {
		return StreamInfo{}, err
	}
	if metadata.Issuer == "" || metadata.ConfigurationEndpoint == "" || metadata.AddSubjectEndpoint == "" {
		return StreamInfo{}, errors.New("the transmitter's metadata names no issuer or endpoints")
	}
	var created struct {
		StreamID string `json:"stream_id"`
		Aud      string `json:"aud"`
		Delivery struct {
			EndpointURL string `json:"endpoint_url"`
		} `json:"delivery"`
	}
	request := map[string]any{
		"delivery":         map[string]string{"method": "urn:ietf:rfc:8936"},
		"events_requested": receiver.config.EventsRequested,
		"description":      "revocations for a Go verifier",
	}
	if err := receiver.call(ctx, http.MethodPost, metadata.ConfigurationEndpoint, request, http.StatusCreated, &created); err != nil {
		return StreamInfo{}, err
	}
	if created.StreamID == "" || created.Aud == "" || created.Delivery.EndpointURL == "" {
		return StreamInfo{}, errors.New("the created stream names no stream_id, aud or poll endpoint")
	}
	var subjects []map[string]string
	for _, account := range receiver.config.Accounts {
		subjects = append(subjects, map[string]string{"format": "iss_sub", "iss": metadata.Issuer, "sub": account})
	}
	for _, family := range receiver.config.Families {
		subjects = append(subjects, map[string]string{"format": "opaque", "id": family})
	}
	for _, subject := range subjects {
		if err := receiver.call(ctx, http.MethodPost, metadata.AddSubjectEndpoint, map[string]any{"stream_id": created.StreamID, "subject": subject}, http.StatusOK, nil); err != nil {
			return StreamInfo{}, err
		}
	}
	return StreamInfo{StreamID: created.StreamID, Audience: created.Aud, Issuer: metadata.Issuer, PollURL: created.Delivery.EndpointURL}, nil
}

// pollRequest is RFC 8936 section 2.4's request.
type pollRequest struct {
	MaxEvents         int                      `json:"maxEvents"`
	ReturnImmediately bool                     `json:"returnImmediately"`
	Ack               []string                 `json:"ack,omitempty"`
	SetErrs           map[string]*SETRejection `json:"setErrs,omitempty"`
}

type pollAnswer struct {
	Sets          map[string]string `json:"sets"`
	MoreAvailable bool              `json:"moreAvailable"`
}

func (receiver *PollReceiver) poll(ctx context.Context, pollURL string, request pollRequest) (pollAnswer, error) {
	var answer pollAnswer
	err := receiver.call(ctx, http.MethodPost, pollURL, request, http.StatusOK, &answer)
	return answer, err
}

// maxAnswer bounds a transmitter's answer: 100 SETs of a few kilobytes each.
const maxAnswer = 4 << 20

// call sends one request with the receiver token and reads a JSON answer of the expected status.
func (receiver *PollReceiver) call(ctx context.Context, method, url string, body any, expected int, answer any) error {
	ctx, cancel := context.WithTimeout(ctx, receiver.config.RequestTimeout)
	defer cancel()
	var reader io.Reader
	if body != nil {
		encoded, err := json.Marshal(body)
		if err != nil {
			return err
		}
		reader = bytes.NewReader(encoded)
	}
	request, err := http.NewRequestWithContext(ctx, method, url, reader)
	if err != nil {
		return err
	}
	request.Header.Set("Authorization", "Bearer "+receiver.config.ReceiverToken)
	request.Header.Set("Accept", "application/json")
	if body != nil {
		request.Header.Set("Content-Type", "application/json")
	}
	response, err := receiver.config.HTTPClient.Do(request)
	if err != nil {
		return err
	}
	defer response.Body.Close()
	payload, err := io.ReadAll(io.LimitReader(response.Body, maxAnswer))
	if err != nil {
		return err
	}
	if response.StatusCode != expected {
		return &transmitterRefusal{
			message:    fmt.Sprintf("%s %s answered %d: %s", method, url, response.StatusCode, truncate(string(payload), 300)),
			retryAfter: retryAfterOf(response.Header.Get("Retry-After"), time.Now()),
		}
	}
	if answer == nil {
		return nil
	}
	return json.Unmarshal(payload, answer)
}

// transmitterRefusal is an answer of another status than the one expected, with how long the
// transmitter asked to wait before asking again (its Retry-After; 0 when it did not say).
type transmitterRefusal struct {
	message    string
	retryAfter time.Duration
}

func (refusal *transmitterRefusal) Error() string { return refusal.message }

// longestRetryAfter bounds a Retry-After taken: a transmitter asking for longer is asked again
// after this, so revocations are never held back for long.
const longestRetryAfter = 5 * time.Minute

// retryAfterOf reads RFC 9110 section 10.2.3's Retry-After: whole seconds, or an HTTP date; 0 when
// absent or neither.
func retryAfterOf(header string, now time.Time) time.Duration {
	header = strings.TrimSpace(header)
	if header == "" {
		return 0
	}
	var wait time.Duration
	if seconds, err := strconv.ParseUint(header, 10, 32); err == nil {
		wait = time.Duration(seconds) * time.Second
	} else if at, err := http.ParseTime(header); err == nil {
		wait = at.Sub(now)
	}
	return min(max(wait, 0), longestRetryAfter)
}

func truncate(text string, length int) string {
	if len(text) <= length {
		return text
	}
	return text[:length] + "…"
}

// pollAcknowledgements carries what was processed into the next poll: RFC 8936 acknowledges in
// the request after. The transmitter takes at most 100 acks and 20 setErrs a request; the rest wait.
type pollAcknowledgements struct {
	acks     []string
	refusals map[string]*SETRejection
	inFlight pollRequest
}

const (
	maxAcksPerPoll    = 100
	maxSetErrsPerPoll = 20
)

func (acknowledgements *pollAcknowledgements) ack(jti string) {
	acknowledgements.acks = append(acknowledgements.acks, jti)
}

func (acknowledgements *pollAcknowledgements) refuse(jti string, rejection *SETRejection) {
	if acknowledgements.refusals == nil {
		acknowledgements.refusals = map[string]*SETRejection{}
	}
	acknowledgements.refusals[jti] = &SETRejection{Err: rejection.Err, Description: truncate(rejection.Description, 200)}
}

// next is the request to send, carrying what is pending up to the transmitter's limits: the
// transmitter takes the acknowledgements before it waits for new SETs.
func (acknowledgements *pollAcknowledgements) next() pollRequest {
	request := pollRequest{MaxEvents: maxAcksPerPoll}
	request.Ack = acknowledgements.acks[:min(len(acknowledgements.acks), maxAcksPerPoll)]
	for jti, rejection := range acknowledgements.refusals {
		if len(request.SetErrs) == maxSetErrsPerPoll {
			break
		}
		if request.SetErrs == nil {
			request.SetErrs = map[string]*SETRejection{}
		}
		request.SetErrs[jti] = rejection
	}
	acknowledgements.inFlight = request
	return request
}

// sent drops what the last request carried: the transmitter answered it.
func (acknowledgements *pollAcknowledgements) sent() {
	acknowledgements.acks = acknowledgements.acks[len(acknowledgements.inFlight.Ack):]
	for jti := range acknowledgements.inFlight.SetErrs {
		delete(acknowledgements.refusals, jti)
	}
	acknowledgements.inFlight = pollRequest{}
}

// backoff waits 250 ms doubling to 30 s between failed attempts.
type backoff struct{ delay time.Duration }

func newBackoff() *backoff { return &backoff{delay: 250 * time.Millisecond} }

func (b *backoff) reset() { b.delay = 250 * time.Millisecond }

func (b *backoff) wait(ctx context.Context) error {
	delay := b.delay
	b.delay = min(2*b.delay, 30*time.Second)
	return sleep(ctx, delay)
}

// waitAtLeast waits the transmitter's Retry-After, or the backoff's delay if that is longer, and
// leaves the delay as it was: the transmitter said when, so it is not a failure to back off from.
func (b *backoff) waitAtLeast(ctx context.Context, retryAfter time.Duration) error {
	return sleep(ctx, max(b.delay, retryAfter))
}

func sleep(ctx context.Context, delay time.Duration) error {
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
