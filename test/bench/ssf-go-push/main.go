// Command ssf-go-push is the Go module's push receiver (README, "Push instead of poll") in a
// downstream service, for the bench: sdk/go/examples/downstream hears revocations by polling
// only. GET /orders is protected by Tessera's access tokens; POST /ssf/events takes the SETs
// Tessera pushes to the stream the bench creates for it (its aud is that endpoint's URL).
//
// The push Authorization value is read from the first line of standard input, never from the
// command line (which other users of the host can read). It prints one JSON line once it serves:
// {"listening": "http://127.0.0.1:P"}.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/tessera-auth/tessera/sdk/go/verification"
)

func main() {
	tesseraURL := flag.String("tessera", "", "Tessera's public URL: its JWKS and /.well-known/ssf-configuration")
	caFile := flag.String("ca", "", "a PEM file of CAs to trust for Tessera's certificate")
	issuers := flag.String("issuers", "urn:tessera:issuer", "comma-separated iss values accepted in access tokens")
	flag.Parse()
	if *tesseraURL == "" || *caFile == "" {
		log.Fatal("-tessera and -ca are required")
	}
	pushAuthorization, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil && pushAuthorization == "" {
		log.Fatal("the push Authorization value is read from the first line of standard input")
	}
	client, err := httpClient(*caFile)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	base := strings.TrimRight(*tesseraURL, "/")
	verifier, err := verification.NewVerifier(verification.Config{JWKSURL: base + "/.well-known/jwks.json", Issuers: strings.Split(*issuers, ","), HTTPClient: client})
	if err != nil {
		log.Fatal(err)
	}
	if err := verifier.LoadKeys(ctx); err != nil {
		log.Fatal(err)
	}
	// A SET's iss is the transmitter's issuer, which its metadata names.
	transmitterIssuer, err := ssfIssuer(ctx, client, base)
	if err != nil {
		log.Fatal(err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	origin := "http://" + listener.Addr().String()
	sets := &verification.SETVerifier{Keys: verifier.Keys(), Refresh: verifier.RefreshKeys, Issuer: transmitterIssuer, Audience: origin + "/ssf/events"}
	push, err := verification.NewPushReceiver(verification.NewSignalConsumer(sets, verifier.Projection()), strings.TrimSpace(pushAuthorization))
	if err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.Handle("POST /ssf/events", push)
	mux.Handle("GET /orders", verifier.Middleware(verification.Requirement{Permission: "transaction:charge"}, verification.MiddlewareOptions{},
		http.HandlerFunc(func(writer http.ResponseWriter, request *http.Request) {
			claims, _ := verification.ClaimsFrom(request.Context())
			writer.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(writer).Encode(map[string]string{"account": claims.Subject})
		})))
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	encoded, _ := json.Marshal(map[string]string{"listening": origin}) // a map of strings always encodes
	fmt.Println(string(encoded))
	if err := server.Serve(listener); err != http.ErrServerClosed {
		log.Fatal(err)
	}
}

func ssfIssuer(ctx context.Context, client *http.Client, base string) (string, error) {
	request, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/.well-known/ssf-configuration", nil)
	if err != nil {
		return "", err
	}
	answer, err := client.Do(request)
	if err != nil {
		return "", err
	}
	defer answer.Body.Close()
	var configuration struct {
		Issuer string `json:"issuer"`
	}
	if err := json.NewDecoder(answer.Body).Decode(&configuration); err != nil || configuration.Issuer == "" {
		return "", fmt.Errorf("no issuer in the ssf-configuration (status %d)", answer.StatusCode)
	}
	return configuration.Issuer, nil
}

func httpClient(caFile string) (*http.Client, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}, nil
}
