package store

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/zalando/go-keyring"

	"github.com/earshot-app/earshot/api"
)

// Errors of a SecretStore. Test with errors.Is.
var (
	// ErrNoSecret reports that no key is stored.
	ErrNoSecret = errors.New("no API key is stored")
	// ErrSecretServiceUnavailable reports that the operating system's
	// keyring cannot be reached: no D-Bus session, no Secret Service, or a
	// collection that stays locked. The cause stays wrapped in the error.
	ErrSecretServiceUnavailable = errors.New("the Secret Service (keyring) is not available")
	// ErrEmptySecret reports an attempt to store an empty key.
	ErrEmptySecret = errors.New("the API key is empty")
)

// SecretStore keeps the API key. Implementations are safe for concurrent
// use. The key never reaches the database.
type SecretStore interface {
	// Get returns the key, or an error matching ErrNoSecret when none is
	// stored.
	Get() (api.Secret, error)
	// Set stores the key, replacing any other.
	Set(api.Secret) error
	// Delete forgets the key; ErrNoSecret when there was none.
	Delete() error
}

// The name of the key in the keyring: the application's id and the account.
const (
	KeyringService = "app.earshot.Earshot"
	KeyringUser    = "api-key"
)

// Keyring keeps the key in the operating system's keyring (the Secret
// Service over D-Bus on Linux, the Keychain on macOS, the Credential
// Manager on Windows). The zero value uses KeyringService and KeyringUser.
//
// Its calls cannot be cancelled, hence no context: the keyring library
// offers none, and a locked collection may ask the user for a password
// and wait for the answer. Run them off the UI goroutine.
type Keyring struct {
	Service string // "" for KeyringService
	User    string // "" for KeyringUser
	// Timeout bounds each call; 0 is keyringTimeout's choice.
	Timeout time.Duration
}

var _ SecretStore = Keyring{}

func (k Keyring) names() (service, user string) {
	service, user = k.Service, k.User
	if service == "" {
		service = KeyringService
	}
	if user == "" {
		user = KeyringUser
	}
	return service, user
}

// Get returns the key from the keyring.
func (k Keyring) Get() (api.Secret, error) {
	service, user := k.names()
	v, err := callKeyring(k.Timeout, func() (string, error) { return keyring.Get(service, user) })
	if err != nil {
		return "", fmt.Errorf("keyring: get: %w", classify(err))
	}
	if v == "" {
		return "", fmt.Errorf("keyring: get: %w", ErrNoSecret)
	}
	return api.Secret(v), nil
}

// Set stores the key in the keyring.
func (k Keyring) Set(s api.Secret) error {
	if s == "" {
		return fmt.Errorf("keyring: set: %w", ErrEmptySecret)
	}
	service, user := k.names()
	_, err := callKeyring(k.Timeout, func() (struct{}, error) { return struct{}{}, keyring.Set(service, user, s.Reveal()) })
	if err != nil {
		return fmt.Errorf("keyring: set: %w", classify(err))
	}
	return nil
}

// Delete removes the key from the keyring.
func (k Keyring) Delete() error {
	service, user := k.names()
	_, err := callKeyring(k.Timeout, func() (struct{}, error) { return struct{}{}, keyring.Delete(service, user) })
	if err != nil {
		return fmt.Errorf("keyring: delete: %w", classify(err))
	}
	return nil
}

// busOS are the systems whose keyring is the Secret Service over D-Bus.
var busOS = map[string]bool{"linux": true, "freebsd": true, "openbsd": true, "netbsd": true, "dragonfly": true}

// noSessionBus returns why the keyring cannot be reached before any call
// is made, or nil. Without a session bus address (nor the user bus at
// $XDG_RUNTIME_DIR/bus), godbus runs dbus-launch: every call then started
// a D-Bus daemon that outlived the process, which could in turn start a
// keyring daemon waiting on an unlock prompt nobody sees (the CLI hung).
func noSessionBus() error {
	if !busOS[runtime.GOOS] {
		return nil
	}
	if addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); strings.HasPrefix(addr, disabledBus) {
		return fmt.Errorf("%w: D-Bus is disabled (DBUS_SESSION_BUS_ADDRESS=%s)", ErrSecretServiceUnavailable, addr)
	} else if addr != "" {
		return nil
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		if fi, err := os.Stat(filepath.Join(dir, "bus")); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return nil
		}
	}
	return fmt.Errorf("%w: there is no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)", ErrSecretServiceUnavailable)
}

// disabledBus is the D-Bus address that says there is no session bus and
// none is to be started.
const disabledBus = "disabled:"

// NoSessionBusAutolaunch makes sure that nothing in this process starts a
// D-Bus daemon when there is no session bus: godbus, which Fyne and the
// keyring use, otherwise runs dbus-launch, and the daemon it starts
// outlives the process (one more at every start). It sets
// DBUS_SESSION_BUS_ADDRESS to "disabled:" then, and reports whether it
// did. Call it before anything uses D-Bus.
func NoSessionBusAutolaunch() bool {
	if !busOS[runtime.GOOS] || noSessionBus() == nil || os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		return false
	}
	return os.Setenv("DBUS_SESSION_BUS_ADDRESS", disabledBus) == nil
}

// keyringTimeout is how long a keyring call may take. A call can wait on
// an unlock prompt: with a display a person may be typing a password;
// without one on Linux nobody can answer it.
func keyringTimeout() time.Duration {
	if busOS[runtime.GOOS] && os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return 15 * time.Second
	}
	return 3 * time.Minute
}

// callKeyring runs f, one call of the keyring library, unless there is no
// session bus, for at most timeout (0: keyringTimeout()). The library's
// calls cannot be cancelled: one that does not answer in time is left to
// end on its own and its result dropped, and the error says the keyring
// is unavailable, so Fallback calls it no more.
func callKeyring[T any](timeout time.Duration, f func() (T, error)) (T, error) {
	var zero T
	if err := noSessionBus(); err != nil {
		return zero, err
	}
	if timeout <= 0 {
		timeout = keyringTimeout()
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1) // buffered: a late answer ends the goroutine
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r.v, r.err
	case <-t.C:
		return zero, fmt.Errorf("%w: it did not answer within %v (is it waiting to be unlocked?)", ErrSecretServiceUnavailable, timeout)
	}
}

// classify maps an error of the keyring library to ErrNoSecret or
// ErrSecretServiceUnavailable, keeping the cause wrapped beside it. Other
// errors pass unchanged.
func classify(err error) error {
	switch {
	case errors.Is(err, keyring.ErrNotFound):
		return fmt.Errorf("%w (%w)", ErrNoSecret, err)
	case serviceUnavailable(err):
		return fmt.Errorf("%w: %w", ErrSecretServiceUnavailable, err)
	}
	return err
}

// unavailableDBusErrors are the D-Bus error names that mean no usable
// Secret Service answers on the session bus.
var unavailableDBusErrors = map[string]bool{
	"org.freedesktop.DBus.Error.ServiceUnknown": true, // nothing provides org.freedesktop.secrets
	"org.freedesktop.DBus.Error.NameHasNoOwner": true,
	"org.freedesktop.DBus.Error.NoReply":        true,
	"org.freedesktop.DBus.Error.NoServer":       true,
	"org.freedesktop.DBus.Error.Disconnected":   true,
	"org.freedesktop.DBus.Error.TimedOut":       true,
	"org.freedesktop.DBus.Error.Timeout":        true,
	"org.freedesktop.DBus.Error.AccessDenied":   true, // a sandbox without the portal
	"org.freedesktop.DBus.Error.UnknownObject":  true, // no default collection
	"org.freedesktop.DBus.Error.UnknownMethod":  true, // not a Secret Service
	"org.freedesktop.Secret.Error.IsLocked":     true,
	"org.freedesktop.Secret.Error.NoSuchObject": true,
}

// unavailableMessages are the errors that the keyring and D-Bus libraries
// create with errors.New or fmt.Errorf and no type or value to test, so
// only their text tells them apart. Each is matched as a prefix of the
// error's text, and only when no typed test above answered.
var unavailableMessages = []string{
	// go-keyring, secret_service.Unlock: the collection stayed locked (no
	// prompt could be shown, or the user dismissed it).
	"failed to unlock correct collection",
	// godbus: no DBUS_SESSION_BUS_ADDRESS and nothing to discover or launch.
	"dbus: couldn't determine address of session bus",
	"dbus: invalid bus address",
	"dbus: authentication failed",
	"dbus: authentication protocol error",
}

// serviceUnavailable reports whether err means the keyring cannot be
// reached, testing the library's error values and types first.
func serviceUnavailable(err error) bool {
	if errors.Is(err, keyring.ErrUnsupportedPlatform) || errors.Is(err, dbus.ErrClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	// dbus-launch, which godbus runs without a session bus, is missing
	// (*exec.Error) or failed (*exec.ExitError).
	var execErr *exec.Error
	var exitErr *exec.ExitError
	// The bus address names a socket nobody listens on.
	var netErr *net.OpError
	if errors.As(err, &execErr) || errors.As(err, &exitErr) || errors.As(err, &netErr) {
		return true
	}
	// godbus returns its Error by value from calls, by pointer elsewhere.
	var dbusErr dbus.Error
	var dbusErrPtr *dbus.Error
	switch {
	case errors.As(err, &dbusErr):
		return isUnavailableDBusError(dbusErr.Name)
	case errors.As(err, &dbusErrPtr) && dbusErrPtr != nil:
		return isUnavailableDBusError(dbusErrPtr.Name)
	}
	for _, m := range unavailableMessages {
		if strings.HasPrefix(err.Error(), m) {
			return true
		}
	}
	return false
}

func isUnavailableDBusError(name string) bool {
	return unavailableDBusErrors[name] || strings.HasPrefix(name, "org.freedesktop.DBus.Error.Spawn.")
}

// Memory keeps the key in memory for the life of the process: the place
// for it when there is no keyring. The zero value is empty and ready; it
// is safe for concurrent use.
type Memory struct {
	mu     sync.Mutex
	secret api.Secret // guarded by mu
}

var _ SecretStore = (*Memory)(nil)

// Get returns the key held.
func (m *Memory) Get() (api.Secret, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.secret == "" {
		return "", fmt.Errorf("memory: get: %w", ErrNoSecret)
	}
	return m.secret, nil
}

// Set holds the key.
func (m *Memory) Set(s api.Secret) error {
	if s == "" {
		return fmt.Errorf("memory: set: %w", ErrEmptySecret)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.secret = s
	return nil
}

// Delete forgets the key.
func (m *Memory) Delete() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.secret == "" {
		return fmt.Errorf("memory: delete: %w", ErrNoSecret)
	}
	m.secret = ""
	return nil
}

// Fallback keeps the key in a persistent store (the keyring) and, once
// that store reports ErrSecretServiceUnavailable, in memory for the rest
// of its life, so a machine without a Secret Service still works for the
// session. Persistent says which, so the UI can tell the user that the key
// will be forgotten on exit.
//
// After the first unavailability Fallback no longer calls the keyring:
// each attempt without a session bus can start a D-Bus daemon that
// outlives the process. Make a new Fallback to try the keyring again.
//
// It is safe for concurrent use; calls are serialised.
type Fallback struct {
	persistent SecretStore

	mu          sync.Mutex
	memory      Memory // the key while the keyring is unavailable
	unavailable error  // why the keyring is not used; nil while it is; guarded by mu
}

var _ SecretStore = (*Fallback)(nil)

// NewFallback returns a Fallback over a persistent store, usually Keyring{}.
func NewFallback(persistent SecretStore) *Fallback {
	return &Fallback{persistent: persistent}
}

// Persistent reports whether the key is kept in the keyring (true until a
// keyring call reports it unavailable) rather than in memory for this
// session only.
func (f *Fallback) Persistent() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.unavailable == nil
}

// Unavailable returns why the keyring is not used, an error matching
// ErrSecretServiceUnavailable, or nil while it is.
func (f *Fallback) Unavailable() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.unavailable
}

// Get returns the key. When the keyring turns out to be unavailable and no
// key is held in memory, the error matches both ErrNoSecret and
// ErrSecretServiceUnavailable: a key may be in a keyring that cannot be
// opened.
func (f *Fallback) Get() (api.Secret, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unavailable == nil {
		s, err := f.persistent.Get()
		if !errors.Is(err, ErrSecretServiceUnavailable) {
			return s, err
		}
		f.unavailable = err
	}
	s, err := f.memory.Get()
	if err != nil {
		return "", fmt.Errorf("%w (%w)", err, f.unavailable)
	}
	return s, nil
}

// Set stores the key in the keyring or, when it is unavailable, in memory;
// Persistent tells which. Only errors other than unavailability are
// returned.
func (f *Fallback) Set(s api.Secret) error {
	if s == "" {
		return fmt.Errorf("fallback: set: %w", ErrEmptySecret)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unavailable == nil {
		err := f.persistent.Set(s)
		if !errors.Is(err, ErrSecretServiceUnavailable) {
			return err
		}
		f.unavailable = err
	}
	return f.memory.Set(s)
}

// Delete forgets the key, from memory or from the keyring, whichever holds
// it now. Like Get, an error may match both ErrNoSecret and
// ErrSecretServiceUnavailable.
func (f *Fallback) Delete() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unavailable == nil {
		err := f.persistent.Delete()
		if !errors.Is(err, ErrSecretServiceUnavailable) {
			return err
		}
		f.unavailable = err
	}
	if err := f.memory.Delete(); err != nil {
		return fmt.Errorf("%w (%w)", err, f.unavailable)
	}
	return nil
}
