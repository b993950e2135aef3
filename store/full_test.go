//go:build linux

package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/earshot-app/earshot/internal/fulldisk"
)

func TestMarkDiskFull(t *testing.T) {
	enospc := &fs.PathError{Op: "write", Path: "/x/out.wav", Err: syscall.ENOSPC}
	for _, tc := range []struct {
		name string
		err  error
		full bool
	}{
		{"ENOSPC of a file", fmt.Errorf("save out.wav: %w", enospc), true},
		{"quota", &fs.PathError{Op: "write", Path: "/x", Err: syscall.EDQUOT}, true},
		{"marked twice", MarkDiskFull(MarkDiskFull(enospc)), true},
		{"permission", &fs.PathError{Op: "open", Path: "/x", Err: syscall.EACCES}, false},
		{"not found", ErrNotFound, false},
		{"plain", errors.New("no space left, says the text only"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := MarkDiskFull(tc.err)
			if errors.Is(got, ErrDiskFull) != tc.full {
				t.Fatalf("errors.Is(MarkDiskFull(%v), ErrDiskFull) = %v, want %v", tc.err, !tc.full, tc.full)
			}
			if got.Error() != tc.err.Error() {
				t.Errorf("the text changed: %q, was %q", got, tc.err)
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("the mark hides the error it marks")
			}
		})
	}
	if MarkDiskFull(nil) != nil {
		t.Error("MarkDiskFull(nil) is not nil")
	}
}

// TestWritesOnFullDisk fills a 2 MB tmpfs under the database: every kind
// of write fails as ErrDiskFull, and succeeds once there is room again.
func TestWritesOnFullDisk(t *testing.T) {
	disk := fulldisk.Mount(t, 2<<20)
	ctx := t.Context()
	d, err := Open(ctx, disk.Path("history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	id := newSession(t, d, "Before the disk filled")

	writes := []struct {
		name  string
		write func(ctx context.Context) error
	}{
		{"create", func(ctx context.Context) error {
			_, err := d.CreateSession(ctx, Session{Kind: KindFile, Title: "meeting.wav"})
			return err
		}},
		{"segment", func(ctx context.Context) error {
			_, err := d.AddSegment(ctx, Segment{SessionID: id, Seq: 1, Text: strings.Repeat("words ", 50)})
			return err
		}},
		{"response", func(ctx context.Context) error {
			return d.SaveResponse(ctx, id, []byte(`{"ok":true}`), strings.Repeat("transcript ", 100))
		}},
		{"audio", func(ctx context.Context) error {
			return d.SaveAudio(ctx, id, Audio{ContentType: "audio/ogg", Encoding: "opus", Data: make([]byte, 64<<10)})
		}},
		{"notes", func(ctx context.Context) error {
			return d.SaveNotes(ctx, id, []byte(`{"summary":"`+strings.Repeat("s", 8000)+`"}`))
		}},
		{"wire", func(ctx context.Context) error {
			_, err := d.AddWireEvents(ctx, id, []WireEvent{{Time: time.Now(), Kind: "text", Text: strings.Repeat("x", 8000)}})
			return err
		}},
		{"settings", func(ctx context.Context) error {
			s := DefaultSettings()
			s.InputDevice = strings.Repeat("m", 8000)
			return d.SaveSettings(ctx, s)
		}},
		{"finish", func(ctx context.Context) error {
			return d.FinishSession(ctx, id, time.Now(), 12, StatusDone, "")
		}},
		{"rename", func(ctx context.Context) error { return d.RenameSession(ctx, id, strings.Repeat("t", 8000)) }},
	}
	disk.Fill()
	for _, w := range writes {
		err := w.write(ctx)
		if !errors.Is(err, ErrDiskFull) {
			t.Errorf("%s on a full disk: %v, not ErrDiskFull", w.name, err)
		}
	}
	disk.Release()
	for _, w := range writes {
		if err := w.write(ctx); err != nil {
			t.Errorf("%s once there is room: %v", w.name, err)
		}
	}
	s, err := d.Session(ctx, id)
	if err != nil || s.Status != StatusDone || s.Segments != 1 {
		t.Fatalf("the session after the disk had room again: %+v, %v", s, err)
	}
	// The file's own bytes are still free of the filler's.
	if _, err := os.Stat(disk.Path("history.db")); err != nil {
		t.Fatal(err)
	}
}

// TestOpenOnFullDisk: a history that cannot be opened because the disk
// is full says so (ErrDiskFull), whether the file is new or was there,
// and OpenOrRecover keeps one in memory for the session, saying why;
// once there is room, it opens on disk again.
func TestOpenOnFullDisk(t *testing.T) {
	disk := fulldisk.Mount(t, 2<<20)
	ctx := t.Context()
	d, err := Open(ctx, disk.Path("old/history.db"))
	if err != nil {
		t.Fatal(err)
	}
	newSession(t, d, "Before the disk filled")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	disk.Fill()
	for _, name := range []string{"new/history.db", "history.db", "old/history.db"} {
		t.Run(name, func(t *testing.T) {
			if d, err := Open(ctx, disk.Path(name)); !errors.Is(err, ErrDiskFull) {
				if d != nil {
					_ = d.Close()
				}
				t.Errorf("Open on a full disk: %v, not ErrDiskFull", err)
			}
			m, err := OpenOrRecover(ctx, disk.Path(name))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if rec := m.Recovery(); !m.InMemory() || rec == nil || !errors.Is(rec.Off, ErrDiskFull) {
				t.Errorf("OpenOrRecover on a full disk: in memory %v, %v", m.InMemory(), rec)
			}
		})
	}
	disk.Release()
	m, err := OpenOrRecover(ctx, disk.Path("old/history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if list, err := m.Sessions(ctx, Filter{}); m.InMemory() || err != nil || len(list) != 1 {
		t.Errorf("once there is room: in memory %v, %d sessions, %v", m.InMemory(), len(list), err)
	}
}
