//go:build linux

package sessions_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/fulldisk"
	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// TestFullDiskEndToEnd (must show): with the history on a 2 MB tmpfs
// filled to the last byte, a file transcription, a re-run, a synthesis,
// an analysis, an agent's turn and a conversation on the local engine
// each still give their result, and none is said to be kept: each ends
// with a final HistoryEvent (the re-run, its error) that names the full
// disk. Live captions go on meanwhile, say they wait, and are all in
// history, in order, once space is freed; notes of them written once the
// disk is full again are given, and said not to be saved.
func TestFullDiskEndToEnd(t *testing.T) {
	t.Parallel()
	disk := fulldisk.Mount(t, 2<<20)
	ctx := testContext(t, 6*time.Minute) // eight sessions on the local engine, on a loaded machine
	db, err := store.Open(ctx, disk.Path("history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ws := agentWorkspace(t, db)
	t.Cleanup(func() { _ = ws.Close() })
	orig, err := ws.TranscribeFile(ctx, librivoxPath("0880"), nil) // to run again once the disk is full
	if err != nil {
		t.Fatal(err)
	}
	disk.Fill()

	// notKept checks a session's last HistoryEvent: final, not kept, for
	// a full disk, with what was lost named as want.
	notKept := func(t *testing.T, evs []sessions.Event, want string) {
		t.Helper()
		last := lastHistory(evs)
		if last == nil || !last.Final {
			t.Fatalf("no final HistoryEvent among %s", describeEvents(evs))
		}
		var sf *sessions.SaveFailedEvent
		if last.Kept() || last.ID != 0 || !errors.As(last.Err, &sf) || !errors.Is(sf, store.ErrDiskFull) || sf.What != want {
			t.Errorf("the final HistoryEvent %+v (%v); want %s not kept for a full disk", last.Keeping, last.Err, want)
		}
	}

	t.Run("file", func(t *testing.T) {
		s, err := ws.StartFileTranscription(ctx, librivoxPath("0870"))
		if err != nil {
			t.Fatalf("a file transcription on a full disk did not start: %v", err)
		}
		evs := untilClosed(s.Events())
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		var res *sessions.FileResult
		for _, ev := range evs {
			if d, ok := ev.(*sessions.FileDoneEvent); ok {
				res = d.Result
			}
		}
		if res == nil || len(strings.Fields(res.Response.Transcript())) < 5 {
			t.Fatalf("no transcript: %+v", res)
		}
		notKept(t, evs, "the transcript")
	})

	t.Run("rerun", func(t *testing.T) {
		res, err := ws.Rerun(ctx, orig.SessionID, sessions.RerunOptions{}, nil)
		var sf *sessions.SaveFailedEvent
		if res == nil || len(strings.Fields(res.New.Transcript)) < 5 || res.New.SessionID != 0 {
			t.Fatalf("the re-run: %+v, %v", res, err)
		}
		if !errors.As(err, &sf) || !errors.Is(err, store.ErrDiskFull) || sf.What != "the transcript" {
			t.Errorf("the re-run's error %v; want the transcript not saved for a full disk", err)
		}
	})

	t.Run("synthesis", func(t *testing.T) {
		s, evs := synthesizeSilently(t, ctx, ws, "The disk is full, and this is still spoken.")
		if res := s.Result(); res.Duration() < time.Second || res.SessionID != 0 {
			t.Errorf("the synthesis: %.1f s of audio, entry %d", res.Duration().Seconds(), res.SessionID)
		}
		notKept(t, evs, "the synthesis")
	})

	t.Run("analysis", func(t *testing.T) {
		text := "The quarterly budget is due on Friday. The team agreed to cut travel costs and to hire two engineers. Everyone was pleased with the plan."
		s, err := ws.StartAnalysis(ctx, sessions.AnalysisInput{Text: text}, sessions.Features{Summary: true, Topics: true})
		if err != nil {
			t.Fatalf("an analysis on a full disk did not start: %v", err)
		}
		evs := untilClosed(s.Events())
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		var res *sessions.AnalysisResult
		for _, ev := range evs {
			if d, ok := ev.(*sessions.AnalysisDoneEvent); ok {
				res = d.Result
			}
		}
		if res == nil || res.Response == nil || res.Response.Results.Summary == nil {
			t.Fatalf("no analysis: %+v", res)
		}
		notKept(t, evs, "the analysis")
	})

	t.Run("agent", func(t *testing.T) {
		a, err := ws.StartAgent(ctx, sessions.AgentRequest{Text: true, Silent: true})
		if err != nil {
			t.Fatalf("an agent on a full disk did not start: %v", err)
		}
		ev := watchAgent(a)
		a.Say("what is two plus two")
		ev.waitFor(t, ctx, "the answer", assistantSaid("Two plus two is four."))
		if err := a.Stop(); err != nil {
			t.Fatal(err)
		}
		for e := range ev.ch {
			ev.seen = append(ev.seen, e)
		}
		notKept(t, ev.seen, "the conversation with the agent")
	})

	t.Run("conversation", func(t *testing.T) {
		pcm := append(loadPCM(t, librivoxPath("0870")), make([]int16, 16000)...)
		src, err := audio.NewReplay(mono16k, pcm, audio.ReplayConfig{Paced: true, Clock: testkit.FastClock{Origin: time.Now(), Factor: 4}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := ws.StartConversation(ctx, sessions.ConversationRequest{Source: src, SourceName: "a reading", Tail: 2 * time.Second})
		if err != nil {
			t.Fatalf("a conversation on a full disk did not start: %v", err)
		}
		evs := untilClosed(c.Events())
		if err := c.Stop(); err != nil {
			t.Fatal(err)
		}
		if len(c.Turns()) == 0 {
			t.Fatalf("no turn ended: %s", describeEvents(evs))
		}
		notKept(t, evs, "the conversation")
	})

	var meeting int64 // the live captions, in history once the disk had room
	t.Run("captions", func(t *testing.T) {
		src := newLiveSource(t)
		c, err := ws.StartCaptions(ctx, sessions.CaptionsRequest{Source: src, SourceName: "a reading"})
		if err != nil {
			t.Fatalf("captions on a full disk did not start: %v", err)
		}
		defer c.Stop()
		rec := record(c, nil)
		src.speak(loadPCM(t, librivoxPath("0870")))
		rec.waitFinals(t, 1)
		w := waitHistory(t, rec, "captions waiting for room", func(e *sessions.HistoryEvent) bool { return e.Waiting > 1 })
		if !diskFullWaiting(w.Err) || c.SessionID() != 0 {
			t.Errorf("while the disk is full: %+v (%v), entry %d", w.Keeping, w.Err, c.SessionID())
		}
		disk.Release()
		// The next final writes what waited, with itself; the retry on
		// the clock would too, five seconds on.
		src.speak(loadPCM(t, librivoxPath("0880")))
		waitHistory(t, rec, "the waiting captions written", func(e *sessions.HistoryEvent) bool { return e.Waiting == 0 && e.ID != 0 })
		eventually(t, "the reading spoken", src.spoken)
		if err := c.Stop(); err != nil {
			t.Fatal(err)
		}
		rec.wait(t)
		if last := lastHistory(rec.all()); last == nil || !last.Final || !last.Kept() {
			t.Fatalf("the last HistoryEvent %+v", last)
		}
		segs, err := db.Segments(ctx, c.SessionID())
		if err != nil {
			t.Fatal(err)
		}
		finals := rec.finals()
		var saved, shown []string
		for _, g := range segs {
			saved = append(saved, g.Text)
		}
		for _, f := range finals {
			shown = append(shown, f.Text)
		}
		if strings.Join(saved, "|") != strings.Join(shown, "|") || len(saved) < 2 {
			t.Errorf("history holds %q; the captions shown were %q", saved, shown)
		}
		s, err := db.Session(ctx, c.SessionID())
		if err != nil || s.Status != store.StatusDone || s.Kind != store.KindCaptions {
			t.Errorf("the entry %+v, %v", s, err)
		}
		meeting = s.ID
	})

	t.Run("meeting notes", func(t *testing.T) {
		if meeting == 0 {
			t.Skip("no meeting in history")
		}
		disk.Fill()
		n, err := ws.MeetingNotes(ctx, meeting, false, nil)
		if n.Summary == "" && len(n.Topics) == 0 {
			t.Fatalf("no notes: %+v, %v", n, err)
		}
		var sf *sessions.SaveFailedEvent
		if !errors.As(err, &sf) || !errors.Is(err, store.ErrDiskFull) || sf.What != "the meeting notes" || !sf.Plural {
			t.Errorf("the notes' error %v; want them not saved for a full disk", err)
		}
	})
}
