// A Go service getting tokens from Tessera with golang.org/x/oauth2/clientcredentials, as its
// documentation shows: a token source against the token endpoint named in the RFC 8414 metadata.
//
// Usage: go run . ISSUER CA_FILE AUTH_STYLE   (client id and secret on stdin, one per line;
// AUTH_STYLE is "header" for client_secret_basic or "params" for client_secret_post).
// Prints one JSON object; never the secret.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

func main() {
	issuer, caFile, style := os.Args[1], os.Args[2], os.Args[3]
	input := bufio.NewScanner(os.Stdin)
	input.Scan()
	clientID := input.Text()
	input.Scan()
	clientSecret := input.Text()

	pem, err := os.ReadFile(caFile)
	fail(err)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	httpClient := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}

	answer, err := httpClient.Get(issuer + "/.well-known/oauth-authorization-server")
	fail(err)
	var metadata struct {
		Issuer        string `json:"issuer"`
		TokenEndpoint string `json:"token_endpoint"`
	}
	fail(json.NewDecoder(answer.Body).Decode(&metadata))
	answer.Body.Close()

	authStyle := oauth2.AuthStyleInHeader
	if style == "params" {
		authStyle = oauth2.AuthStyleInParams
	}
	config := clientcredentials.Config{
		ClientID:     clientID,
		ClientSecret: clientSecret,
		TokenURL:     metadata.TokenEndpoint,
		Scopes:       []string{"transaction:charge"},
		AuthStyle:    authStyle,
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, httpClient)
	source := config.TokenSource(ctx)
	first, err := source.Token()
	fail(err)
	// A token source hands out its token again while it is valid: no second request.
	second, err := source.Token()
	fail(err)

	wrong := config
	wrong.ClientSecret = clientSecret + "x"
	_, refused := wrong.Token(ctx)
	refusedError := ""
	if retrieve, ok := refused.(*oauth2.RetrieveError); ok {
		refusedError = fmt.Sprintf("%d %s", retrieve.Response.StatusCode, retrieve.ErrorCode)
	}

	out, err := json.Marshal(map[string]any{
		"issuer":       metadata.Issuer,
		"access_token": first.AccessToken,
		"token_type":   first.TokenType,
		"scope":        first.Extra("scope"),
		"expires_in_s": int(time.Until(first.Expiry).Round(time.Second).Seconds()),
		"same_token":   first.AccessToken == second.AccessToken,
		"wrong_secret": strings.TrimSpace(refusedError),
	})
	fail(err)
	fmt.Println(string(out))
}

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
