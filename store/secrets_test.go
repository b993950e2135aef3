package store

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/zalando/go-keyring"

	"github.com/earshot-app/earshot/api"
)

func TestClassify(t *testing.T) {
	missingProgram := exec.Command("earshot-test-no-such-program").Run() // a real *exec.Error
	_, dialErr := net.Dial("unix", "/nonexistent/earshot/bus")
	tests := []struct {
		name        string
		err         error
		noSecret    bool
		unavailable bool
	}{
		{"not found", keyring.ErrNotFound, true, false},
		{"unsupported platform", keyring.ErrUnsupportedPlatform, false, true},
		{"no service provides the name", dbus.Error{Name: "org.freedesktop.DBus.Error.ServiceUnknown",
			Body: []any{"The name org.freedesktop.secrets was not provided by any .service files"}}, false, true},
		{"D-Bus error by pointer", &dbus.Error{Name: "org.freedesktop.Secret.Error.IsLocked"}, false, true},
		{"activation failed", dbus.Error{Name: "org.freedesktop.DBus.Error.Spawn.ChildExited"}, false, true},
		{"wrapped D-Bus error", fmt.Errorf("call: %w", dbus.Error{Name: "org.freedesktop.DBus.Error.NoReply"}), false, true},
		{"other D-Bus error", dbus.Error{Name: "org.freedesktop.DBus.Error.InvalidArgs"}, false, false},
		{"dbus-launch missing", &exec.Error{Name: "dbus-launch", Err: exec.ErrNotFound}, false, true},
		{"a program that is not there", missingProgram, false, true},
		{"no socket at the bus address", dialErr, false, true},
		{"connection closed", dbus.ErrClosed, false, true},
		{"connection dropped", io.EOF, false, true},
		{"collection stays locked", errors.New("failed to unlock correct collection '/org/freedesktop/secrets/aliases/default'"), false, true},
		{"no session bus address", errors.New("dbus: couldn't determine address of session bus"), false, true},
		{"too big", keyring.ErrSetDataTooBig, false, false},
		{"anything else", errors.New("something else"), false, false},
		{"a message only inside another", errors.New("x: failed to unlock correct collection"), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil {
				t.Fatal("the test's error is nil")
			}
			got := classify(tt.err)
			if errors.Is(got, ErrNoSecret) != tt.noSecret || errors.Is(got, ErrSecretServiceUnavailable) != tt.unavailable {
				t.Errorf("classify(%v) = %v: ErrNoSecret %v, ErrSecretServiceUnavailable %v; want %v, %v",
					tt.err, got, errors.Is(got, ErrNoSecret), errors.Is(got, ErrSecretServiceUnavailable), tt.noSecret, tt.unavailable)
			}
			if !wraps(got, tt.err) {
				t.Errorf("classify(%v) = %v lost its cause", tt.err, got)
			}
		})
	}
}

// wraps reports whether want is in err's tree. It compares with
// reflect.DeepEqual, since dbus.Error is not comparable and errors.Is
// cannot find it.
func wraps(err, want error) bool {
	if reflect.DeepEqual(err, want) {
		return true
	}
	switch e := err.(type) {
	case interface{ Unwrap() error }:
		return wraps(e.Unwrap(), want)
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			if wraps(inner, want) {
				return true
			}
		}
	}
	return false
}

// useMockKeyring gives a test a fresh go-keyring mock, failing every call
// with err when it is not nil. The mock is process-wide: tests that use it
// must not run in parallel.
func useMockKeyring(t *testing.T, err error) {
	t.Helper()
	// The mock answers where a bus would: Keyring asks for one first.
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/mock-bus")
	if err != nil {
		keyring.MockInitWithError(err)
	} else {
		keyring.MockInit()
	}
	t.Cleanup(keyring.MockInit)
}

func TestKeyring(t *testing.T) {
	useMockKeyring(t, nil)
	var k Keyring
	if _, err := k.Get(); !errors.Is(err, ErrNoSecret) {
		t.Fatalf("Get of an empty keyring = %v, want ErrNoSecret", err)
	}
	if err := k.Delete(); !errors.Is(err, ErrNoSecret) {
		t.Fatalf("Delete of an empty keyring = %v, want ErrNoSecret", err)
	}
	if err := k.Set(""); !errors.Is(err, ErrEmptySecret) {
		t.Fatalf("Set(\"\") = %v, want ErrEmptySecret", err)
	}
	if err := k.Set("dg-1"); err != nil {
		t.Fatal(err)
	}
	if got, err := k.Get(); err != nil || got != "dg-1" {
		t.Fatalf("Get = %q, %v", got.Reveal(), err)
	}
	if got, err := keyring.Get(KeyringService, KeyringUser); err != nil || got != "dg-1" {
		t.Fatalf("the zero Keyring did not use %s/%s: %q, %v", KeyringService, KeyringUser, got, err)
	}
	other := Keyring{Service: "app.earshot.Test", User: "other"}
	if _, err := other.Get(); !errors.Is(err, ErrNoSecret) {
		t.Fatalf("another entry sees the key: %v", err)
	}
	if err := k.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Get(); !errors.Is(err, ErrNoSecret) {
		t.Fatalf("Get after Delete = %v, want ErrNoSecret", err)
	}
}

func TestKeyringUnavailable(t *testing.T) {
	useMockKeyring(t, dbus.Error{Name: "org.freedesktop.DBus.Error.ServiceUnknown"})
	var k Keyring
	if _, err := k.Get(); !errors.Is(err, ErrSecretServiceUnavailable) {
		t.Errorf("Get = %v, want ErrSecretServiceUnavailable", err)
	}
	if err := k.Set("dg-1"); !errors.Is(err, ErrSecretServiceUnavailable) {
		t.Errorf("Set = %v, want ErrSecretServiceUnavailable", err)
	}
	if err := k.Delete(); !errors.Is(err, ErrSecretServiceUnavailable) {
		t.Errorf("Delete = %v, want ErrSecretServiceUnavailable", err)
	}
}

func TestMemory(t *testing.T) {
	var m Memory
	if _, err := m.Get(); !errors.Is(err, ErrNoSecret) {
		t.Fatalf("Get of a new Memory = %v, want ErrNoSecret", err)
	}
	if err := m.Set(""); !errors.Is(err, ErrEmptySecret) {
		t.Fatalf("Set(\"\") = %v", err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if err := m.Set(api.Secret(fmt.Sprint("dg-", i))); err != nil {
				t.Error(err)
			}
			if _, err := m.Get(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := m.Delete(); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(); !errors.Is(err, ErrNoSecret) {
		t.Fatalf("second Delete = %v, want ErrNoSecret", err)
	}
}

// countingStore counts the calls that reach a SecretStore.
type countingStore struct {
	SecretStore
	mu    sync.Mutex
	calls int
}

func (c *countingStore) count() {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
}
func (c *countingStore) Get() (api.Secret, error) { c.count(); return c.SecretStore.Get() }
func (c *countingStore) Set(s api.Secret) error   { c.count(); return c.SecretStore.Set(s) }
func (c *countingStore) Delete() error            { c.count(); return c.SecretStore.Delete() }

func TestFallbackKeyringWorks(t *testing.T) {
	useMockKeyring(t, nil)
	f := NewFallback(Keyring{})
	if _, err := f.Get(); !errors.Is(err, ErrNoSecret) || errors.Is(err, ErrSecretServiceUnavailable) {
		t.Fatalf("Get = %v, want only ErrNoSecret", err)
	}
	if err := f.Set("dg-kept"); err != nil {
		t.Fatal(err)
	}
	if !f.Persistent() || f.Unavailable() != nil {
		t.Fatalf("Persistent = %v, Unavailable = %v with a working keyring", f.Persistent(), f.Unavailable())
	}
	// It really is in the keyring: another reader sees it.
	if got, err := (Keyring{}).Get(); err != nil || got != "dg-kept" {
		t.Fatalf("the keyring holds %q, %v", got.Reveal(), err)
	}
	if err := f.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := (Keyring{}).Get(); !errors.Is(err, ErrNoSecret) {
		t.Fatalf("after Delete the keyring still answers %v", err)
	}
}

func TestFallbackNoSecretService(t *testing.T) {
	useMockKeyring(t, dbus.Error{Name: "org.freedesktop.DBus.Error.ServiceUnknown"})
	k := &countingStore{SecretStore: Keyring{}}
	f := NewFallback(k)
	if !f.Persistent() {
		t.Fatal("a new Fallback is not persistent before it tried the keyring")
	}
	_, err := f.Get()
	if !errors.Is(err, ErrNoSecret) || !errors.Is(err, ErrSecretServiceUnavailable) {
		t.Fatalf("Get = %v, want ErrNoSecret and ErrSecretServiceUnavailable", err)
	}
	if f.Persistent() || !errors.Is(f.Unavailable(), ErrSecretServiceUnavailable) {
		t.Fatalf("after an unavailable keyring: Persistent %v, Unavailable %v", f.Persistent(), f.Unavailable())
	}
	if err := f.Set("dg-session"); err != nil {
		t.Fatalf("Set = %v, want the key kept in memory", err)
	}
	if got, err := f.Get(); err != nil || got != "dg-session" {
		t.Fatalf("Get = %q, %v", got.Reveal(), err)
	}
	if err := f.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Get(); !errors.Is(err, ErrNoSecret) {
		t.Fatalf("Get after Delete = %v", err)
	}
	if k.calls != 1 {
		t.Errorf("the keyring was called %d times, want once: after it failed, memory only", k.calls)
	}
}

func TestFallbackOtherErrorsPass(t *testing.T) {
	useMockKeyring(t, keyring.ErrSetDataTooBig)
	f := NewFallback(Keyring{})
	if err := f.Set("dg-big"); !errors.Is(err, keyring.ErrSetDataTooBig) {
		t.Fatalf("Set = %v, want the keyring's own error", err)
	}
	if !f.Persistent() {
		t.Fatal("an error that is not unavailability moved the key to memory")
	}
	if err := f.Set(""); !errors.Is(err, ErrEmptySecret) {
		t.Fatalf("Set(\"\") = %v", err)
	}
}

func TestFallbackConcurrent(t *testing.T) {
	useMockKeyring(t, nil)
	f := NewFallback(&Memory{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			_ = f.Set(api.Secret(fmt.Sprint("dg-", i)))
			_, _ = f.Get()
			_ = f.Persistent()
		})
	}
	wg.Wait()
	if _, err := f.Get(); err != nil {
		t.Fatal(err)
	}
}

// TestKeyringNeedsASessionBus: with no session bus, Keyring says the
// keyring is unavailable at once instead of letting godbus run
// dbus-launch (a daemon left behind at every call, and a keyring
// activated on it that waited on an unlock prompt: the CLI hung). The
// user bus at $XDG_RUNTIME_DIR/bus counts as a session bus.
func TestKeyringNeedsASessionBus(t *testing.T) {
	useMockKeyring(t, nil)
	dir := t.TempDir()
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", dir)
	var k Keyring
	if _, err := k.Get(); !errors.Is(err, ErrSecretServiceUnavailable) || !strings.Contains(err.Error(), "no D-Bus session bus") {
		t.Fatalf("Get without a bus = %v, want ErrSecretServiceUnavailable naming the missing bus", err)
	}
	if err := k.Set("dg-1"); !errors.Is(err, ErrSecretServiceUnavailable) {
		t.Fatalf("Set without a bus = %v, want ErrSecretServiceUnavailable", err)
	}
	if err := k.Delete(); !errors.Is(err, ErrSecretServiceUnavailable) {
		t.Fatalf("Delete without a bus = %v, want ErrSecretServiceUnavailable", err)
	}
	// Told there is none, Keyring does not look; nor does godbus.
	if !NoSessionBusAutolaunch() || os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "disabled:" {
		t.Fatalf("NoSessionBusAutolaunch left DBUS_SESSION_BUS_ADDRESS=%q", os.Getenv("DBUS_SESSION_BUS_ADDRESS"))
	}
	if _, err := k.Get(); !errors.Is(err, ErrSecretServiceUnavailable) || !strings.Contains(err.Error(), "D-Bus is disabled") {
		t.Fatalf("Get with D-Bus disabled = %v, want ErrSecretServiceUnavailable", err)
	}
	if NoSessionBusAutolaunch() {
		t.Error("NoSessionBusAutolaunch changed an address already set")
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	// A file named bus is not a bus; a socket is.
	if err := os.WriteFile(filepath.Join(dir, "bus"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Get(); !errors.Is(err, ErrSecretServiceUnavailable) {
		t.Fatalf("Get with a plain file for a bus = %v, want ErrSecretServiceUnavailable", err)
	}
	if err := os.Remove(filepath.Join(dir, "bus")); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, "bus"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := k.Get(); !errors.Is(err, ErrNoSecret) {
		t.Fatalf("Get with the user bus = %v, want the (mock) keyring's ErrNoSecret", err)
	}
	if NoSessionBusAutolaunch() {
		t.Error("NoSessionBusAutolaunch disabled D-Bus with the user bus there")
	}
}

// TestKeyringCallTimeout: a keyring that does not answer (one waiting on
// an unlock prompt nobody can see) is reported unavailable after the
// timeout, and Fallback then keeps the key in memory.
func TestKeyringCallTimeout(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
	release := make(chan struct{})
	ended := make(chan struct{})
	_, err := callKeyring(20*time.Millisecond, func() (string, error) {
		defer close(ended)
		<-release
		return "late", nil
	})
	if !errors.Is(err, ErrSecretServiceUnavailable) || !strings.Contains(err.Error(), "did not answer within 20ms") {
		t.Errorf("a call that never answers = %v, want ErrSecretServiceUnavailable after 20ms", err)
	}
	close(release)
	<-ended // the abandoned call still ends, its answer dropped

	v, err := callKeyring(time.Minute, func() (string, error) { return "soon", nil })
	if err != nil || v != "soon" {
		t.Errorf("a call that answers = %q, %v", v, err)
	}
	if got := keyringTimeout(); got <= 0 {
		t.Errorf("keyringTimeout() = %v", got)
	}
}
