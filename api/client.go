package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"
)

// HeaderRequestID is the response header that carries the request id.
const HeaderRequestID = "dg-request-id"

// maxErrorBody bounds how much of an error body is read.
const maxErrorBody = 64 << 10

// Config configures a Client.
type Config struct {
	// Endpoint is where the service is; the zero value is the hosted
	// service's global host.
	Endpoint Endpoint
	// APIKey authorizes requests with the Token scheme.
	APIKey Secret
	// AccessToken, when set, authorizes requests with the Bearer scheme
	// instead of the key (a JWT minted elsewhere).
	AccessToken Secret
	// ShortLivedTokens makes every WebSocket handshake use a JWT minted
	// with the API key just before it, so the long-lived key never travels
	// on a socket. It needs APIKey.
	ShortLivedTokens bool
	// TokenTTL is the lifetime asked for those tokens; 0 is the default 30 s.
	TokenTTL time.Duration
	// HTTPClient makes the REST calls and WebSocket handshakes; nil uses a
	// client with no overall timeout (uploads can be long), so every call
	// is bounded by its context.
	HTTPClient *http.Client
	// UserAgent is sent with every request.
	UserAgent string
	// Logger receives debug records of requests (never a secret); nil
	// discards them.
	Logger *slog.Logger
	// Wire, when not nil, sees every request, answer and frame (redacted:
	// never the key or a token). It is called inline and must not block.
	Wire WireObserver
}

// Client talks to the service. It is safe for concurrent use.
type Client struct {
	endpoint   Endpoint
	key        Secret
	token      Secret
	shortLived bool
	tokenTTL   time.Duration
	hc         *http.Client
	userAgent  string
	log        *slog.Logger
	wire       *wireTap // nil when nothing observes
}

// NewClient checks cfg and returns a client.
func NewClient(cfg Config) (*Client, error) {
	if cfg.APIKey == "" && cfg.AccessToken == "" {
		return nil, &OptionError{Param: "key", Reason: "an API key or an access token is required"}
	}
	if cfg.ShortLivedTokens && cfg.APIKey == "" {
		return nil, &OptionError{Param: "key", Reason: "short-lived tokens are minted with an API key; none is set"}
	}
	if err := CheckTokenTTL(cfg.TokenTTL); err != nil {
		return nil, err
	}
	c := &Client{
		endpoint:   cfg.Endpoint,
		key:        cfg.APIKey,
		token:      cfg.AccessToken,
		shortLived: cfg.ShortLivedTokens,
		tokenTTL:   cfg.TokenTTL,
		hc:         cfg.HTTPClient,
		userAgent:  cfg.UserAgent,
		log:        cfg.Logger,
		wire:       newWireTap(cfg.Wire, cfg.APIKey, cfg.AccessToken),
	}
	if c.hc == nil {
		c.hc = &http.Client{}
	}
	if c.userAgent == "" {
		c.userAgent = "earshot"
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// Endpoint returns where the client sends requests.
func (c *Client) Endpoint() Endpoint { return c.endpoint }

// String describes the client without its credentials.
func (c *Client) String() string { return "api.Client(" + c.endpoint.String() + ")" }

// Format prints String for every fmt verb. fmt prints unexported fields
// raw, bypassing Secret's own formatting, so without it %v of a *Client
// (or a logger given one) would show the API key.
func (c *Client) Format(f fmt.State, verb rune) { _, _ = io.WriteString(f, c.String()) }

type authMode int

const (
	authDefault authMode = iota // the access token if set, else the key
	authKey                     // the API key only (minting tokens)
	authStream                  // a WebSocket handshake
)

// authorization returns the Authorization header for a request.
func (c *Client) authorization(ctx context.Context, mode authMode) (string, error) {
	switch {
	case mode == authKey:
		return SchemeToken + " " + c.key.Reveal(), nil
	case mode == authStream && c.shortLived:
		g, err := c.Grant(ctx, c.tokenTTL)
		if err != nil {
			return "", fmt.Errorf("short-lived token: %w", err)
		}
		c.wire.remember(g.AccessToken)
		return SchemeBearer + " " + g.AccessToken.Reveal(), nil
	case c.token != "":
		return SchemeBearer + " " + c.token.Reveal(), nil
	default:
		return SchemeToken + " " + c.key.Reveal(), nil
	}
}

// newRequest builds a request to path on the host that serves it.
func (c *Client) newRequest(ctx context.Context, method, path string, q url.Values, body io.Reader, contentType string, mode authMode) (*http.Request, error) {
	u, err := c.endpoint.URL(path, q)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	authz, err := c.authorization(ctx, mode)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", authz)
	req.Header.Set("User-Agent", c.userAgent)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req, nil
}

// send performs req and turns a non-2xx answer into an *Error.
func (c *Client) send(req *http.Request) (*http.Response, error) {
	start := time.Now()
	var resp *http.Response
	var err error
	if c.wire != nil {
		resp, err = c.observeSend(req)
	} else {
		resp, err = c.hc.Do(req)
	}
	if err != nil {
		return nil, err
	}
	c.log.Debug("request", "method", req.Method, "path", req.URL.Path, "status", resp.StatusCode,
		"request_id", resp.Header.Get(HeaderRequestID), "elapsed", time.Since(start))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return nil, ParseError(resp.StatusCode, body, resp.Header.Get(HeaderRequestID))
}

// doJSON sends in (when not nil) as JSON and decodes the answer into out.
func (c *Client) doJSON(ctx context.Context, method, path string, q url.Values, in, out any, mode authMode) error {
	var body io.Reader
	ct := ""
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
		ct = "application/json"
	}
	req, err := c.newRequest(ctx, method, path, q, body, ct, mode)
	if err != nil {
		return err
	}
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return decodeJSONBody(resp, out)
}

// decodeJSONBody decodes a successful answer, saying plainly when it is
// not JSON (a proxy's HTML page, say).
func decodeJSONBody(resp *http.Response, out any) error {
	dec := json.NewDecoder(resp.Body)
	if err := dec.Decode(out); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("empty answer from %s", resp.Request.URL.Path)
		}
		return fmt.Errorf("unreadable answer from %s: %w", resp.Request.URL.Path, err)
	}
	return nil
}
