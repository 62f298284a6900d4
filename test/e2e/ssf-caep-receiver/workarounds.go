package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/sgnl-ai/caep.dev/secevent/pkg/parser"
	"github.com/sgnl-ai/caep.dev/secevent/pkg/subject"
)

// Where the pinned ssfreceiver and secevent depart from the specifications Tessera follows, the
// workarounds are here and only here, each named by what the library does:
//
//   - transmitterAnswers (ssfreceiver): SSF 1.0 section 8.1.4.2 has a verification request
//     answered 204 No Content, as Tessera does; Verify takes only 200 and would call the 204 a
//     failure, so that answer, from the verification endpoint only, is handed over as 200.
//     RFC 8936 section 2.5's poll answer has "moreAvailable", a boolean, beside "sets"; Poll
//     decodes the whole answer as a map of string maps and fails on it, so the member is taken
//     out of the poll answer (every poll here asks for up to 100 SETs and gets them all).
//
// secevent writes and reads an iss_sub subject's issuer as "issuer", where RFC 9493 section
// 3.2.4 names it "iss" (as Tessera writes it):
//
//   - issSubSubject: the account added to the stream, written as RFC 9493 has it (secevent's
//     NewIssuerSubSubject would be refused 400 by a transmitter that checks the subject);
//   - setReader: a SET's signature is checked against the transmitter's JWKS with jwx (the
//     library's own JOSE dependency), then each iss_sub in sub_id has its "iss" given to
//     secevent as "issuer", and secevent's parser reads the event; iss and aud are then checked
//     on what it read. secevent's verifying ParseSecEvent cannot be used: it refuses every
//     RFC 9493 iss_sub ("issuer is required").
//
// A third, also only here: secevent takes a credential-change only with one of the ten
// credential types CAEP 1.0 lists, refusing the "any other credential type supported mutually by
// the Transmitter and the Receiver" the same section allows (Tessera's "api-key", a Transaction
// Key). Such a SET, its signature, iss and aud checked as above, is read from its claims by this
// program and printed with secevent's refusal (library_refusal), so the test sees both.
type issSubSubject struct {
	Iss string `json:"iss"`
	Sub string `json:"sub"`
}

func (s *issSubSubject) Format() subject.Format { return subject.FormatIssuerSub }
func (s *issSubSubject) Validate() error {
	if s.Iss == "" || s.Sub == "" {
		return errors.New("iss and sub are required")
	}
	return nil
}
func (s *issSubSubject) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"format": string(subject.FormatIssuerSub), "iss": s.Iss, "sub": s.Sub})
}
func (s *issSubSubject) UnmarshalJSON(raw []byte) error {
	type plain issSubSubject
	return json.Unmarshal(raw, (*plain)(s))
}
func (s *issSubSubject) Payload() (map[string]interface{}, error) {
	return map[string]interface{}{"format": string(subject.FormatIssuerSub), "iss": s.Iss, "sub": s.Sub}, nil
}

type transmitterAnswers struct{ next http.RoundTripper }

func (t transmitterAnswers) RoundTrip(request *http.Request) (*http.Response, error) {
	response, err := t.next.RoundTrip(request)
	if err != nil || request.Method != http.MethodPost {
		return response, err
	}
	switch {
	case response.StatusCode == http.StatusNoContent && strings.HasSuffix(request.URL.Path, "/ssf/verify"):
		response.StatusCode, response.Status = http.StatusOK, "200 OK"
	case response.StatusCode == http.StatusOK && strings.HasSuffix(request.URL.Path, "/ssf/poll"):
		body, err := io.ReadAll(response.Body)
		_ = response.Body.Close()
		if err != nil {
			return nil, err
		}
		var answer map[string]json.RawMessage
		if err := json.Unmarshal(body, &answer); err != nil {
			return nil, err
		}
		delete(answer, "moreAvailable")
		if body, err = json.Marshal(answer); err != nil {
			return nil, err
		}
		response.Body, response.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		response.Header.Del("Content-Length")
	}
	return response, nil
}

type setReader struct {
	jwksURL  string
	issuer   string
	audience []string
	parser   *parser.Parser

	keysMu sync.Mutex
	keys   jwk.Set
}

func (r *setReader) keySet(refresh bool) (jwk.Set, error) {
	r.keysMu.Lock()
	defer r.keysMu.Unlock()
	if r.keys == nil || refresh {
		keys, err := jwk.Fetch(context.Background(), r.jwksURL)
		if err != nil {
			return nil, err
		}
		r.keys = keys
	}
	return r.keys, nil
}

// readSet is what was read from one SET.
type readSet struct {
	jti            string
	eventType      string
	event          any
	subject        map[string]any
	libraryRefusal string
}

func (r *setReader) read(raw string) (*readSet, error) {
	payload, err := r.verify(raw, false)
	if err != nil {
		// A key published since the JWKS was fetched: fetch it again, once.
		if payload, err = r.verify(raw, true); err != nil {
			return nil, fmt.Errorf("signature: %w", err)
		}
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		return nil, err
	}
	if claims["iss"] != r.issuer {
		return nil, fmt.Errorf("iss %v is not the transmitter's %q", claims["iss"], r.issuer)
	}
	if aud, _ := claims["aud"].(string); !slices.Contains(r.audience, aud) {
		return nil, fmt.Errorf("aud %v is not the stream's %v", claims["aud"], r.audience)
	}
	subjectID, _ := claims["sub_id"].(map[string]any)
	if subjectID != nil {
		renameIss(subjectID)
		for _, member := range subjectID {
			if component, ok := member.(map[string]any); ok {
				renameIss(component)
			}
		}
	}
	translated, err := json.Marshal(claims)
	if err != nil {
		return nil, err
	}
	header := strings.SplitN(raw, ".", 2)[0]
	secEvent, err := r.parser.ParseSecEventNoVerify(header + "." + base64.RawURLEncoding.EncodeToString(translated) + ".")
	if err == nil {
		read := &readSet{jti: secEvent.ID, eventType: string(secEvent.Event.Type()), event: secEvent.Event.Payload()}
		if read.subject, err = secEvent.Subject.Payload(); err != nil {
			return nil, err
		}
		return read, nil
	}
	events, _ := claims["events"].(map[string]any)
	if !strings.Contains(err.Error(), "invalid credential type") || len(events) != 1 {
		return nil, err
	}
	jti, _ := claims["jti"].(string)
	read := &readSet{jti: jti, subject: subjectID, libraryRefusal: err.Error()}
	for eventType, event := range events {
		read.eventType, read.event = eventType, event
	}
	return read, nil
}

func (r *setReader) verify(raw string, refresh bool) ([]byte, error) {
	keys, err := r.keySet(refresh)
	if err != nil {
		return nil, err
	}
	return jws.Verify([]byte(raw), jws.WithKeySet(keys, jws.WithInferAlgorithmFromKey(true)))
}

func renameIss(identifier map[string]any) {
	if identifier["format"] == string(subject.FormatIssuerSub) {
		if iss, ok := identifier["iss"]; ok {
			identifier["issuer"] = iss
			delete(identifier, "iss")
		}
	}
}
