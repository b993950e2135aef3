// Package llm reaches OpenAI-compatible language model servers (a local
// Ollama, llama.cpp's server, LM Studio, or a remote one): it lists the
// models a server offers, and says in plain words why a server cannot be
// used. The app's settings, its agent tab, the engine's agent and the
// command line all try a server through Models, so that the same failure
// reads the same everywhere.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Timeout is how long a server is given to list its models when its
// address is tried. A server on this computer answers in milliseconds,
// even while it loads a model; one that has not answered in this long
// will not hold a conversation either.
const Timeout = 3 * time.Second

// maxList bounds the body of a model list.
const maxList = 1 << 20

// client reaches language model servers when the caller names no client.
// It keeps no idle connection, so no goroutine outlives a call.
var client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: http.ProxyFromEnvironment}}

// Kind says why a server cannot be used.
type Kind int

const (
	// NoAnswer: nothing answers at the address (the connection is
	// refused, the host is unknown, or no reply came in time).
	NoAnswer Kind = iota + 1
	// NotOpenAI: something answers, but not as an OpenAI-compatible
	// server (not HTTP, no model list where one should be, not JSON).
	NotOpenAI
	// NeedsKey: the server wants a key (401) or refuses the one given
	// (403).
	NeedsKey
	// Failing: the server answers with an error of its own (5xx).
	Failing
	// NoModels: the server answers, but offers no model.
	NoModels
)

// Error says why the server at URL cannot be used. Its text is a phrase
// for a person: "the language model at 127.0.0.1:9 does not answer:
// connection refused".
type Error struct {
	URL    string // the server's address, as given
	Kind   Kind
	Status int    // the HTTP status it answered with, 0 if none
	Detail string // what was seen, such as "connection refused"
	Err    error  // the cause, if any
}

func (e *Error) Error() string { return "the language model at " + Host(e.URL) + " " + e.Reason() }

func (e *Error) Unwrap() error { return e.Err }

// Reason says what was found, as a phrase that follows the server's
// name: "does not answer: connection refused", "needs a key".
func (e *Error) Reason() string {
	switch e.Kind {
	case NoAnswer:
		return "does not answer: " + e.Detail
	case NotOpenAI:
		s := "answers, but not as an OpenAI-compatible server"
		if e.Detail != "" {
			s += ": " + e.Detail
		}
		return s
	case NeedsKey:
		if e.Status == http.StatusForbidden {
			return "refuses the key it was given"
		}
		return "needs a key"
	case Failing:
		return "answers with an error: " + e.Detail
	case NoModels:
		return "answers, but offers no model: add one to it first"
	}
	return "cannot be used: " + e.Detail
}

// Host is the host and port of a server's address, the way a person
// recognises it; the address itself when it has none.
func Host(base string) string {
	if u, err := url.Parse(base); err == nil && u.Host != "" {
		return u.Host
	}
	return base
}

// Models lists the models the server at base offers: GET {base}/models,
// where base is its address up to /v1. A server that cannot be used
// gives an *Error; a caller that gives up (ctx cancelled, not timed out)
// gets ctx's error. It waits as long as ctx allows: callers bound it,
// with Timeout when an address is tried. hc nil means a client of this
// package.
func Models(ctx context.Context, hc *http.Client, base string, headers map[string]string) ([]string, error) {
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(base, "/")+"/models", nil)
	if err != nil {
		return nil, &Error{URL: base, Kind: NotOpenAI, Detail: "not an address", Err: err}
	}
	req.Header.Set("Accept", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := Do(ctx, hc, base, req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if err := statusError(base, resp); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxList))
	if err != nil {
		if ctx.Err() != nil {
			return nil, classify(ctx, base, err, true, time.Time{})
		}
		return nil, &Error{URL: base, Kind: NotOpenAI, Detail: "its answer broke off", Err: err}
	}
	ids, err := ParseModels(body)
	if err != nil {
		return nil, &Error{URL: base, Kind: NotOpenAI, Detail: "its model list is not OpenAI's", Err: err}
	}
	if len(ids) == 0 {
		return nil, &Error{URL: base, Kind: NoModels}
	}
	return ids, nil
}

// Do sends req to the server at base and classifies what keeps it from
// answering: an *Error when nothing answers there or what answers is not
// HTTP; ctx's error when the caller gave up. The response's status is
// the caller's to judge.
func Do(ctx context.Context, hc *http.Client, base string, req *http.Request) (*http.Response, error) {
	if hc == nil {
		hc = client
	}
	var connected atomic.Bool
	trace := &httptrace.ClientTrace{ConnectDone: func(_, _ string, err error) {
		if err == nil {
			connected.Store(true)
		}
	}}
	start := time.Now()
	resp, err := hc.Do(req.WithContext(httptrace.WithClientTrace(ctx, trace)))
	if err != nil {
		return nil, classify(ctx, base, err, connected.Load(), start)
	}
	return resp, nil
}

// classify turns a failure to get an answer into an *Error, or ctx's
// error when the caller cancelled.
func classify(ctx context.Context, base string, err error, connected bool, start time.Time) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return ctx.Err()
	}
	var to interface{ Timeout() bool }
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &to) && to.Timeout()) {
		d := "no reply in time"
		if !start.IsZero() {
			d = "no reply within " + seconds(time.Since(start))
		}
		return &Error{URL: base, Kind: NoAnswer, Detail: d, Err: err}
	}
	var dns *net.DNSError
	var errno syscall.Errno
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return &Error{URL: base, Kind: NoAnswer, Detail: "connection refused", Err: err}
	case errors.As(err, &dns):
		return &Error{URL: base, Kind: NoAnswer, Detail: fmt.Sprintf("no host is named %q", dns.Name), Err: err}
	case connected:
		// Something took the connection, then said nothing HTTP can read
		// (or hung up): not a web server, or not over this scheme.
		return &Error{URL: base, Kind: NotOpenAI, Detail: "not HTTP", Err: err}
	case errors.As(err, &errno):
		return &Error{URL: base, Kind: NoAnswer, Detail: errno.Error(), Err: err}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return &Error{URL: base, Kind: NoAnswer, Detail: ue.Err.Error(), Err: err}
	}
	return &Error{URL: base, Kind: NoAnswer, Detail: err.Error(), Err: err}
}

// seconds writes d as "3 s" or "0.2 s".
func seconds(d time.Duration) string {
	s := d.Round(100 * time.Millisecond).Seconds()
	return strconv.FormatFloat(s, 'f', -1, 64) + " s"
}

// statusError judges a model list's status: nil for 200.
func statusError(base string, resp *http.Response) error {
	code := resp.StatusCode
	switch {
	case code == http.StatusOK:
		return nil
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return &Error{URL: base, Kind: NeedsKey, Status: code}
	case code >= 500:
		return &Error{URL: base, Kind: Failing, Status: code, Detail: resp.Status}
	}
	d := "GET " + pathOf(base) + "/models answered " + resp.Status
	if code == http.StatusNotFound && !strings.HasSuffix(strings.TrimSuffix(pathOf(base), "/"), "/v1") {
		d += "; such addresses usually end in /v1"
	}
	return &Error{URL: base, Kind: NotOpenAI, Status: code, Detail: d}
}

func pathOf(base string) string {
	if u, err := url.Parse(base); err == nil {
		return strings.TrimSuffix(u.Path, "/")
	}
	return ""
}

// ParseModels reads an OpenAI model list, {"object": "list", "data":
// [{"id": ...}, ...]}: the ids of its models, in order. A body that is
// not such a list (no "data" array) is an error; a list with no model is
// not.
func ParseModels(body []byte) ([]string, error) {
	var list map[string]json.RawMessage
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, err
	}
	raw, ok := list["data"]
	if !ok {
		return nil, errors.New(`no "data" list`)
	}
	var data []json.RawMessage // null, as some servers send for none, leaves it empty
	if err := json.Unmarshal(raw, &data); err != nil {
		return nil, fmt.Errorf(`"data" is not a list: %w`, err)
	}
	var ids []string
	for _, m := range data {
		var model struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(m, &model) == nil && strings.TrimSpace(model.ID) != "" {
			ids = append(ids, model.ID)
		}
	}
	return ids, nil
}
