package engine

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/earshot-app/earshot/api"
)

// tokenScope is the scope the grant endpoint gives: use of the core voice
// APIs, never management.
const tokenScope = "usage:write"

// tokenClaims are the claims of the engine's JWTs.
type tokenClaims struct {
	Scope string `json:"scope"`
	jwt.RegisteredClaims
}

// credential is who made a request.
type credential struct {
	scheme string // api.SchemeToken or api.SchemeBearer
	// accessor identifies the key (never the key itself).
	accessor string
	expires  time.Time // zero for keys
}

// errBadCredentials is any failure to authenticate.
var errBadCredentials = errors.New("invalid credentials")

// authenticator checks Authorization headers and mints tokens. It is safe
// for concurrent use: every field is set once at construction.
type authenticator struct {
	key        []byte // the accepted API key
	accessor   string
	signingKey []byte
	now        func() time.Time
}

func newAuthenticator(key api.Secret, signingKey []byte, now func() time.Time) *authenticator {
	sum := sha256.Sum256([]byte(key.Reveal()))
	return &authenticator{
		key:        []byte(key.Reveal()),
		accessor:   "local-" + hex.EncodeToString(sum[:6]),
		signingKey: signingKey,
		now:        now,
	}
}

// check authenticates a request's Authorization header. The lifetime of a
// token is checked here, so it applies to REST requests and to WebSocket
// handshakes; an open socket never re-checks it.
func (a *authenticator) check(header string) (credential, error) {
	scheme, cred, ok := api.ParseAuthorization(header)
	if !ok {
		return credential{}, errBadCredentials
	}
	if scheme == api.SchemeToken {
		if subtle.ConstantTimeCompare([]byte(cred), a.key) != 1 {
			return credential{}, errBadCredentials
		}
		return credential{scheme: scheme, accessor: a.accessor}, nil
	}
	var claims tokenClaims
	_, err := jwt.ParseWithClaims(cred, &claims, func(*jwt.Token) (any, error) { return a.signingKey, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(a.now),
		jwt.WithIssuer(tokenIssuer),
	)
	if err != nil {
		return credential{}, fmt.Errorf("%w: %v", errBadCredentials, err)
	}
	if claims.Subject != a.accessor || claims.Scope != tokenScope {
		return credential{}, errBadCredentials
	}
	return credential{scheme: scheme, accessor: claims.Subject, expires: claims.ExpiresAt.Time}, nil
}

const tokenIssuer = "earshot-local-engine"

// mint signs a token for the key's accessor with the given lifetime.
// A JWT's times are whole seconds (jwt.NewNumericDate truncates to
// jwt.TimePrecision), so the expiry is rounded up: a token lives at least
// its ttl. Truncated, a 1 s token minted at 12:00:05.96 expired at
// 12:00:06, 40 ms later.
func (a *authenticator) mint(ttl time.Duration) (string, error) {
	now := a.now()
	claims := tokenClaims{
		Scope: tokenScope,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    tokenIssuer,
			Subject:   a.accessor,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(ceilTime(now.Add(ttl), jwt.TimePrecision)),
		},
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(a.signingKey)
}

// ceilTime rounds t up to a multiple of d.
func ceilTime(t time.Time, d time.Duration) time.Time {
	if r := t.Truncate(d); !r.Equal(t) {
		return r.Add(d)
	}
	return t
}

// handleGrant serves POST /v1/auth/grant: a JWT minted with an API key.
func (e *Engine) handleGrant(w http.ResponseWriter, r *http.Request) {
	cred := credentialFrom(r.Context())
	if cred.scheme != api.SchemeToken {
		writeError(w, r, http.StatusForbidden, "INSUFFICIENT_PERMISSIONS", "Tokens are minted with an API key, not with another token.")
		return
	}
	ttl := api.DefaultTokenTTL
	body, err := io.ReadAll(io.LimitReader(r.Body, 4096))
	if err != nil {
		writeError(w, r, http.StatusBadRequest, api.CodeBadRequest, "The request body could not be read.")
		return
	}
	if len(body) > 0 {
		var req struct {
			TTLSeconds *float64 `json:"ttl_seconds"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			writeJSON(w, http.StatusBadRequest, api.ModernErrorBody{Category: "INVALID_JSON", Message: "Invalid JSON submitted.",
				Details: err.Error(), RequestID: requestID(r.Context())})
			return
		}
		if req.TTLSeconds != nil {
			ttl = time.Duration(*req.TTLSeconds * float64(time.Second))
			if err := api.CheckTokenTTL(ttl); err != nil || ttl == 0 {
				writeError(w, r, http.StatusBadRequest, api.CodeBadRequest, "ttl_seconds must be between 1 and 3600.")
				return
			}
		}
	}
	tok, err := e.auth.mint(ttl)
	if err != nil {
		writeError(w, r, http.StatusInternalServerError, api.CodeInternalServerError, "The token could not be signed.")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "expires_in": ttl.Seconds()})
}

// handleTokenDetails serves GET /v1/auth/token: what the engine knows of
// the credential that made the request.
func (e *Engine) handleTokenDetails(w http.ResponseWriter, r *http.Request) {
	cred := credentialFrom(r.Context())
	out := map[string]any{
		"accessor": cred.accessor,
		"kind":     map[string]string{api.SchemeToken: "api_key", api.SchemeBearer: "access_token"}[cred.scheme],
		"scopes":   []string{tokenScope},
	}
	if !cred.expires.IsZero() {
		out["expires"] = cred.expires.UTC().Format(time.RFC3339)
	}
	writeJSON(w, http.StatusOK, out)
}
