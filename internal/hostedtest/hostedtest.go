// Package hostedtest stands in for the hosted service in a test: a TLS
// server on 127.0.0.1 with a certificate for the service's hosts (the
// global, regional and agent hosts), which notes each request and relays
// it to another server, usually the local engine started with the key
// the test gives the workspace. Its Client reaches it for those hosts,
// loopback addresses as they are, and nothing else, so a workspace given
// that client talks to "the hosted service" without leaving the machine.
package hostedtest

import (
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
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
)

// Hosts are the hosted service's host names: the main host of every
// region and the agent's (service-interface.md, "Regional hosting").
func Hosts() []string {
	var hosts []string
	for _, r := range api.Regions {
		e := api.Endpoint{Region: r}
		for _, h := range []string{e.MainBase().Host, e.AgentBase().Host} {
			if !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
	}
	return hosts
}

// Request is what the stand-in saw of one request. Authorization is
// "Token KEY" when the header was exactly the Token scheme with the key,
// else its scheme alone: never the key itself, which a failing test
// would print.
type Request struct {
	Host, SNI, Authorization, Method, Path, Model string
}

// StandIn is a running stand-in.
type StandIn struct {
	addr   string
	client *http.Client

	mu    sync.Mutex // guards seen, dials
	seen  []Request
	dials []string
}

// Start starts a stand-in relaying to target, whose key is key, until the
// end of the test.
func Start(t testing.TB, target *url.URL, key api.Secret) *StandIn {
	t.Helper()
	cert, pool := certificate(t)
	s := &StandIn{}
	relayTransport := &http.Transport{}
	relay := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }, Transport: relayTransport}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, Request{Host: r.Host, SNI: r.TLS.ServerName, Authorization: authorizationWords(r.Header.Get("Authorization"), key),
			Method: r.Method, Path: r.URL.Path, Model: r.URL.Query().Get("model")})
		s.mu.Unlock()
		relay.ServeHTTP(w, r)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	s.addr = srv.Listener.Addr().String()
	hosts := Hosts()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, hostPort string) (net.Conn, error) {
			var d net.Dialer
			host, port, err := net.SplitHostPort(hostPort)
			if ip := net.ParseIP(host); err == nil && ip != nil && ip.IsLoopback() {
				return d.DialContext(ctx, network, hostPort) // the local engine
			}
			if err != nil || port != "443" || !slices.Contains(hosts, host) {
				return nil, fmt.Errorf("this test reaches only 127.0.0.1 and the hosted service's stand-in, not %s", hostPort)
			}
			s.mu.Lock()
			s.dials = append(s.dials, hostPort)
			s.mu.Unlock()
			return d.DialContext(ctx, "tcp", s.addr)
		},
		TLSClientConfig: &tls.Config{RootCAs: pool},
	}
	s.client = &http.Client{Transport: tr}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
		relayTransport.CloseIdleConnections()
	})
	return s
}

// Client is an HTTP client that reaches the stand-in for the hosted
// service's hosts, loopback addresses as they are, and nothing else.
func (s *StandIn) Client() *http.Client { return s.client }

// Requests returns the requests seen since the last call, and the
// addresses dialed for the hosted service.
func (s *StandIn) Requests() ([]Request, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen, dials := s.seen, s.dials
	s.seen, s.dials = nil, nil
	return seen, dials
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

// certificate makes a self-signed certificate for the hosted service's
// hosts, and a pool that trusts it.
func certificate(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "hosted service stand-in"},
		DNSNames:              Hosts(),
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
