package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Secret holds an API key or a token. It never formats itself: printing,
// logging or marshalling a Secret shows "[redacted]", so a key cannot leak
// into logs, the inspector or a database by accident. Reveal returns it.
type Secret string

const redacted = "[redacted]"

// Reveal returns the secret itself, for the Authorization header only.
func (s Secret) Reveal() string { return string(s) }

// String hides the secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString hides the secret from %#v.
func (s Secret) GoString() string { return s.String() }

// Format hides the secret from every fmt verb. String alone is not enough:
// for a verb that does not suit a string (%d, %t) fmt reports the misuse
// and prints the raw value inside the report.
func (s Secret) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		_, _ = io.WriteString(f, s.GoString())
	case verb == 'q':
		_, _ = fmt.Fprintf(f, fmt.FormatString(f, verb), s.String())
	default:
		_, _ = fmt.Fprintf(f, fmt.FormatString(f, 's'), s.String())
	}
}

// LogValue hides the secret from slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalJSON hides the secret from JSON.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// Auth schemes of the Authorization header.
const (
	SchemeToken  = "Token"
	SchemeBearer = "Bearer"
)

// ParseAuthorization splits an Authorization header into its scheme
// (Token or Bearer, matched without regard to case, as the service's own
// SDKs send "token") and credential.
func ParseAuthorization(h string) (scheme, credential string, ok bool) {
	name, cred, found := strings.Cut(strings.TrimSpace(h), " ")
	cred = strings.TrimSpace(cred)
	if !found || cred == "" {
		return "", "", false
	}
	switch {
	case asciiEqualFold(name, SchemeToken):
		return SchemeToken, cred, true
	case asciiEqualFold(name, SchemeBearer):
		return SchemeBearer, cred, true
	}
	return "", "", false
}

// asciiEqualFold reports whether s and t are equal but for the case of
// ASCII letters. An auth scheme is an ASCII token: strings.EqualFold would
// also take the Kelvin sign for a k.
func asciiEqualFold(s, t string) bool {
	if len(s) != len(t) {
		return false
	}
	for i := range len(s) {
		a, b := s[i], t[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

// Grant is a short-lived token minted by POST /v1/auth/grant.
type Grant struct {
	AccessToken Secret  `json:"access_token"`
	ExpiresIn   float64 `json:"expires_in,omitempty"`
}

// grantWire is Grant as it travels: the token in clear.
type grantWire struct {
	AccessToken string  `json:"access_token"`
	ExpiresIn   float64 `json:"expires_in,omitempty"`
}

// GrantRequest is the optional body of POST /v1/auth/grant.
type GrantRequest struct {
	TTLSeconds float64 `json:"ttl_seconds,omitempty"`
}

// Token lifetimes accepted by the grant endpoint.
const (
	DefaultTokenTTL = 30 * time.Second
	MaxTokenTTL     = time.Hour
)

// CheckTokenTTL reports whether ttl is a lifetime the grant endpoint takes:
// zero (the default, 30 s) or 1 s to 1 h.
func CheckTokenTTL(ttl time.Duration) error {
	if ttl == 0 {
		return nil
	}
	if ttl < time.Second || ttl > MaxTokenTTL {
		return badParam("ttl_seconds", fmt.Sprintf("token lifetime must be between 1 s and %v, not %v", MaxTokenTTL, ttl))
	}
	return nil
}

// Grant mints a short-lived JWT with the client's API key. ttl 0 asks for
// the service's default of 30 s. The token is good for the handshake of a
// WebSocket only within its lifetime; an open connection outlives it.
func (c *Client) Grant(ctx context.Context, ttl time.Duration) (*Grant, error) {
	if err := CheckTokenTTL(ttl); err != nil {
		return nil, err
	}
	if c.key == "" {
		return nil, &OptionError{Param: "key", Reason: "minting a token needs an API key"}
	}
	var body any
	if ttl > 0 {
		body = GrantRequest{TTLSeconds: ttl.Seconds()}
	} else {
		body = struct{}{}
	}
	var out grantWire
	if err := c.doJSON(ctx, http.MethodPost, PathAuthGrant, nil, body, &out, authKey); err != nil {
		return nil, fmt.Errorf("grant token: %w", err)
	}
	if out.AccessToken == "" {
		return nil, fmt.Errorf("grant token: the answer carries no access_token")
	}
	return &Grant{AccessToken: Secret(out.AccessToken), ExpiresIn: out.ExpiresIn}, nil
}

// TokenDetails is what GET /v1/auth/token says of the credential that
// made the request. Its shape is not part of the specification, so every
// field is kept as sent; Known fields are decoded when present.
type TokenDetails struct {
	Fields map[string]json.RawMessage
}

// String returns a field as a string when it is one.
func (d TokenDetails) String(name string) string {
	var s string
	if raw, ok := d.Fields[name]; ok && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

// TokenDetails checks the client's credential with GET /v1/auth/token:
// an invalid key answers 401, a valid one some details of the key.
func (c *Client) TokenDetails(ctx context.Context) (*TokenDetails, error) {
	var out map[string]json.RawMessage
	if err := c.doJSON(ctx, http.MethodGet, PathAuthToken, nil, nil, &out, authDefault); err != nil {
		return nil, fmt.Errorf("token details: %w", err)
	}
	return &TokenDetails{Fields: out}, nil
}
