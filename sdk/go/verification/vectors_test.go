package verification

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// vectorsFile is the fixtures every Tessera verification SDK runs; the Node verifier is the reference.
var vectorsFile = filepath.Join("..", "..", "..", "test", "vectors", "verification", "vectors.json")

type vectors struct {
	Issuer                        string            `json:"issuer"`
	Audiences                     map[string]string `json:"audiences"`
	ClockSkewSeconds              int64             `json:"clock_skew_seconds"`
	MaxAccessTokenLifetimeSeconds int64             `json:"max_access_token_lifetime_seconds"`
	JWKS                          json.RawMessage   `json:"jwks"`
	Cases                         []vectorCase      `json:"cases"`
}

type vectorCase struct {
	Name          string  `json:"name"`
	Authorization *string `json:"authorization"`
	Request       *struct {
		Method string  `json:"method"`
		URL    string  `json:"url"`
		DPoP   *string `json:"dpop"`
	} `json:"request"`
	Now         int64 `json:"now"`
	Requirement struct {
		Interface  string `json:"interface"`
		Permission string `json:"permission"`
		Audience   string `json:"audience"`
	} `json:"requirement"`
	Revocations []json.RawMessage `json:"revocations"`
	Expected    struct {
		Status int     `json:"status"`
		Error  *string `json:"error"`
		Scheme *string `json:"scheme"`
	} `json:"expected"`
}

func loadVectors(t *testing.T) vectors {
	t.Helper()
	raw, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatalf("the shared vectors are read from the repository (%s): %v", vectorsFile, err)
	}
	var loaded vectors
	if err := json.Unmarshal(raw, &loaded); err != nil {
		t.Fatalf("%s: %v", vectorsFile, err)
	}
	if len(loaded.Cases) == 0 {
		t.Fatalf("%s holds no cases", vectorsFile)
	}
	return loaded
}

// TestSharedVectors runs every case of the shared file: each from a fresh verifier whose keys
// come over HTTP from the vectors' JWKS, its revocations (decoded SET payloads) applied first.
func TestSharedVectors(t *testing.T) {
	loaded := loadVectors(t)
	jwks := httptest.NewServer(http.HandlerFunc(func(writer http.ResponseWriter, _ *http.Request) {
		writer.Header().Set("Content-Type", "application/json")
		_, _ = writer.Write(loaded.JWKS)
	}))
	defer jwks.Close()

	for _, vector := range loaded.Cases {
		t.Run(vector.Name, func(t *testing.T) {
			now := time.Unix(vector.Now, 0)
			verifier, err := NewVerifier(Config{
				JWKSURL: jwks.URL, Issuers: []string{loaded.Issuer}, HTTPClient: jwks.Client(),
				ClockSkew: time.Duration(loaded.ClockSkewSeconds) * time.Second, Now: func() time.Time { return now },
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := verifier.LoadKeys(context.Background()); err != nil {
				t.Fatal(err)
			}
			sets := &SETVerifier{Issuer: loaded.Issuer, MaxAccessTokenLifetime: time.Duration(loaded.MaxAccessTokenLifetimeSeconds) * time.Second}
			for _, payload := range vector.Revocations {
				claims, ok := parseJSONObjectBytes(payload)
				if !ok {
					t.Fatalf("a revocation is not a JSON object: %s", payload)
				}
				event, err := sets.securityEventOf(claims)
				if err != nil {
					t.Fatalf("the SET %s was refused: %v", payload, err)
				}
				for _, revocation := range event.Revocations {
					verifier.Projection().Apply(revocation)
				}
			}
			requirement := Requirement{Audience: vector.Requirement.Audience, Permission: vector.Requirement.Permission}
			if requirement.Audience == "" {
				requirement.Audience = loaded.Audiences[vector.Requirement.Interface]
			}
			var presented *PresentedRequest
			if vector.Request != nil {
				presented = &PresentedRequest{Method: vector.Request.Method, URL: vector.Request.URL}
				if vector.Request.DPoP != nil {
					presented.DPoP = []string{*vector.Request.DPoP}
				}
			}
			authorization := ""
			if vector.Authorization != nil {
				authorization = *vector.Authorization
			}
			decision := verifier.Check(context.Background(), authorization, requirement, presented)
			scheme, errorCode := firstChallenge(decision)
			if decision.Status != vector.Expected.Status || !sameOptional(scheme, vector.Expected.Scheme) || !sameOptional(errorCode, vector.Expected.Error) {
				t.Errorf("got %d scheme=%q error=%q (%s: %s), Node answers %d scheme=%v error=%v",
					decision.Status, scheme, errorCode, decision.Code, decision.Detail, vector.Expected.Status, show(vector.Expected.Scheme), show(vector.Expected.Error))
			}
		})
	}
}

var challengeStart = regexp.MustCompile(`^([A-Za-z]+)(?: error="([a-z_]+)")?`)

// firstChallenge is the scheme and error parameter of the first challenge the decision's
// WWW-Authenticate carries; both empty for a 200.
func firstChallenge(decision Decision) (scheme, errorCode string) {
	if decision.Status == http.StatusOK {
		return "", ""
	}
	match := challengeStart.FindStringSubmatch(Challenge(decision))
	if match == nil {
		return "?", "?"
	}
	return match[1], match[2]
}

func sameOptional(got string, want *string) bool {
	if want == nil {
		return got == ""
	}
	return got == *want
}

func show(value *string) string {
	if value == nil {
		return "null"
	}
	return *value
}
