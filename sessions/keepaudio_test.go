package sessions_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// Tests of the audio kept with transcriptions (keepaudio.go): it lines up
// with the captions, muted stretches included, and is kept only when the
// settings ask.

// localWorkspace is a workspace over db on the local engine, with
// settings edited by edit.
func localWorkspace(t *testing.T, db *store.DB, edit func(*store.Settings)) (*sessions.Workspace, *api.Client) {
	t.Helper()
	eng := localEngine(t)
	ws, err := sessions.NewWorkspace(sessions.WorkspaceConfig{
		History: db, Keys: sessions.NewKeys(&store.Memory{}, nil),
		Local: func() (api.Endpoint, api.Secret, error) { return eng.Endpoint(), eng.Key, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	s := store.DefaultSettings()
	s.Backend = store.BackendLocal
	if edit != nil {
		edit(&s)
	}
	if err := ws.SaveSettings(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	return ws, newClient(t, eng.Endpoint(), eng.Key)
}

// correlation is the normalised correlation of a and b[lag:], over n
// samples from from.
func correlation(a, b []int16, from, n, lag int) float64 {
	var ab, aa, bb float64
	for i := from; i < from+n; i++ {
		j := i + lag
		if i < 0 || i >= len(a) || j < 0 || j >= len(b) {
			continue
		}
		x, y := float64(a[i]), float64(b[j])
		ab += x * y
		aa += x * x
		bb += y * y
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// TestCaptionsKeptAudioAligned (must show): a captions session of a real
// reading, on the local engine, keeps Opus audio as long as the session,
// lined up with the original to the sample, and the audio kept between a
// caption's start and end, transcribed again, says that caption's words.
func TestCaptionsKeptAudioAligned(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 3*time.Minute)
	db := openDB(t)
	ws, client := localWorkspace(t, db, nil)
	var pcm []int16
	for _, id := range []string{"0870", "0880"} {
		pcm = append(pcm, loadPCM(t, librivoxPath(id))...)
		pcm = append(pcm, make([]int16, 8000)...)
	}
	c := replayCaptions(t, ctx, ws, pcm)
	var finals []sessions.Caption
	for ev := range c.Events() {
		switch ev := ev.(type) {
		case *sessions.FinalEvent:
			finals = append(finals, ev.Caption)
		case *sessions.SaveFailedEvent:
			t.Errorf("not saved: %v", ev)
		}
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	sess, err := db.Session(ctx, c.SessionID())
	if err != nil {
		t.Fatal(err)
	}
	saved, err := db.Audio(ctx, c.SessionID())
	if err != nil {
		t.Fatalf("no audio kept: %v", err)
	}
	if saved.ContentType != "audio/ogg" || saved.Encoding != "opus" {
		t.Errorf("kept as %s, %s; want audio/ogg, opus", saved.ContentType, saved.Encoding)
	}
	kept, err := ws.SessionAudio(ctx, c.SessionID())
	if err != nil {
		t.Fatal(err)
	}
	keptPCM, err := kept.Samples(ctx)
	if err != nil {
		t.Fatal(err)
	}
	length := kept.Duration().Seconds()
	if math.Abs(length-sess.Duration) > 0.1 || math.Abs(length-float64(len(pcm))/16000) > 0.1 {
		t.Errorf("kept %.3f s of a session of %.3f s (%.3f s sent)", length, sess.Duration, float64(len(pcm))/16000)
	}
	// Sample by sample: the kept audio matches the original best with no
	// shift, and closely.
	best, bestLag := -1.0, 0
	for lag := -160; lag <= 160; lag++ {
		if r := correlation(pcm, keptPCM, 16000, 5*16000, lag); r > best {
			best, bestLag = r, lag
		}
	}
	t.Logf("%d bytes of Opus for %.2f s; the kept audio matches the original at %.3f, shifted %d samples", len(saved.Data), length, best, bestLag)
	if bestLag < -16 || bestLag > 16 || best < 0.8 {
		t.Errorf("the kept audio matches the original at %.3f shifted %d samples; want at least 0.8 within 1 ms", best, bestLag)
	}
	// Caption by caption: what the kept audio says between a caption's
	// times is that caption, and not the other one. (The recogniser
	// hears a slice cut from its context a little differently, so the
	// words need not all agree.)
	var caps []sessions.Caption
	for _, f := range finals {
		if len(f.Words) >= 4 && len(caps) < 2 {
			caps = append(caps, f)
		}
	}
	if len(caps) < 2 {
		t.Fatalf("fewer than two captions of four words or more in %d finals", len(finals))
	}
	for i, f := range caps {
		from, to := int((f.Start-0.2)*16000), int((f.End+0.3)*16000)
		from, to = max(from, 0), min(to, len(keptPCM))
		var wav bytes.Buffer
		if err := audio.EncodeWAV(&wav, keptPCM[from:to], 16000, 1); err != nil {
			t.Fatal(err)
		}
		resp, err := client.Transcribe(ctx, &wav, "audio/wav", api.ListenOptions{Model: "nova-3"})
		if err != nil {
			t.Fatal(err)
		}
		again := resp.Transcript()
		own, other := testkit.WordOverlap(again, f.Text), testkit.WordOverlap(again, caps[1-i].Text)
		t.Logf("%.2f-%.2f s: caption %q; the kept audio there says %q (overlap %.2f, with the other caption %.2f)", f.Start, f.End, f.Text, again, own, other)
		if own < 0.4 || own <= other {
			t.Errorf("the kept audio from %.2f to %.2f s says %q: overlap %.2f with its caption %q, %.2f with the other", f.Start, f.End, again, own, f.Text, other)
		}
	}
}

// TestCaptionsKeptAudioMuted: a muted stretch is kept as silence, as
// long as it lasted, so what follows stays on the captions' clock.
func TestCaptionsKeptAudioMuted(t *testing.T) {
	db := openDB(t)
	ctx := testContext(t, time.Minute)
	f := newFakeStreamer()
	src := newPushSource(mono16k)
	// The fake clock moves only when the test says: the session reports
	// the level of the first audio it takes after a move, and so says
	// when it has taken the muted audio.
	clk := clock.NewFake(time.Now())
	c := sessions.NewCaptions(sessions.CaptionsConfig{
		Streamer: f, Source: src, Options: streamOpts, History: db, KeepAudio: true, Clock: clk,
	})
	rec := record(c, nil)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	rec.waitState(t, "live", isState(sessions.StateLive))
	st := f.stream(t, 0)
	tone := func(n int, amp float64) []int16 {
		out := make([]int16, n)
		for i := range out {
			out[i] = int16(amp * math.Sin(2*math.Pi*440*float64(i)/16000))
		}
		return out
	}
	loud := func(n int) []int16 { return tone(n, 8000) }
	const before, muted, after = 16000, 12000, 8000
	src.push(loud(before), 320)
	eventually(t, "the audio before the mute sent", func() bool { return st.receivedLen() >= 2*before })
	c.SetMuted(true)
	rec.waitState(t, "muted", isState(sessions.StateMuted))
	// Heard while muted, louder than the rest: neither sent nor kept.
	clk.Advance(time.Second)
	src.push(tone(muted, 24000), muted)
	rec.until(t, "the muted audio taken", func(evs []sessions.Event) bool {
		for _, ev := range evs {
			if l, ok := ev.(*sessions.LevelEvent); ok && l.Peak > -4 {
				return true
			}
		}
		return false
	})
	c.SetMuted(false)
	eventually(t, "live again", func() bool {
		s := rec.states()
		return s[len(s)-1].State == sessions.StateLive
	})
	src.push(loud(after), 320)
	src.finish() // the session reads every frame, then ends
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("the session did not end with its source")
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	rec.wait(t)
	silent := before + muted + after - st.receivedLen()/2
	if silent != muted {
		t.Fatalf("%d samples not sent, of %d heard while muted", silent, muted)
	}
	a, err := db.Audio(ctx, c.SessionID())
	if err != nil {
		t.Fatal(err)
	}
	b, err := audio.Decode(ctx, bytes.NewReader(a.Data))
	if err != nil {
		t.Fatal(err)
	}
	pcm, err := audio.To16kMono(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := len(pcm) - (before + muted + after); d < -16 || d > 16 {
		t.Errorf("kept %d samples, want %d: the mute's length is lost", len(pcm), before+muted+after)
	}
	level := func(from, to int) float64 {
		var sum float64
		for _, v := range pcm[from:min(to, len(pcm))] {
			sum += float64(v) * float64(v)
		}
		return math.Sqrt(sum/float64(to-from)) / 32768
	}
	const margin = 480 // 30 ms each side of a change
	if l := level(margin, before-margin); l < 0.1 {
		t.Errorf("before the mute: level %.3f, want the tone", l)
	}
	if l := level(before+margin, before+muted-margin); l > 0.005 {
		t.Errorf("while muted: level %.3f, want silence", l)
	}
	if l := level(before+silent+margin, before+muted+after-margin); l < 0.1 {
		t.Errorf("after the mute: level %.3f, want the tone where the captions' clock has it", l)
	}
}

// TestFileKeepsAudio: a file transcribed keeps its audio, as long as the
// file, unless the settings say not to.
func TestFileKeepsAudio(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	path := librivoxPath("0890")
	want := float64(len(loadPCM(t, path))) / 16000
	for _, keep := range []bool{true, false} {
		db := openDB(t)
		ws, _ := localWorkspace(t, db, func(s *store.Settings) { s.KeepAudio = keep })
		res, err := ws.TranscribeFile(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		kept, err := ws.SessionAudio(ctx, res.SessionID)
		if !keep {
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("KeepAudio off: SessionAudio = %v, want ErrNotFound", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := kept.Duration().Seconds(); math.Abs(got-want) > 0.1 {
			t.Errorf("kept %.3f s of a file of %.3f s", got, want)
		}
	}
}

// TestCaptionsKeepAudioOff: with the setting off, a captions session
// keeps its text and no audio.
func TestCaptionsKeepAudioOff(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	db := openDB(t)
	ws, _ := localWorkspace(t, db, func(s *store.Settings) { s.KeepAudio = false })
	c := replayCaptions(t, ctx, ws, loadPCM(t, librivoxPath("0870")))
	finals := 0
	for ev := range c.Events() {
		if _, ok := ev.(*sessions.FinalEvent); ok {
			finals++
		}
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if finals == 0 {
		t.Fatal("no captions")
	}
	if _, err := db.Audio(ctx, c.SessionID()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("KeepAudio off: Audio = %v, want ErrNotFound", err)
	}
}

// TestKeptAudioWhenEndedAnyway: the audio is kept however a session
// ends: a conversation stopped, a captions session cancelled, a captions
// session whose service refused it midway.
func TestKeptAudioWhenEndedAnyway(t *testing.T) {
	const n = 24000 // 1.5 s
	speech := make([]int16, n)
	for i := range speech {
		speech[i] = int16(6000 * math.Sin(2*math.Pi*300*float64(i)/16000))
	}
	check := func(t *testing.T, ws *sessions.Workspace, db *store.DB, id int64, status string) {
		t.Helper()
		sess, err := db.Session(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if sess.Status != status {
			t.Errorf("the session is %s, want %s", sess.Status, status)
		}
		kept, err := ws.SessionAudio(t.Context(), id)
		if err != nil {
			t.Fatalf("a session that was %s kept no audio: %v", status, err)
		}
		if got := kept.Duration().Seconds(); math.Abs(got-1.5) > 0.1 || math.Abs(got-sess.Duration) > 0.1 {
			t.Errorf("kept %.3f s of a %.3f s session that heard 1.5 s", got, sess.Duration)
		}
	}
	workspace := func(t *testing.T, db *store.DB) *sessions.Workspace {
		ws, err := sessions.NewWorkspace(sessions.WorkspaceConfig{History: db, Keys: sessions.NewKeys(&store.Memory{}, nil)})
		if err != nil {
			t.Fatal(err)
		}
		return ws
	}

	t.Run("conversation stopped", func(t *testing.T) {
		db := openDB(t)
		svc := &fakeTurns{}
		src := newPushSource(mono16k)
		c := sessions.NewConversation(sessions.ConversationConfig{
			Streamer: svc, Source: src, History: db, OwnsSource: true, Tail: -1, KeepAudio: true,
		})
		if err := c.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		rec := recordConv(c)
		src.push(speech, 320)
		waitAudio(t, svc.stream(t), 2*n)
		if err := c.Stop(); err != nil {
			t.Fatal(err)
		}
		rec.wait(t)
		check(t, workspace(t, db), db, c.SessionID(), store.StatusDone)
	})

	t.Run("captions cancelled", func(t *testing.T) {
		db := openDB(t)
		f := newFakeStreamer()
		src := newPushSource(mono16k)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		c := sessions.NewCaptions(sessions.CaptionsConfig{Streamer: f, Source: src, Options: streamOpts, History: db, KeepAudio: true})
		rec := record(c, nil)
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		src.push(speech, 320)
		st := f.stream(t, 0)
		eventually(t, "the audio sent", func() bool { return st.receivedLen() >= 2*n })
		cancel()
		<-c.Done()
		rec.wait(t)
		check(t, workspace(t, db), db, c.SessionID(), store.StatusCancelled)
	})

	t.Run("captions refused", func(t *testing.T) {
		db := openDB(t)
		f := newFakeStreamer()
		src := newPushSource(mono16k)
		c := sessions.NewCaptions(sessions.CaptionsConfig{Streamer: f, Source: src, Options: streamOpts, History: db, KeepAudio: true})
		rec := record(c, nil)
		if err := c.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		defer c.Stop()
		src.push(speech, 320)
		st := f.stream(t, 0)
		eventually(t, "the audio sent", func() bool { return st.receivedLen() >= 2*n })
		st.end(&api.Error{Status: 401, Code: "INVALID_AUTH", Message: "the key was revoked"})
		<-c.Done()
		rec.wait(t)
		check(t, workspace(t, db), db, c.SessionID(), store.StatusFailed)
	})
}

// TestCaptionsKeptAudioMeeting: a meeting heard both ways keeps both
// channels, each side on its own.
func TestCaptionsKeptAudioMeeting(t *testing.T) {
	db := openDB(t)
	ctx := testContext(t, time.Minute)
	f := newFakeStreamer()
	src := newPushSource(audio.Format{Encoding: audio.EncodingLinear16, SampleRate: 16000, Channels: 2})
	c := sessions.NewCaptions(sessions.CaptionsConfig{
		Streamer: f, Source: src, Options: streamOpts, History: db, KeepAudio: true,
		Sides: []string{sessions.SideYou, sessions.SideOthers},
	})
	rec := record(c, nil)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	const n = 16000
	pcm := make([]int16, 2*2*n) // you speak for a second, then the others
	for i := range 2 * n {
		v := int16(8000 * math.Sin(2*math.Pi*440*float64(i)/16000))
		pcm[2*i+i/n] = v
	}
	src.push(pcm, 320)
	src.finish()
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("the session did not end with its source")
	}
	rec.wait(t)
	a, err := db.Audio(ctx, c.SessionID())
	if err != nil {
		t.Fatal(err)
	}
	b, err := audio.Decode(ctx, bytes.NewReader(a.Data))
	if err != nil {
		t.Fatal(err)
	}
	if b.Channels != 2 || b.Frames() != 2*n*3 {
		t.Fatalf("kept %d channels of %d frames at %d Hz, want 2 of %d at 48000", b.Channels, b.Frames(), b.SampleRate, 2*n*3)
	}
	level := func(ch, from, to int) float64 {
		var sum float64
		for i := from; i < to; i++ {
			v := float64(b.Samples[2*i+ch])
			sum += v * v
		}
		return math.Sqrt(sum / float64(to-from))
	}
	const m = 48000 / 20 // 50 ms away from the change
	for _, tc := range []struct {
		what     string
		ch       int
		from, to int
		loud     bool
	}{
		{"you, speaking", 0, m, 3*n - m, true},
		{"the others, listening", 1, m, 3*n - m, false},
		{"you, listening", 0, 3*n + m, 6*n - m, false},
		{"the others, speaking", 1, 3*n + m, 6*n - m, true},
	} {
		l := level(tc.ch, tc.from, tc.to)
		if tc.loud && l < 0.1 || !tc.loud && l > 0.02 {
			t.Errorf("%s: level %.3f", tc.what, l)
		}
	}
	kept, err := (func() (*sessions.KeptAudio, error) {
		ws, err := sessions.NewWorkspace(sessions.WorkspaceConfig{History: db, Keys: sessions.NewKeys(&store.Memory{}, nil)})
		if err != nil {
			return nil, err
		}
		return ws.SessionAudio(ctx, c.SessionID())
	})()
	if err != nil {
		t.Fatal(err)
	}
	keptPCM, err := kept.Samples(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := len(keptPCM) - 2*n; d < -16 || d > 16 {
		t.Errorf("played back as %d samples, want %d: both sides mixed", len(keptPCM), 2*n)
	}
}
