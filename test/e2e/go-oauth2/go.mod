module tessera.test/go-oauth2

go 1.23

require golang.org/x/oauth2 v0.23.0
