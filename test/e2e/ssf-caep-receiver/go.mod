module tessera.test/ssf-caep-receiver

go 1.25

require (
	github.com/lestrrat-go/jwx/v2 v2.1.6
	github.com/sgnl-ai/caep.dev/secevent v0.0.0-20241202180510-fa7f08427d5b
	github.com/sgnl-ai/caep.dev/ssfreceiver v0.0.0-20251124192951-b619c24d135d
)

require (
	github.com/decred/dcrd/dcrec/secp256k1/v4 v4.4.0 // indirect
	github.com/goccy/go-json v0.10.3 // indirect
	github.com/golang-jwt/jwt/v5 v5.3.0 // indirect
	github.com/lestrrat-go/blackmagic v1.0.3 // indirect
	github.com/lestrrat-go/httpcc v1.0.1 // indirect
	github.com/lestrrat-go/httprc v1.0.6 // indirect
	github.com/lestrrat-go/iter v1.0.2 // indirect
	github.com/lestrrat-go/option v1.0.1 // indirect
	github.com/segmentio/asm v1.2.0 // indirect
	golang.org/x/crypto v0.45.0 // indirect
	golang.org/x/oauth2 v0.33.0 // indirect
	golang.org/x/sys v0.38.0 // indirect
)

// Neither module is on the Go module proxy: both are vendored, at one pinned commit, under
// third_party/caep.dev (see its README.vendored).
replace (
	github.com/sgnl-ai/caep.dev/secevent => ../../../third_party/caep.dev/secevent
	github.com/sgnl-ai/caep.dev/ssfreceiver => ../../../third_party/caep.dev/ssfreceiver
)
