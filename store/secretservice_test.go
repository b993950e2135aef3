//go:build linux

package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
)

// The tests of this file start the test binary again, in an environment
// of their own: childEnv (main_test.go) says which test the child runs,
// markerEnv marks every process of one run so that the parent finds
// exactly the daemons it caused, and no other.
const (
	markerEnv          = "EARSHOT_STORE_TEST_MARKER"
	childSecretService = "secret-service"
	childNoBus         = "no-bus"
)

// TestKeyringSecretService stores, reads and deletes the key through a
// real Secret Service: gnome-keyring-daemon on a private D-Bus session
// bus that dbus-run-session starts and, when the child exits, ends with
// everything on it. secret-tool, a separate client, checks what the
// daemon holds.
func TestKeyringSecretService(t *testing.T) {
	switch os.Getenv(childEnv) {
	case childSecretService:
		secretServiceChild(t)
		return
	case "":
	default:
		t.Skip("a child run for another test")
	}
	dbusRun, err := exec.LookPath("dbus-run-session")
	if err != nil {
		t.Skip("dbus-run-session is not installed (Debian package dbus); scripts/setup installs it")
	}
	for _, tool := range []string{"gnome-keyring-daemon", "secret-tool", "pgrep"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing (packages gnome-keyring, libsecret-tools, procps; see scripts/setup): %v", tool, err)
		}
	}
	marker := newMarker(t)
	dir := t.TempDir()
	// The daemon writes its keyring under the child's HOME and
	// XDG_DATA_HOME, never into the user's own.
	env := childEnvironment(dir, marker, childSecretService)
	const script = `echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null || exit 1; exec "$0" "$@"`
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, dbusRun, "--", "sh", "-c", script,
		os.Args[0], "-test.run=^TestKeyringSecretService$", "-test.v", "-test.count=1")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	defer checkNoDaemonsLeft(t, marker)
	if err != nil {
		t.Fatalf("the child under dbus-run-session failed: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("--- PASS: TestKeyringSecretService")) {
		t.Fatalf("the child did not run the test:\n%s", out)
	}
	t.Logf("child:\n%s", out)
}

// secretServiceChild runs inside dbus-run-session, with gnome-keyring
// unlocked; the keyring is go-keyring's real one here (see TestMain).
func secretServiceChild(t *testing.T) {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		t.Fatal("no session bus: not started by dbus-run-session")
	}
	marker := os.Getenv(markerEnv)
	// The parent's check for leftovers is worth something only if it sees
	// the daemons while they run.
	if pids := markedDaemons(t, marker); len(pids) < 2 {
		t.Fatalf("found daemons %v of this run, want dbus-daemon and gnome-keyring-daemon", pids)
	}

	var k Keyring
	if _, err := k.Get(); !errors.Is(err, ErrNoSecret) {
		t.Fatalf("Get from a new keyring = %v, want ErrNoSecret", err)
	}
	first := api.Secret("dg-first-" + marker)
	second := api.Secret("dg-second-" + marker)
	for _, key := range []api.Secret{first, second} { // the second replaces the first
		if err := k.Set(key); err != nil {
			t.Fatalf("Set: %v", err)
		}
		got, err := k.Get()
		if err != nil || got != key {
			t.Fatalf("Get = %q, %v; want the key just set", got.Reveal(), err)
		}
		if got, err := secretToolLookup(t); err != nil || got != key.Reveal() {
			t.Fatalf("secret-tool lookup = %q, %v; want the key just set", got, err)
		}
	}

	f := NewFallback(k)
	if got, err := f.Get(); err != nil || got != second || !f.Persistent() {
		t.Fatalf("Fallback over the keyring: %q, %v, persistent %v", got.Reveal(), err, f.Persistent())
	}
	if err := f.Delete(); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := k.Get(); !errors.Is(err, ErrNoSecret) {
		t.Fatalf("Get after Delete = %v, want ErrNoSecret", err)
	}
	if got, err := secretToolLookup(t); err == nil || got != "" {
		t.Fatalf("secret-tool still finds %q after Delete", got)
	}
	if err := k.Delete(); !errors.Is(err, ErrNoSecret) {
		t.Fatalf("second Delete = %v, want ErrNoSecret", err)
	}
	if !f.Persistent() {
		t.Fatal("Fallback left the keyring although it answered")
	}
}

func secretToolLookup(t *testing.T) (string, error) {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "secret-tool", "lookup", "service", KeyringService, "username", KeyringUser).Output()
	return string(out), err
}

// TestKeyringWithoutSecretService runs the real keyring in a child whose
// session bus address leads nowhere, as on a machine without a Secret
// Service, and checks that the errors are classified and that Fallback
// keeps the key in memory.
func TestKeyringWithoutSecretService(t *testing.T) {
	switch os.Getenv(childEnv) {
	case childNoBus:
		noBusChild(t)
		return
	case "":
	default:
		t.Skip("a child run for another test")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestKeyringWithoutSecretService$", "-test.v", "-test.count=1")
	marker := newMarker(t)
	cmd.Env = childEnvironment(dir, marker, childNoBus)
	out, err := cmd.CombinedOutput()
	// Without a bus no daemon may be started for the keyring (godbus's
	// dbus-launch left one behind at every call).
	checkNoDaemonsLeft(t, marker)
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("--- PASS: TestKeyringWithoutSecretService")) {
		t.Fatalf("the child did not run the test:\n%s", out)
	}
}

func noBusChild(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ name, address string }{
		{"no socket", "unix:path=" + filepath.Join(dir, "no-such-bus")},
		{"malformed address", "not-a-bus-address"},
		{"no address", ""}, // Keyring calls nothing: godbus would run dbus-launch
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DBUS_SESSION_BUS_ADDRESS", tt.address)
			var k Keyring
			if _, err := k.Get(); !errors.Is(err, ErrSecretServiceUnavailable) {
				t.Fatalf("Get = %v, want ErrSecretServiceUnavailable", err)
			}
			if err := k.Set("dg-key"); !errors.Is(err, ErrSecretServiceUnavailable) {
				t.Fatalf("Set = %v, want ErrSecretServiceUnavailable", err)
			}
			f := NewFallback(k)
			if err := f.Set("dg-session-key"); err != nil {
				t.Fatalf("Fallback.Set = %v, want the key kept in memory", err)
			}
			if f.Persistent() || !errors.Is(f.Unavailable(), ErrSecretServiceUnavailable) {
				t.Fatalf("Persistent = %v, Unavailable = %v", f.Persistent(), f.Unavailable())
			}
			if got, err := f.Get(); err != nil || got != "dg-session-key" {
				t.Fatalf("Fallback.Get = %q, %v", got.Reveal(), err)
			}
		})
	}
}

// childEnvironment is the parent's environment without any session bus
// or display, so nothing reaches the user's own keyring or shows a prompt.
func childEnvironment(dir, marker, child string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY", "GNOME_KEYRING_CONTROL",
			"SSH_AUTH_SOCK", "HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR",
			childEnv, markerEnv:
			continue
		}
		env = append(env, kv)
	}
	runtimeDir := filepath.Join(dir, "run")
	_ = os.Mkdir(runtimeDir, 0o700)
	return append(env,
		childEnv+"="+child, markerEnv+"="+marker,
		"HOME="+dir,
		"XDG_DATA_HOME="+filepath.Join(dir, "data"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
		"XDG_RUNTIME_DIR="+runtimeDir,
	)
}

func newMarker(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// markedDaemons returns the pids of D-Bus and keyring daemons whose
// environment carries this run's marker.
func markedDaemons(t *testing.T, marker string) []int {
	t.Helper()
	want := []byte(markerEnv + "=" + marker + "\x00")
	var pids []int
	for _, args := range [][]string{{"-x", "dbus-daemon"}, {"-f", "gnome-keyring-daemon"}} {
		out, err := exec.CommandContext(t.Context(), "pgrep", args...).Output()
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 1 {
			continue // none at all
		}
		if err != nil {
			t.Fatalf("pgrep %v: %v", args, err)
		}
		for _, f := range strings.Fields(string(out)) {
			pid, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("pgrep printed %q", f)
			}
			env, err := os.ReadFile(filepath.Join("/proc", f, "environ"))
			if err != nil {
				continue // gone meanwhile, or not ours to read
			}
			if bytes.Contains(append([]byte{0}, env...), append([]byte{0}, want...)) {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// checkNoDaemonsLeft fails the test if a daemon of this run outlives it,
// and then ends it by its pid.
func checkNoDaemonsLeft(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second) // the keyring daemon leaves once its bus is gone
	for {
		pids := markedDaemons(t, marker)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("daemons %v outlived dbus-run-session; ending them", pids)
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGTERM)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
