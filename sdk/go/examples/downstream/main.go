// Command downstream is a small service protected by Tessera's access tokens: one route needs a
// permission, and revocations arrive by Shared Signals polling. It is the README's example, run by
// the repository's end-to-end test.
//
// The receiver token is read from the first line of standard input, never from the command line
// (which other users of the host can read). It prints JSON lines: where it listens, then when its
// Shared Signals stream is ready.
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
	tesseraURL := flag.String("tessera", "", "Tessera's public URL (TESSERA_PUBLIC_URL): JWKS and Shared Signals")
	caFile := flag.String("ca", "", "a PEM file of CAs to trust for Tessera's certificate (default: the system's)")
	issuers := flag.String("issuers", "urn:tessera:issuer", "comma-separated iss values accepted (TESSERA_ISSUER, and the public URL for OAuth 2.0 tokens)")
	permission := flag.String("permission", "transaction:charge", "the scope GET /orders needs")
	accounts := flag.String("accounts", "", "comma-separated account ids whose revocations to follow")
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	flag.Parse()
	if *tesseraURL == "" {
		log.Fatal("-tessera is required")
	}
	receiverToken, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil && receiverToken == "" {
		log.Fatal("the receiver token is read from the first line of standard input")
	}
	client, err := httpClient(*caFile)
	if err != nil {
		log.Fatal(err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	verifier, err := verification.NewVerifier(verification.Config{
		JWKSURL:    strings.TrimRight(*tesseraURL, "/") + "/.well-known/jwks.json",
		Issuers:    strings.Split(*issuers, ","),
		HTTPClient: client,
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := verifier.LoadKeys(ctx); err != nil {
		log.Fatal(err)
	}
	receiver, err := verification.NewPollReceiver(verification.PollConfig{
		TransmitterURL: *tesseraURL,
		ReceiverToken:  strings.TrimSpace(receiverToken),
		Accounts:       splitList(*accounts),
		Keys:           verifier.Keys(),
		RefreshKeys:    verifier.RefreshKeys,
		Projection:     verifier.Projection(),
		HTTPClient:     client,
		Logf:           log.Printf,
	})
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		if err := receiver.Run(ctx); err != nil && ctx.Err() == nil {
			log.Printf("shared signals stopped: %v", err)
		}
	}()
	go forgetExpired(ctx, verifier.Projection())

	mux := http.NewServeMux()
	mux.Handle("GET /orders", verifier.Middleware(verification.Requirement{Permission: *permission}, verification.MiddlewareOptions{},
		http.HandlerFunc(func(writer http.ResponseWriter, request *http.Request) {
			claims, _ := verification.ClaimsFrom(request.Context())
			writer.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(writer).Encode(map[string]string{"account": claims.Subject, "orders": "none yet"})
		})))
	listener, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	announce(map[string]string{"listening": "http://" + listener.Addr().String()})
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		select {
		case stream := <-receiver.Ready():
			announce(map[string]string{"ssf_ready": stream.StreamID})
		case <-ctx.Done():
		}
	}()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	if err := server.Serve(listener); err != http.ErrServerClosed {
		log.Fatal(err)
	}
}

// httpClient trusts the system's CAs, plus caFile's when given (a self-signed Tessera in development).
func httpClient(caFile string) (*http.Client, error) {
	if caFile == "" {
		return &http.Client{}, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}, nil
}

// forgetExpired drops, once a minute, the revocations whose tokens have all expired.
func forgetExpired(ctx context.Context, projection *verification.RevocationProjection) {
	ticker := time.NewTicker(time.Minute)
	defer ticker.Stop()
	for {
		select {
		case now := <-ticker.C:
			projection.ForgetExpired(now.Unix())
		case <-ctx.Done():
			return
		}
	}
}

func splitList(list string) []string {
	var items []string
	for _, item := range strings.Split(list, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}

func announce(line map[string]string) {
	encoded, _ := json.Marshal(line) // a map of strings always encodes
	fmt.Println(string(encoded))
}
