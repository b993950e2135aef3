package sessions_test

import (
	"context"
	"testing"
	"time"

	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// TestHistoryInMemoryNotKept: with history kept in memory for the
// session (nowhere to write it, store.OpenMemory), a file transcription,
// its re-run, a synthesis and an analysis each end with a final
// HistoryEvent, and a result, that say they are written but in memory
// only: never kept, the one word a view may take for "kept in history".
func TestHistoryInMemoryNotKept(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 3*time.Minute) // four sessions on the local engine, on a loaded machine
	db, err := store.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ws := agentWorkspace(t, db)
	t.Cleanup(func() { _ = ws.Close() })

	forSession := func(t *testing.T, what string, k sessions.Keeping) {
		t.Helper()
		if !k.Written() || !k.InMemory || k.Kept() || k.Err != nil {
			t.Errorf("%s: %+v; want written, in memory, not kept", what, k)
		}
	}
	final := func(t *testing.T, evs []sessions.Event) sessions.Keeping {
		t.Helper()
		last := lastHistory(evs)
		if last == nil || !last.Final {
			t.Fatalf("no final HistoryEvent among %s", describeEvents(evs))
		}
		return last.Keeping
	}
	var fileID int64
	t.Run("file", func(t *testing.T) {
		s, err := ws.StartFileTranscription(ctx, librivoxPath("0880"))
		if err != nil {
			t.Fatal(err)
		}
		evs := untilClosed(s.Events())
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		forSession(t, "the final HistoryEvent", final(t, evs))
		for _, ev := range evs {
			if d, ok := ev.(*sessions.FileDoneEvent); ok {
				forSession(t, "the result", d.Result.History)
				fileID = d.Result.SessionID
			}
		}
	})

	t.Run("rerun", func(t *testing.T) {
		if fileID == 0 {
			t.Skip("no transcription to run again")
		}
		res, err := ws.Rerun(ctx, fileID, sessions.RerunOptions{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		forSession(t, "the re-run", res.History)
	})

	t.Run("synthesis", func(t *testing.T) {
		_, evs := synthesizeSilently(t, ctx, ws, "History is off, and this is spoken all the same.")
		forSession(t, "the final HistoryEvent", final(t, evs))
	})

	t.Run("analysis", func(t *testing.T) {
		res, err := ws.Analyze(ctx, sessions.AnalysisInput{Text: "The budget is due on Friday. The team agreed to cut travel costs."}, sessions.Features{Summary: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		forSession(t, "the analysis", res.History)
	})
}

// untilClosed reads a session's events until the channel closes. Unlike
// allEvents, which gives up after 30 s (for sessions on a fake service),
// it waits as long as the session runs on the local engine: bounded by
// the context the test started it with.
func untilClosed(ch <-chan sessions.Event) []sessions.Event {
	var out []sessions.Event
	for ev := range ch {
		out = append(out, ev)
	}
	return out
}

// synthesizeSilently speaks text with the local engine's voice, not
// played, and returns the synthesis once it has ended, with its events.
func synthesizeSilently(t *testing.T, ctx context.Context, ws *sessions.Workspace, text string) (*sessions.Synthesis, []sessions.Event) {
	t.Helper()
	v, err := ws.Voices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := v.Synthesize(ctx, sessions.SynthesisRequest{Text: text, Voice: "flux-kit-en", Silent: true})
	if err != nil {
		t.Fatal(err)
	}
	evs := untilClosed(s.Events())
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	return s, evs
}
