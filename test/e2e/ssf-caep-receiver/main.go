// A Shared Signals receiver written with SGNL's caep.dev ssfreceiver library (its builder makes
// the stream, its stream polls, acknowledges and asks for verification) and its secevent parser
// (signature against the transmitter's JWKS, issuer, audience, CAEP event parsing), against
// Tessera: what an outside party building on that library would run.
//
// Usage: ssf-caep-receiver -metadata URL -method poll|push [-listen 127.0.0.1:PORT] -account ID
// (the receiver token on stdin). Trust for Tessera's certificate comes from SSL_CERT_FILE.
// Prints one JSON line per step and per SET it accepted; never the token.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sgnl-ai/caep.dev/secevent/pkg/event"
	"github.com/sgnl-ai/caep.dev/secevent/pkg/parser"
	"github.com/sgnl-ai/caep.dev/secevent/pkg/schemes/caep"
	"github.com/sgnl-ai/caep.dev/ssfreceiver/auth"
	"github.com/sgnl-ai/caep.dev/ssfreceiver/builder"
	"github.com/sgnl-ai/caep.dev/ssfreceiver/options"
	"github.com/sgnl-ai/caep.dev/ssfreceiver/stream"
)

var printing sync.Mutex

func report(line map[string]any) {
	printing.Lock()
	defer printing.Unlock()
	encoded, _ := json.Marshal(line)
	fmt.Println(string(encoded))
}

func fail(step string, err error) {
	report(map[string]any{"error": step, "detail": err.Error()})
	os.Exit(1)
}

func main() {
	metadataURL := flag.String("metadata", "", "the transmitter's /.well-known/ssf-configuration")
	method := flag.String("method", "poll", "poll or push")
	listen := flag.String("listen", "", "for push: the address to take SETs on")
	account := flag.String("account", "", "the account to follow (an iss_sub subject)")
	flag.Parse()
	input := bufio.NewScanner(os.Stdin)
	input.Scan()
	bearer, err := auth.NewBearer(strings.TrimSpace(input.Text()))
	if err != nil {
		fail("auth", err)
	}

	httpClient := &http.Client{Timeout: 30 * time.Second, Transport: transmitterAnswers{http.DefaultTransport}}
	builderOptions := []builder.Option{
		builder.WithAuth(bearer),
		builder.WithHTTPClient(httpClient),
		builder.WithDescription("caep.dev ssfreceiver " + *method),
		builder.WithEventTypes([]event.EventType{caep.EventTypeSessionRevoked, caep.EventTypeCredentialChange}),
	}
	var pushListener net.Listener
	if *method == "push" {
		pushListener, err = net.Listen("tcp", *listen)
		if err != nil {
			fail("listen", err)
		}
		builderOptions = append(builderOptions, builder.WithPushDelivery("http://"+pushListener.Addr().String()+"/events"))
	} else {
		builderOptions = append(builderOptions, builder.WithPollDelivery())
	}
	streamBuilder, err := builder.New(*metadataURL, builderOptions...)
	if err != nil {
		fail("builder", err)
	}
	ctx := context.Background()
	ssfStream, err := streamBuilder.Setup(ctx)
	if err != nil {
		fail("setup", err)
	}
	metadata := ssfStream.GetMetadata()
	issuer := metadata.GetIssuer().String()
	audience := ssfStream.GetConfiguration().GetAudience()
	report(map[string]any{"stream_id": ssfStream.GetStreamID(), "delivery": string(ssfStream.GetConfiguration().GetDeliveryMethod()), "issuer": issuer, "aud": audience})

	setParser := &setReader{jwksURL: metadata.GetJWKSUri().String(), issuer: issuer, audience: audience, parser: parser.NewParser()}
	if err := ssfStream.AddSubject(ctx, &issSubSubject{Iss: issuer, Sub: *account}); err != nil {
		fail("add-subject", err)
	}
	report(map[string]any{"subject_added": *account})

	state := fmt.Sprintf("caep-dev-%d", time.Now().UnixNano())
	if pushListener != nil {
		go servePushes(pushListener, setParser)
	}
	if err := ssfStream.Verify(ctx, options.WithState(state)); err != nil {
		fail("verify", err)
	}
	report(map[string]any{"verification_requested": state})
	if pushListener == nil {
		pollForever(ctx, ssfStream, setParser)
	}
	select {}
}

func pollForever(ctx context.Context, ssfStream stream.Stream, setParser *setReader) {
	acknowledged := map[string]bool{}
	// The first poll after an acknowledgement is reported whatever it holds: the test reads from
	// it that the transmitter no longer answers what was acknowledged.
	reportNext := false
	for {
		// ssfreceiver sends the number wanted as "max_events" (RFC 8936: "maxEvents"); Tessera
		// ignores it and answers up to its default, 100.
		sets, err := ssfStream.Poll(ctx)
		if err != nil {
			// One poll of a stream at a time at Tessera: a 429 is said again after Retry-After.
			report(map[string]any{"poll_error": err.Error()})
			time.Sleep(time.Second)
			continue
		}
		if reportNext {
			answered := make([]string, 0, len(sets))
			for jti := range sets {
				answered = append(answered, jti)
			}
			report(map[string]any{"polled_after_ack": answered})
			reportNext = false
		}
		jtis := make([]string, 0, len(sets))
		for jti, raw := range sets {
			if acknowledged[jti] {
				report(map[string]any{"redelivered_after_ack": jti})
			}
			if accept(jti, raw, "poll", setParser) {
				jtis = append(jtis, jti)
			}
		}
		if len(jtis) > 0 {
			if err := ssfStream.Acknowledge(ctx, jtis); err != nil {
				report(map[string]any{"ack_error": err.Error()})
				continue
			}
			for _, jti := range jtis {
				acknowledged[jti] = true
			}
			report(map[string]any{"acknowledged": jtis})
			reportNext = true
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func servePushes(listener net.Listener, setParser *setReader) {
	handler := http.NewServeMux()
	handler.HandleFunc("POST /events", func(response http.ResponseWriter, request *http.Request) {
		body, err := io.ReadAll(io.LimitReader(request.Body, 1<<20))
		if err != nil || !strings.HasPrefix(request.Header.Get("Content-Type"), "application/secevent+jwt") {
			response.WriteHeader(http.StatusBadRequest)
			return
		}
		if !accept("", string(body), "push", setParser) {
			// RFC 8935 section 2.3: the SET was not taken, named by a code the transmitter reads.
			response.Header().Set("Content-Type", "application/json")
			response.WriteHeader(http.StatusBadRequest)
			_, _ = response.Write([]byte(`{"err":"invalid_request","description":"the SET did not verify"}`))
			return
		}
		response.WriteHeader(http.StatusAccepted)
	})
	if err := http.Serve(listener, handler); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fail("serve", err)
	}
}

// accept verifies and parses one SET and prints what was read from it.
func accept(jti, raw, via string, setParser *setReader) bool {
	read, err := setParser.read(raw)
	if err != nil {
		report(map[string]any{"refused": jti, "via": via, "detail": err.Error()})
		return false
	}
	line := map[string]any{"via": via, "jti": read.jti, "event_type": read.eventType, "event": read.event, "subject": read.subject}
	if read.libraryRefusal != "" {
		line["library_refusal"] = read.libraryRefusal
	}
	if jti != "" && jti != read.jti {
		line["poll_key_mismatch"] = jti
	}
	report(line)
	return true
}
