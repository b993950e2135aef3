package cli

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine"
	"github.com/earshot-app/earshot/store"
)

// The hosted service's stand-in is as sessions' tests have it
// (sessions/rerun_hosted_test.go); test code is not shared between
// packages.

// The hosted service's hosts (service-interface.md, "Regional hosting").
var hostedHosts = []string{"api.deepgram.com", "api.eu.deepgram.com", "api.au.deepgram.com", "api.in.deepgram.com", "agent.deepgram.com"}

// hostedRequest is what the hosted stand-in saw of one request.
// Authorization is "Token KEY" when the header was exactly the Token
// scheme with the key, else its scheme alone: never the key itself, which
// a failing test would print.
type hostedRequest struct {
	Host, SNI, Authorization, Method, Path, Model string
}

// authorizationWords says what the Authorization header a carries, with
// key hidden.
func authorizationWords(a string, key api.Secret) string {
	if a == "Token "+key.Reveal() {
		return "Token KEY"
	}
	if scheme, _, ok := strings.Cut(a, " "); ok {
		return scheme + " (not the key)"
	}
	return "none or unknown"
}

// hostedStandIn stands in for the hosted service on 127.0.0.1: a TLS
// server with a certificate for the service's hosts, which notes each
// request and relays it to a local engine, which checks the key and
// transcribes.
//
// A workspace gives its hosted connection no HTTP client of its own, so
// its requests go through http.DefaultTransport to the real hosts. While
// the stand-in runs, http.DefaultTransport is one that dials the stand-in
// for those hosts, loopback addresses as they are, and refuses every
// other address; it trusts only the stand-in's certificate. That is process-wide: the test that starts it must not be
// parallel.
type hostedStandIn struct {
	mu    sync.Mutex // guards seen, dials
	seen  []hostedRequest
	dials []string
}

// startHostedStandIn starts the stand-in in front of eng, whose key is the
// hosted service's, until the end of the test.
func startHostedStandIn(t *testing.T, eng *engine.Local) *hostedStandIn {
	t.Helper()
	cert, pool := hostedCertificate(t)
	s := &hostedStandIn{}
	target := eng.URL
	relayTransport := &http.Transport{}
	relay := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }, Transport: relayTransport}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, hostedRequest{Host: r.Host, SNI: r.TLS.ServerName, Authorization: authorizationWords(r.Header.Get("Authorization"), eng.Key),
			Method: r.Method, Path: r.URL.Path, Model: r.URL.Query().Get("model")})
		s.mu.Unlock()
		relay.ServeHTTP(w, r)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	addr := srv.Listener.Addr().String()

	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, hostPort string) (net.Conn, error) {
			var d net.Dialer
			host, port, err := net.SplitHostPort(hostPort)
			if ip := net.ParseIP(host); err == nil && ip != nil && ip.IsLoopback() {
				return d.DialContext(ctx, network, hostPort) // the local engine
			}
			if err != nil || port != "443" || !slices.Contains(hostedHosts, host) {
				return nil, fmt.Errorf("this test reaches only 127.0.0.1 and the hosted service's stand-in, not %s", hostPort)
			}
			s.mu.Lock()
			s.dials = append(s.dials, hostPort)
			s.mu.Unlock()
			return d.DialContext(ctx, "tcp", addr)
		},
		TLSClientConfig: &tls.Config{RootCAs: pool},
	}
	old := http.DefaultTransport
	http.DefaultTransport = tr
	t.Cleanup(func() {
		http.DefaultTransport = old
		tr.CloseIdleConnections()
		srv.Close()
		relayTransport.CloseIdleConnections()
	})
	return s
}

// requests returns the requests seen since the last call, and the
// addresses dialed.
func (s *hostedStandIn) requests() ([]hostedRequest, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen, dials := s.seen, s.dials
	s.seen, s.dials = nil, nil
	return seen, dials
}

// hostedCertificate makes a self-signed certificate for the hosted
// service's hosts, and a pool that trusts it.
func hostedCertificate(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "hosted service stand-in"},
		DNSNames:              hostedHosts,
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv, Leaf: leaf}, pool
}

// TestRerunHostedCommand runs 'earshot rerun ID --backend hosted', with
// and without --region, on an entry whose audio is kept, against a
// stand-in for the hosted service on 127.0.0.1 that relays to the local
// engine: each goes to its region's host with the key as "Token KEY" and
// the model, and the output names the service and region used, with the
// transcript and the time.
//
// Not parallel: the stand-in takes over http.DefaultTransport.
func TestRerunHostedCommand(t *testing.T) {
	needClip(t)
	if _, _, err := startLocal(); err != nil {
		t.Fatalf("the local engine needs the pocketsphinx model (scripts/setup installs it): %v", err)
	}
	standIn := startHostedStandIn(t, local.l)
	h := newHarness(t, nil)
	if _, err := h.ws.SaveKey(local.l.Key); err != nil {
		t.Fatal(err)
	}
	id, err := h.db.CreateSession(t.Context(), store.Session{Kind: store.KindCaptions, Title: "kept audio", Status: store.StatusDone})
	if err != nil {
		t.Fatal(err)
	}
	wav, err := os.ReadFile(clip)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.db.SaveAudio(t.Context(), id, store.Audio{ContentType: "audio/wav", Encoding: "linear16", SampleRate: 16000, Data: wav}); err != nil {
		t.Fatal(err)
	}
	sid := strconv.FormatInt(id, 10)

	check := func(host, model string) {
		t.Helper()
		seen, dials := standIn.requests()
		want := hostedRequest{Host: host, SNI: host, Authorization: "Token KEY", Method: http.MethodPost, Path: "/v1/listen", Model: model}
		if len(seen) != 1 || seen[0] != want {
			t.Errorf("the stand-in saw %+v, want %+v", seen, want)
		}
		if len(dials) > 1 || len(dials) == 1 && dials[0] != host+":443" {
			t.Errorf("dialed %q, want only %s:443", dials, host)
		}
	}

	if code := h.runFresh(t, "rerun", sid, "--backend", "hosted", "--model", "base"); code != 0 {
		t.Fatalf("exit %d: %s", code, h.stderr.String())
	}
	out := h.stdout.String()
	t.Logf("\n%s", out)
	check("api.deepgram.com", "base")
	for _, want := range []string{"Hosted service", "base (pocketsphinx-en-us-fast)", "Re-run:   He was not"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "Hosted service (") {
		t.Error("the global host named with a region")
	}

	// In the EU, with the settings' model (the entry names none).
	if code := h.runFresh(t, "rerun", "--json", sid, "--backend", "hosted", "--region", "eu"); code != 0 {
		t.Fatalf("exit %d: %s", code, h.stderr.String())
	}
	check("api.eu.deepgram.com", "nova-3")
	var got struct {
		Rerun struct {
			ID         int64   `json:"id"`
			Backend    string  `json:"backend"`
			Model      string  `json:"model"`
			ModelName  string  `json:"model_name"`
			Transcript string  `json:"transcript"`
			Took       float64 `json:"took_seconds"`
		} `json:"rerun"`
	}
	if err := json.Unmarshal([]byte(h.stdout.String()), &got); err != nil {
		t.Fatalf("%v: %s", err, h.stdout.String())
	}
	r := got.Rerun
	if r.Backend != "Hosted service (European Union)" || r.Model != "nova-3" || r.ModelName != "pocketsphinx-en-us" ||
		!strings.Contains(strings.ToLower(r.Transcript), "young man") || r.Took <= 0 {
		t.Errorf("json %+v", r)
	}
	if s, err := h.db.Session(t.Context(), r.ID); err != nil || s.Backend != r.Backend || s.Details != `{"rerun_of":`+sid+`}` {
		t.Errorf("the re-run's entry: %+v, %v", s, err)
	}
}
