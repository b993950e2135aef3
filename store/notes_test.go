package store

import (
	"errors"
	"testing"
)

// TestNotesSavedWithTheirSession keeps a session's notes, replaces them
// when saved again, refuses what is not JSON or has no session, and
// deletes them with their session.
func TestNotesSavedWithTheirSession(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	id, err := d.CreateSession(ctx, Session{Kind: KindCaptions, Title: "Standup"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Notes(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("notes of a session without any: %v, want ErrNotFound", err)
	}
	if err := d.SaveNotes(ctx, id, []byte(`{"summary":"first"}`)); err != nil {
		t.Fatal(err)
	}
	if err := d.SaveNotes(ctx, id, []byte(`{"summary":"second"}`)); err != nil {
		t.Fatal(err)
	}
	if b, err := d.Notes(ctx, id); err != nil || string(b) != `{"summary":"second"}` {
		t.Errorf("notes = %s, %v; want the second saved", b, err)
	}
	if err := d.SaveNotes(ctx, id, []byte("not json")); !errors.Is(err, ErrInvalid) {
		t.Errorf("notes that are not JSON: %v, want ErrInvalid", err)
	}
	if err := d.SaveNotes(ctx, id+100, []byte(`{}`)); !errors.Is(err, ErrNotFound) {
		t.Errorf("notes of no session: %v, want ErrNotFound", err)
	}
	if err := d.DeleteSession(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Notes(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Errorf("notes of a deleted session: %v, want ErrNotFound", err)
	}
	var n int
	if err := d.r.QueryRowContext(ctx, `SELECT count(*) FROM notes`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d rows of notes left (%v)", n, err)
	}
}
