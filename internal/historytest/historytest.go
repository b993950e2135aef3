// Package historytest saves history entries for tests as the app's own
// sessions save them, so that tests of every layer start from the same
// records.
package historytest

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// Synthesis is a finished synthesis to save.
type Synthesis struct {
	// Session is the entry; its kind, source and model are the
	// synthesis's (Voice), the rest as given.
	Session store.Session
	Voice   string
	Details sessions.SynthesisDetails // Voice and SampleRate default to the synthesis's
	Text    string
	// Request is the request saved with the text; nil is the text and
	// the voice.
	Request map[string]any
	// PCM is its audio, mono at Details.SampleRate, saved as WAV; none
	// when empty.
	PCM []int16
	// Ended is when it ended; zero is a minute after it started.
	Ended time.Time
}

// SaveSynthesis saves s as the Voices tab and `earshot speak` do: the
// entry with its details, its request and text, and its audio.
func SaveSynthesis(t testing.TB, db *store.DB, s Synthesis) int64 {
	t.Helper()
	ctx := t.Context()
	if s.Details.Voice == "" {
		s.Details.Voice = s.Voice
	}
	if s.Details.SampleRate == 0 {
		s.Details.SampleRate = 24000
	}
	details, err := json.Marshal(s.Details)
	if err != nil {
		t.Fatal(err)
	}
	e := s.Session
	if e.Started.IsZero() {
		e.Started = time.Now()
	}
	e.Kind, e.Source, e.Model, e.Details = store.KindSynthesis, s.Voice, s.Voice, string(details)
	id, err := db.CreateSession(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	req := s.Request
	if req == nil {
		req = map[string]any{"text": s.Text, "voice": s.Voice}
	}
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SaveResponse(ctx, id, body, s.Text); err != nil {
		t.Fatal(err)
	}
	rate := s.Details.SampleRate
	if len(s.PCM) > 0 {
		var wav bytes.Buffer
		if err := audio.EncodeWAV(&wav, s.PCM, rate, 1); err != nil {
			t.Fatal(err)
		}
		if err := db.SaveAudio(ctx, id, store.Audio{ContentType: "audio/wav", Encoding: api.EncodingLinear16, SampleRate: rate, Data: wav.Bytes()}); err != nil {
			t.Fatal(err)
		}
	}
	ended := s.Ended
	if ended.IsZero() {
		ended = e.Started.Add(time.Minute)
	}
	if err := db.FinishSession(ctx, id, ended, float64(len(s.PCM))/float64(rate), store.StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	return id
}
