module github.com/tessera-auth/tessera/sdk/go

go 1.25
