package devidp

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/oauth2"
)

// TestRotateSigningKeyToES256: after a rotation discovery lists ES256
// only, the JWKS holds the new key and the old one, and new ID tokens are
// signed with ES256; a verifier built from the discovery read before the
// rotation refuses them, one built from a fresh read accepts them.
func TestRotateSigningKeyToES256(t *testing.T) {
	e := newEnv(t, DemoUsers())
	before := e.provider.Verifier(&oidc.Config{ClientID: testClientID})
	conf := e.oauthConfig(oauth2.AuthStyleInHeader, testClientSecret)
	signIn := func() string {
		t.Helper()
		f, code := e.login(t, conf, "alice")
		tok, err := conf.Exchange(t.Context(), code, oauth2.VerifierOption(f.verifier))
		if err != nil {
			t.Fatalf("Exchange: %v", err)
		}
		raw, _ := tok.Extra("id_token").(string)
		return raw
	}
	if _, err := before.Verify(t.Context(), signIn()); err != nil {
		t.Fatalf("RS256 token before the rotation: %v", err)
	}

	if err := e.p.RotateSigningKey(jose.ES256); err != nil {
		t.Fatal(err)
	}
	var disc struct {
		Algs    []string `json:"id_token_signing_alg_values_supported"`
		JWKSURI string   `json:"jwks_uri"`
	}
	getJSON(t, e, e.issuer+"/.well-known/openid-configuration", &disc)
	if !slices.Equal(disc.Algs, []string{"ES256"}) {
		t.Errorf("id_token_signing_alg_values_supported = %v after the rotation, want [ES256]", disc.Algs)
	}
	var jwks jose.JSONWebKeySet
	getJSON(t, e, disc.JWKSURI, &jwks)
	var algs []string
	for _, k := range jwks.Keys {
		algs = append(algs, k.Algorithm)
	}
	if !slices.Equal(algs, []string{"ES256", "RS256"}) {
		t.Errorf("JWKS algorithms = %v, want [ES256 RS256] (the new key, then the retired one)", algs)
	}

	raw := signIn()
	jws, err := jose.ParseSignedCompact(raw, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatalf("ID token after the rotation is not ES256: %v", err)
	}
	if kid := jws.Signatures[0].Header.KeyID; kid != jwks.Keys[0].KeyID {
		t.Errorf("ID token kid = %q, want the new key's %q", kid, jwks.Keys[0].KeyID)
	}
	if _, err := before.Verify(t.Context(), raw); err == nil || !strings.Contains(err.Error(), `"ES256"`) {
		t.Errorf("verifier from the old discovery: err = %v, want an unexpected ES256", err)
	}
	fresh, err := oidc.NewProvider(t.Context(), e.issuer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Verifier(&oidc.Config{ClientID: testClientID}).Verify(t.Context(), raw); err != nil {
		t.Errorf("verifier from a fresh discovery: %v", err)
	}
	if err := e.p.RotateSigningKey("HS256"); err == nil {
		t.Error("RotateSigningKey(HS256) succeeded, want an error")
	}
}

func getJSON(t *testing.T, e *testEnv, target string, v any) {
	t.Helper()
	resp, body := e.do(t, http.MethodGet, target, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d", target, resp.StatusCode)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
}
