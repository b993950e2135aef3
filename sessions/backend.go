package sessions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/store"
)

// Backends the app can talk to: the engine built into the app, the
// hosted service in a region, or a self-hosted deployment at a URL.
const (
	BackendLocal  = store.BackendLocal
	BackendHosted = store.BackendHosted
	BackendCustom = store.BackendCustom
)

// EnvAPIKey is the environment variable the service's ecosystem reads the
// key from; the app honours it too.
const EnvAPIKey = "DEEPGRAM_API_KEY"

// KeySource says where the API key in use came from.
type KeySource int

// Sources of the key.
const (
	KeyNone        KeySource = iota // no key
	KeyEnvironment                  // DEEPGRAM_API_KEY
	KeyKeyring                      // the operating system's keyring
	KeySession                      // kept in memory for this session only
)

func (k KeySource) String() string {
	switch k {
	case KeyEnvironment:
		return "from " + EnvAPIKey
	case KeyKeyring:
		return "in the system keyring"
	case KeySession:
		return "for this session only"
	}
	return "none"
}

// ErrNoKey is returned when the hosted service is chosen without a key.
var ErrNoKey = errors.New("no API key is set: add one in Settings, or set " + EnvAPIKey)

// ErrNoLocalEngine is returned when the local engine is chosen, or no key
// is set, in a build without the engine (the Windows build): there it
// needs a key for the hosted service, or a custom server.
var ErrNoLocalEngine = errors.New("this build of Earshot has no local engine: add an API key for the hosted service in Settings, or set " + EnvAPIKey)

// Keys finds and keeps the API key: the environment variable first, then
// the keyring; without a Secret Service the key is kept in memory for the
// session, and the caller is told. The key never goes anywhere else. Keys
// is safe for concurrent use.
type Keys struct {
	secrets store.SecretStore
	getenv  func(string) string

	mu      sync.Mutex // guards session
	session api.Secret // a key kept in memory when the keyring failed
}

// NewKeys reads keys from secrets and the environment (getenv may be nil).
func NewKeys(secrets store.SecretStore, getenv func(string) string) *Keys {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	return &Keys{secrets: secrets, getenv: getenv}
}

// Key returns the key in use and where it came from. A keyring that
// cannot be read is reported with KeyNone and the error.
func (k *Keys) Key() (api.Secret, KeySource, error) {
	if env := k.getenv(EnvAPIKey); env != "" {
		return api.Secret(env), KeyEnvironment, nil
	}
	k.mu.Lock()
	session := k.session
	k.mu.Unlock()
	if session != "" {
		return session, KeySession, nil
	}
	if k.secrets == nil {
		return "", KeyNone, nil
	}
	key, err := k.secrets.Get()
	switch {
	case err == nil && key != "":
		if k.fellBack() != nil {
			return key, KeySession, nil
		}
		return key, KeyKeyring, nil
	case err == nil, errors.Is(err, store.ErrNoSecret):
		return "", KeyNone, nil
	}
	return "", KeyNone, err
}

// Save stores key in the keyring. Without a Secret Service it keeps the
// key for this session only and says so with KeySession and an error
// matching store.ErrSecretServiceUnavailable.
func (k *Keys) Save(key api.Secret) (KeySource, error) {
	if key == "" {
		return KeyNone, errors.New("the key is empty")
	}
	if k.secrets != nil {
		err := k.secrets.Set(key)
		if err == nil {
			k.mu.Lock()
			k.session = ""
			k.mu.Unlock()
			if why := k.fellBack(); why != nil {
				return KeySession, why
			}
			return KeyKeyring, nil
		}
		if !errors.Is(err, store.ErrSecretServiceUnavailable) {
			return KeyNone, fmt.Errorf("save the key: %w", err)
		}
		k.mu.Lock()
		k.session = key
		k.mu.Unlock()
		return KeySession, err
	}
	k.mu.Lock()
	k.session = key
	k.mu.Unlock()
	return KeySession, store.ErrSecretServiceUnavailable
}

// memoryFallback is a secret store that keeps the key in memory when the
// keyring is unavailable, and says so; *store.Fallback is one. Its Set
// and Get succeed either way, so only it can tell where the key went.
type memoryFallback interface {
	Unavailable() error
}

// fellBack returns why the secret store keeps the key in memory only, an
// error matching store.ErrSecretServiceUnavailable, or nil when the key
// is in the keyring.
func (k *Keys) fellBack() error {
	if f, ok := k.secrets.(memoryFallback); ok {
		return f.Unavailable()
	}
	return nil
}

// Forget removes the stored key (the environment variable stays).
func (k *Keys) Forget() error {
	k.mu.Lock()
	k.session = ""
	k.mu.Unlock()
	if k.secrets == nil {
		return nil
	}
	if err := k.secrets.Delete(); err != nil && !errors.Is(err, store.ErrNoSecret) && !errors.Is(err, store.ErrSecretServiceUnavailable) {
		return fmt.Errorf("remove the key: %w", err)
	}
	return nil
}

// LocalEngine starts the built-in engine when it is first needed and
// returns where it listens and its key.
type LocalEngine func() (api.Endpoint, api.Secret, error)

// Recognizer is the local engine's speech recogniser, which loads the
// first time something is transcribed. Sessions on the local engine load
// it before they connect, and report StateLoading meanwhile, so that a
// person sees "loading the recogniser" rather than a silent wait.
type Recognizer interface {
	RecognizerReady() bool
	WarmRecognizer(ctx context.Context) error
}

// warm loads r, when it is not nil and not loaded yet, reporting
// StateLoading through emit first.
func warm(ctx context.Context, r Recognizer, emit func(Event)) error {
	if r == nil || r.RecognizerReady() {
		return nil
	}
	emit(&StateEvent{State: StateLoading})
	if err := r.WarmRecognizer(ctx); err != nil {
		return fmt.Errorf("load the local engine's recogniser: %w", err)
	}
	return nil
}

// Connection is the client the app talks through, and how to name it.
type Connection struct {
	Client *api.Client
	// Kind is BackendLocal, BackendHosted or BackendCustom.
	Kind string
	// Name is for people: "Local engine", "Hosted service (European
	// Union)", or the custom host.
	Name string
}

// Connect builds the connection the settings ask for. With no backend
// chosen, a key means the hosted service and no key the local engine.
func Connect(s store.Settings, key api.Secret, local LocalEngine, log *slog.Logger) (*Connection, error) {
	return connect(s, key, local, dialer{log: log})
}

// dialer is how a connection reaches the service: its log, the observer
// of its wire (nil for none), its User-Agent ("" for "earshot") and its
// HTTP client (nil for the api package's own).
type dialer struct {
	log       *slog.Logger
	wire      api.WireObserver
	userAgent string
	client    *http.Client
}

// connect is Connect through d.
func connect(s store.Settings, key api.Secret, local LocalEngine, d dialer) (*Connection, error) {
	log, wire, userAgent := d.log, d.wire, d.userAgent
	kind := s.Backend
	if kind == "" {
		kind = BackendLocal
		if key != "" {
			kind = BackendHosted
		}
	}
	if userAgent == "" {
		userAgent = "earshot"
	}
	cfg := api.Config{Logger: log, UserAgent: userAgent, Wire: wire, HTTPClient: d.client}
	conn := &Connection{Kind: kind}
	switch kind {
	case BackendLocal:
		if local == nil {
			return nil, ErrNoLocalEngine
		}
		ep, k, err := local()
		if err != nil {
			return nil, fmt.Errorf("start the local engine: %w", err)
		}
		cfg.Endpoint, cfg.APIKey = ep, k
		conn.Name = "Local engine"
	case BackendHosted:
		if key == "" {
			return nil, ErrNoKey
		}
		region, err := api.ParseRegion(s.Region)
		if err != nil {
			return nil, err
		}
		cfg.Endpoint = api.Endpoint{Region: region}
		cfg.APIKey = key
		cfg.ShortLivedTokens = s.ShortLivedTokens
		conn.Name = "Hosted service"
		if region.Regional() {
			conn.Name += " (" + region.String() + ")"
		}
	case BackendCustom:
		base, err := api.ParseBaseURL(s.CustomURL)
		if err != nil {
			return nil, fmt.Errorf("custom service address: %w", err)
		}
		if key == "" {
			return nil, ErrNoKey
		}
		region, err := api.ParseRegion(s.Region)
		if err != nil {
			return nil, err
		}
		cfg.Endpoint = api.Endpoint{Base: base, Region: region}
		cfg.APIKey = key
		cfg.ShortLivedTokens = s.ShortLivedTokens
		conn.Name = base.Host
	default:
		return nil, fmt.Errorf("unknown backend %q", kind)
	}
	c, err := api.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	conn.Client = c
	return conn, nil
}
