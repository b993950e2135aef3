package sessions_test

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/engine"
	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// randomKey returns a key no other test uses, starting with prefix.
func randomKey(t testing.TB, prefix string) api.Secret {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return api.Secret(prefix + hex.EncodeToString(b))
}

// localOf is the LocalEngine of an engine already running, counting the
// times the workspace asks for it.
func localOf(l *engine.Local, calls *atomic.Int32) sessions.LocalEngine {
	return func() (api.Endpoint, api.Secret, error) {
		calls.Add(1)
		return l.Endpoint(), l.Key, nil
	}
}

// envWith is a Getenv with only DEEPGRAM_API_KEY set.
func envWith(key api.Secret) func(string) string {
	return func(name string) string {
		if name == sessions.EnvAPIKey {
			return key.Reveal()
		}
		return ""
	}
}

// unavailableKeyring is a keyring on a machine without a Secret Service.
type unavailableKeyring struct{}

var errNoBus = fmt.Errorf("keyring: no session bus: %w", store.ErrSecretServiceUnavailable)

func (unavailableKeyring) Get() (api.Secret, error) { return "", errNoBus }
func (unavailableKeyring) Set(api.Secret) error     { return errNoBus }
func (unavailableKeyring) Delete() error            { return errNoBus }

func newWorkspace(t *testing.T, db *store.DB, keys *sessions.Keys, local sessions.LocalEngine, log *slog.Logger) *sessions.Workspace {
	t.Helper()
	w, err := sessions.NewWorkspace(sessions.WorkspaceConfig{History: db, Keys: keys, Local: local, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestWorkspaceSettingsPersist(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "history.db")
	ctx := testContext(t, 10*time.Second)
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorkspace(t, db, sessions.NewKeys(&store.Memory{}, nil), nil, nil)
	s, err := w.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s != store.DefaultSettings() {
		t.Errorf("a new workspace has %+v, want the defaults %+v", s, store.DefaultSettings())
	}
	s.Backend = sessions.BackendCustom
	s.CustomURL = "http://127.0.0.1:8080"
	s.Region = "eu"
	s.ShortLivedTokens = true
	s.Diarize = true
	s.InterimResults = false
	s.ExportFormat = "vtt"
	if err := w.SaveSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	bad := s
	bad.CustomURL = "not a url"
	if err := w.SaveSettings(ctx, bad); err == nil {
		t.Error("a custom backend without a usable address was saved")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := newWorkspace(t, db, sessions.NewKeys(&store.Memory{}, nil), nil, nil).Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got != s {
		t.Errorf("reopened, the settings are %+v, want %+v", got, s)
	}
}

// TestWorkspaceBackendChoice checks which service each choice of backend
// and key reaches, and that the key it sends is the one that service
// accepts.
func TestWorkspaceBackendChoice(t *testing.T) {
	t.Parallel()
	local := localEngine(t)
	custom := keyedEngine(t)
	key := custom.Key
	ctx := testContext(t, 30*time.Second)

	for _, tc := range []struct {
		name     string
		settings func(*store.Settings)
		env      api.Secret
		kind     string
		reach    *engine.Local // nil: no request is made (the hosted service)
		wantErr  error
	}{
		{name: "auto without a key is the local engine", kind: sessions.BackendLocal, reach: local},
		{name: "auto with the environment's key is the hosted service", env: key, kind: sessions.BackendHosted},
		{name: "custom with the environment's key", env: key, kind: sessions.BackendCustom, reach: custom,
			settings: func(s *store.Settings) { s.Backend = sessions.BackendCustom; s.CustomURL = custom.URL.String() }},
		{name: "custom with a wrong key is refused", env: randomKey(t, "wrong-"), kind: sessions.BackendCustom, reach: custom, wantErr: api.ErrUnauthorized,
			settings: func(s *store.Settings) { s.Backend = sessions.BackendCustom; s.CustomURL = custom.URL.String() }},
		{name: "custom without a key", wantErr: sessions.ErrNoKey,
			settings: func(s *store.Settings) { s.Backend = sessions.BackendCustom; s.CustomURL = custom.URL.String() }},
		{name: "local ignores the key", env: key, kind: sessions.BackendLocal, reach: local,
			settings: func(s *store.Settings) { s.Backend = sessions.BackendLocal }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			w := newWorkspace(t, openDB(t), sessions.NewKeys(&store.Memory{}, envWith(tc.env)), localOf(local, &calls), nil)
			s := store.DefaultSettings()
			if tc.settings != nil {
				tc.settings(&s)
			}
			if err := w.SaveSettings(ctx, s); err != nil {
				t.Fatal(err)
			}
			conn, err := w.Connection(ctx)
			if tc.reach == nil && tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Connection: %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Connection: %v", err)
			}
			if conn.Kind != tc.kind {
				t.Errorf("backend %s, want %s", conn.Kind, tc.kind)
			}
			if want := int32(0); tc.kind == sessions.BackendLocal {
				want = 1
				if calls.Load() != want {
					t.Errorf("the local engine was asked for %d times, want %d", calls.Load(), want)
				}
			} else if calls.Load() != want {
				t.Errorf("the local engine was started for the %s backend", tc.kind)
			}
			if tc.reach == nil {
				return
			}
			if got := conn.Client.Endpoint().MainBase().Host; got != tc.reach.URL.Host {
				t.Errorf("the client goes to %s, want %s", got, tc.reach.URL.Host)
			}
			info, err := w.Info(ctx)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("Info: %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(info.Models) == 0 {
				t.Errorf("Info: %v, %d models; the service must accept the key", err, len(info.Models))
			}
		})
	}
}

// TestWorkspaceWithoutLocalEngine: in a build without the local engine
// (the Windows build), no key, or the local engine chosen, is refused
// with ErrNoLocalEngine before anything is started, and a key still
// reaches the hosted service.
func TestWorkspaceWithoutLocalEngine(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 10*time.Second)
	for _, tc := range []struct {
		name    string
		backend string
		env     api.Secret
		want    error
		kind    string
	}{
		{name: "no key", want: sessions.ErrNoLocalEngine},
		{name: "local chosen", backend: sessions.BackendLocal, env: "a-key", want: sessions.ErrNoLocalEngine},
		{name: "a key", env: "a-key", kind: sessions.BackendHosted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorkspace(t, openDB(t), sessions.NewKeys(&store.Memory{}, envWith(tc.env)), nil, nil)
			s := store.DefaultSettings()
			s.Backend = tc.backend
			if err := w.SaveSettings(ctx, s); err != nil {
				t.Fatal(err)
			}
			conn, err := w.Connection(ctx)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("Connection: %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil || conn.Kind != tc.kind {
				t.Fatalf("Connection: %v, %+v; want the %s backend", err, conn, tc.kind)
			}
		})
	}
}

// TestWorkspaceUserAgent: requests name Earshot and its version as the
// workspace was given them.
func TestWorkspaceUserAgent(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 10*time.Second)
	agents := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		agents <- r.UserAgent()
		http.Error(w, `{"err_code":"INVALID_AUTH","err_msg":"no"}`, http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	w, err := sessions.NewWorkspace(sessions.WorkspaceConfig{History: openDB(t),
		Keys: sessions.NewKeys(&store.Memory{}, envWith("a-key")), UserAgent: "earshot/9.8.7"})
	if err != nil {
		t.Fatal(err)
	}
	s := store.DefaultSettings()
	s.Backend, s.CustomURL = sessions.BackendCustom, srv.URL
	if err := w.SaveSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Info(ctx); err == nil {
		t.Fatal("Info succeeded against a server that refuses every key")
	}
	if got := <-agents; got != "earshot/9.8.7" {
		t.Errorf("User-Agent %q, want earshot/9.8.7", got)
	}
}

// TestWorkspaceShortLivedTokens streams through a custom backend with
// short-lived tokens: each WebSocket handshake carries a JWT minted with
// the key just before it, never the key.
func TestWorkspaceShortLivedTokens(t *testing.T) {
	t.Parallel()
	eng := keyedEngine(t)
	key := eng.Key
	proxy := newFaultProxy(t, eng.URL.Host)
	ctx := testContext(t, time.Minute)
	w := newWorkspace(t, openDB(t), sessions.NewKeys(&store.Memory{}, envWith(key)), nil, nil)
	s := store.DefaultSettings()
	s.Backend = sessions.BackendCustom
	s.CustomURL = proxy.endpoint().Base.String()
	s.ShortLivedTokens = true
	if err := w.SaveSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	replay, err := audio.NewReplay(mono16k, loadPCM(t, librivoxPath("0880")), audio.ReplayConfig{Paced: true, Clock: testkit.FastClock{Origin: time.Now(), Factor: 2}})
	if err != nil {
		t.Fatal(err)
	}
	// The audio holds after its first second until the stream is cut, so
	// the cut lands mid-stream however loaded the machine: under make
	// test it once landed after the recording's end, when no reconnection
	// is due.
	src := &gatedSource{Source: replay, holdAt: 16000, release: make(chan struct{})}
	c, err := w.StartCaptions(ctx, sessions.CaptionsRequest{Source: src, SourceName: "0880"})
	if err != nil {
		t.Fatal(err)
	}
	rec := record(c, nil)
	// The first stream is cut early, so a second handshake needs a token
	// of its own.
	eventually(t, "audio on the stream", func() bool {
		for _, pc := range proxy.connections() {
			for _, ch := range pc.upChunks() {
				if strings.HasPrefix(string(ch.data), "GET "+api.PathListen) && pc.upBytes() > 16<<10 {
					pc.close(true)
					return true
				}
			}
		}
		return false
	})
	close(src.release)
	<-c.Done()
	if err := c.Stop(); err != nil {
		t.Fatalf("the session failed: %v", err)
	}
	rec.wait(t)
	if o := testkit.WordOverlap(captionsText(rec.finals()), truth(t)["0880"]); o < 0.6 {
		t.Errorf("captions %q match the reading at %.2f", captionsText(rec.finals()), o)
	}

	grants := requestsTo(proxy, "POST", api.PathAuthGrant)
	handshakes := requestsTo(proxy, "GET", api.PathListen)
	if len(handshakes) < 2 {
		t.Fatalf("%d handshakes, want a reconnection after the cut", len(handshakes))
	}
	if len(grants) != len(handshakes) {
		t.Errorf("%d tokens minted for %d handshakes, want one each", len(grants), len(handshakes))
	}
	for _, g := range grants {
		if g.token != "Token "+key.Reveal() {
			t.Errorf("a grant was asked with %q, want the key", redact(g.token, key))
		}
	}
	for i, h := range handshakes {
		if !strings.HasPrefix(h.token, "Bearer ey") {
			t.Errorf("handshake %d authorized with %q, want a JWT", i, redact(h.token, key))
		}
		if strings.Contains(h.path, key.Reveal()) || strings.Contains(h.token, key.Reveal()) {
			t.Errorf("handshake %d carries the key", i)
		}
		minted := 0
		for _, g := range grants {
			if g.at.Before(h.at) {
				minted++
			}
		}
		if minted != i+1 {
			t.Errorf("handshake %d came after %d tokens were minted, want %d", i, minted, i+1)
		}
	}
}

func redact(s string, key api.Secret) string { return strings.ReplaceAll(s, key.Reveal(), "KEY") }

// TestWorkspaceKeyWithoutKeyring saves a key where no Secret Service
// runs, through the keyring fallback the app uses: the key works, and the
// workspace says it is kept for this session only.
func TestWorkspaceKeyWithoutKeyring(t *testing.T) {
	t.Parallel()
	custom := keyedEngine(t)
	key := custom.Key
	ctx := testContext(t, 30*time.Second)
	for _, tc := range []struct {
		name    string
		secrets store.SecretStore
	}{
		{"fallback", store.NewFallback(unavailableKeyring{})},
		{"bare keyring", unavailableKeyring{}},
		{"none", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorkspace(t, openDB(t), sessions.NewKeys(tc.secrets, nil), nil, nil)
			if st := w.Key(); st.Source != sessions.KeyNone {
				t.Errorf("before saving: %v", st.Source)
			}
			src, err := w.SaveKey(key)
			if src != sessions.KeySession || !errors.Is(err, store.ErrSecretServiceUnavailable) {
				t.Errorf("SaveKey: %v, %v; want kept for this session only, saying why", src, err)
			}
			if st := w.Key(); st.Source != sessions.KeySession {
				t.Errorf("Key reports the key %v, want %v", st.Source, sessions.KeySession)
			}
			s := store.DefaultSettings()
			s.Backend = sessions.BackendCustom
			s.CustomURL = custom.URL.String()
			if err := w.SaveSettings(ctx, s); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Info(ctx); err != nil {
				t.Errorf("the key kept for the session does not work: %v", err)
			}
			if err := w.ForgetKey(); err != nil {
				t.Errorf("ForgetKey: %v", err)
			}
			if st := w.Key(); st.Source != sessions.KeyNone {
				t.Errorf("after ForgetKey: %v", st.Source)
			}
		})
	}
}

// TestWorkspaceConnectionNotStale: settings saved while the connection is
// being built (here, from inside the local engine's start) are the ones
// the workspace then uses and keeps.
func TestWorkspaceConnectionNotStale(t *testing.T) {
	db := openDB(t)
	ctx := testContext(t, time.Minute)
	key := randomKey(t, "stale-")
	var w *sessions.Workspace
	var calls atomic.Int32
	local := func() (api.Endpoint, api.Secret, error) {
		if calls.Add(1) == 1 {
			s, err := w.Settings(ctx)
			if err != nil {
				return api.Endpoint{}, "", err
			}
			s.Backend = sessions.BackendHosted
			if err := w.SaveSettings(ctx, s); err != nil {
				return api.Endpoint{}, "", err
			}
		}
		base, err := api.ParseBaseURL("http://127.0.0.1:9")
		return api.Endpoint{Base: base}, "local", err
	}
	w = newWorkspace(t, db, sessions.NewKeys(&store.Memory{}, envWith(key)), local, nil)
	s := store.DefaultSettings()
	s.Backend = sessions.BackendLocal
	if err := w.SaveSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	conn, err := w.Connection(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if conn.Kind != sessions.BackendHosted {
		t.Errorf("the connection is to %s, want the hosted service saved while it was built", conn.Kind)
	}
	again, err := w.Connection(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again != conn || again.Kind != sessions.BackendHosted {
		t.Errorf("the connection kept is %s, want the hosted one returned", again.Kind)
	}
}
