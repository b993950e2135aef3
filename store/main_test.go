package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/zalando/go-keyring"
)

// childEnv is set in a test binary that a test started again, to run one
// test against the real keyring (see secretservice_test.go).
const childEnv = "EARSHOT_STORE_TEST_CHILD"

// TestMain replaces the keyring with go-keyring's in-memory mock for the
// whole process, except when this binary was started again to talk to a
// real Secret Service (see secretservice_test.go).
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "" {
		keyring.MockInit()
	}
	os.Exit(m.Run())
}

// openTest opens a fresh database in a temporary directory and closes it
// when the test ends.
func openTest(t testing.TB) *DB {
	t.Helper()
	d, err := Open(t.Context(), filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	return d
}

// newSession creates a running captions session.
func newSession(t testing.TB, d *DB, title string) int64 {
	t.Helper()
	id, err := d.CreateSession(context.Background(), Session{Kind: KindCaptions, Title: title, Source: "Built-in microphone",
		Backend: "Local engine", Model: "nova-3", Options: `{"model":["nova-3"]}`})
	if err != nil {
		t.Fatal(err)
	}
	return id
}
