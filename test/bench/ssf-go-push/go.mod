module tessera.bench/ssf-go-push

go 1.25

require github.com/tessera-auth/tessera/sdk/go v0.0.0

replace github.com/tessera-auth/tessera/sdk/go => ../../../sdk/go
