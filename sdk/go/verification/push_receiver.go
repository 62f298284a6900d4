package verification

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
)

// maxPushBody bounds what a push request may send: one SET is a few kilobytes.
const maxPushBody = 64 * 1024

// PushReceiver is an RFC 8935 push endpoint: Tessera POSTs each SET as application/secevent+jwt
// with the Authorization header the stream was created with. It answers 202 for a SET applied
// (or a duplicate), and 400 {"err","description"} otherwise, with RFC 8935's codes, so that Tessera
// drops a malformed SET (invalid_request) and retries one refused for keys or configuration.
type PushReceiver struct {
	consumer      *SignalConsumer
	authorization string
}

// NewPushReceiver answers pushes whose Authorization header is exactly authorization (the
// receiver's own secret, as given to Tessera in the stream's delivery.authorization_header).
func NewPushReceiver(consumer *SignalConsumer, authorization string) (*PushReceiver, error) {
	if authorization == "" {
		return nil, errors.New("verification: a push receiver needs the Authorization value Tessera sends")
	}
	return &PushReceiver{consumer: consumer, authorization: authorization}, nil
}

func (receiver *PushReceiver) ServeHTTP(writer http.ResponseWriter, request *http.Request) {
	if request.Method != http.MethodPost {
		writer.Header().Set("Allow", http.MethodPost)
		http.Error(writer, "POST a SET here", http.StatusMethodNotAllowed)
		return
	}
	// Compared in constant time: the header is a secret.
	if subtle.ConstantTimeCompare([]byte(request.Header.Get("Authorization")), []byte(receiver.authorization)) != 1 {
		pushError(writer, "authentication_failed", "the Authorization header is not this receiver's")
		return
	}
	if mediaType, _, err := mime.ParseMediaType(request.Header.Get("Content-Type")); err != nil || mediaType != "application/secevent+jwt" {
		pushError(writer, "invalid_request", "the body must be application/secevent+jwt")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(writer, request.Body, maxPushBody))
	if err != nil {
		pushError(writer, "invalid_request", "the body is too large or could not be read")
		return
	}
	if _, err := receiver.consumer.Consume(request.Context(), string(body)); err != nil {
		var rejection *SETRejection
		if errors.As(err, &rejection) {
			pushError(writer, rejection.Err, rejection.Description)
			return
		}
		pushError(writer, "invalid_request", "the SET could not be processed")
		return
	}
	writer.WriteHeader(http.StatusAccepted)
}

// pushError is RFC 8935 section 2.3's error answer: 400 with a JSON object naming the error code.
func pushError(writer http.ResponseWriter, code, description string) {
	writer.Header().Set("Content-Type", "application/json")
	writer.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(writer).Encode(map[string]string{"err": code, "description": description}) // the transmitter may have gone
}
