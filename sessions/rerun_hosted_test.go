package sessions_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/engine"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

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

// TestRerunHostedAndRegion (must show): an entry's kept audio is run
// again on the hosted service and in its regions, against a stand-in on
// 127.0.0.1 that relays to the local engine. Each re-run goes to the host
// of its region over TLS, carries the key as "Authorization: Token KEY"
// and the model asked for, and its result names the service and region
// used, with the transcript the engine made and the time it took. The
// same audio and model on the local engine hear the same words, and a
// whisper model is refused in a region before anything is sent.
//
// Not parallel: the stand-in takes over http.DefaultTransport.
func TestRerunHostedAndRegion(t *testing.T) {
	ctx := testContext(t, 3*time.Minute)
	eng := keyedEngine(t)
	standIn := startHostedStandIn(t, eng)

	db := openDB(t)
	var localCalls atomic.Int32
	ws := newWorkspace(t, db, sessions.NewKeys(&store.Memory{}, envWith(eng.Key)), localOf(eng, &localCalls), nil)
	// Automatic: with the key set, the hosted service, global.
	s := store.DefaultSettings()
	s.Model = "nova-3"
	if err := ws.SaveSettings(ctx, s); err != nil {
		t.Fatal(err)
	}

	// An entry whose audio is kept, and nothing else of it: no file.
	id, err := db.CreateSession(ctx, store.Session{Kind: store.KindCaptions, Title: "kept audio", Status: store.StatusDone})
	if err != nil {
		t.Fatal(err)
	}
	pcm := loadPCM(t, librivoxPath("0880"))
	var wav bytes.Buffer
	if err := audio.EncodeWAV(&wav, pcm, 16000, 1); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveAudio(ctx, id, store.Audio{ContentType: "audio/wav", Encoding: "linear16", SampleRate: 16000, Data: wav.Bytes()}); err != nil {
		t.Fatal(err)
	}

	byModel := map[string]string{} // what each model heard on the hosted service
	for _, tc := range []struct {
		name    string
		opts    sessions.RerunOptions
		host    string
		model   string // the model the query must carry
		backend string // the result's Backend
		answer  string // the model that answered, per model_info
	}{
		{"hosted", sessions.RerunOptions{Backend: sessions.BackendHosted, Model: "base"},
			"api.deepgram.com", "base", "Hosted service", "pocketsphinx-en-us-fast"},
		{"hosted in the EU", sessions.RerunOptions{Backend: sessions.BackendHosted, Region: "eu", Model: "nova-3"},
			"api.eu.deepgram.com", "nova-3", "Hosted service (European Union)", "pocketsphinx-en-us"},
		{"the settings' service in Australia, the settings' model", sessions.RerunOptions{Region: "AU"},
			"api.au.deepgram.com", "nova-3", "Hosted service (Australia)", "pocketsphinx-en-us"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ws.Rerun(ctx, id, tc.opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			seen, dials := standIn.requests()
			if len(seen) != 1 {
				t.Fatalf("the stand-in saw %+v, want one request", seen)
			}
			want := hostedRequest{Host: tc.host, SNI: tc.host, Authorization: "Token KEY", Method: http.MethodPost, Path: "/v1/listen", Model: tc.model}
			if seen[0] != want {
				t.Errorf("request %+v, want %+v", seen[0], want)
			}
			if len(dials) > 1 || len(dials) == 1 && dials[0] != tc.host+":443" {
				t.Errorf("dialed %q, want only %s:443", dials, tc.host)
			}
			n := res.New
			if n.Backend != tc.backend || n.Model != tc.model || n.ModelName != tc.answer || n.Kind != store.KindFile || n.Live {
				t.Errorf("re-run side %+v, want backend %q, model %q answered by %q", n, tc.backend, tc.model, tc.answer)
			}
			if len(strings.Fields(n.Transcript)) < 3 || n.Took <= 0 {
				t.Errorf("re-run heard %q in %v: want a transcript and a time", n.Transcript, n.Took)
			}
			if got := float64(len(pcm)) / 16000; n.Audio < got-0.1 || n.Audio > got+0.1 {
				t.Errorf("audio %.2f s, want %.2f s", n.Audio, got)
			}
			if prev, ok := byModel[tc.model]; ok && prev != n.Transcript {
				t.Errorf("%s heard %q here and %q in another region", tc.model, n.Transcript, prev)
			}
			byModel[tc.model] = n.Transcript
			saved, err := db.Session(ctx, n.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			if saved.Backend != tc.backend || saved.Model != tc.model || saved.Status != store.StatusDone ||
				saved.Details != `{"rerun_of":`+strconv.FormatInt(id, 10)+`}` {
				t.Errorf("re-run saved as %+v", saved)
			}
		})
	}
	if n := localCalls.Load(); n != 0 {
		t.Errorf("the hosted re-runs started the local engine %d times", n)
	}

	// The local engine itself, on the same audio and model, hears what
	// the hosted re-runs relayed: the stand-in sees nothing of it.
	local, err := ws.Rerun(ctx, id, sessions.RerunOptions{Backend: sessions.BackendLocal, Model: "nova-3"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if local.New.Backend != "Local engine" || local.New.Transcript != byModel["nova-3"] {
		t.Errorf("local engine: %q heard %q, want what the hosted nova-3 heard, %q", local.New.Backend, local.New.Transcript, byModel["nova-3"])
	}
	if seen, dials := standIn.requests(); len(seen) != 0 || len(dials) != 0 {
		t.Errorf("the local re-run reached the stand-in: %+v, %q", seen, dials)
	}

	// Whisper is not served in any region: refused before it is sent.
	_, err = ws.Rerun(ctx, id, sessions.RerunOptions{Backend: sessions.BackendHosted, Region: "eu", Model: "whisper-large"}, nil)
	if err == nil || !strings.Contains(err.Error(), "whisper models are not served in the") {
		t.Errorf("whisper in the EU: %v, want a refusal", err)
	}
	if seen, dials := standIn.requests(); len(seen) != 0 || len(dials) != 0 {
		t.Errorf("whisper in the EU reached the stand-in: %+v, %q", seen, dials)
	}
}
