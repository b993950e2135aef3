package sessions_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// longText is n sentences of plain words, each sentence numbered so that
// a part out of place shows.
func longText(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "Sentence %d walks along the river with a few more words to fill the line. ", i+1)
	}
	return strings.TrimSpace(b.String())
}

// pacedRun runs a silent synthesis on clk, moving the clock whenever the
// synthesis waits for the service's pace (a timer beside its progress
// ticker), until it ends. It returns the events' retries and the result.
func pacedRun(ctx context.Context, t *testing.T, v *sessions.Voices, clk *clock.Fake, req sessions.SynthesisRequest) ([]*sessions.SpeakRetryEvent, sessions.SynthesisResult, error) {
	t.Helper()
	s, err := v.SynthesizeOn(ctx, clk, req)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		// Two waiters: the progress ticker and the pace's timer.
		for clk.WaitForWaiters(2, s.Done()) {
			clk.Advance(time.Minute)
		}
	}()
	var retries []*sessions.SpeakRetryEvent
	for ev := range s.Events() {
		if r, ok := ev.(*sessions.SpeakRetryEvent); ok {
			retries = append(retries, r)
		}
	}
	err = s.Stop()
	return retries, s.Result(), err
}

// TestSynthesizeLongTextInParts: a text longer than one request takes is
// sent in parts no longer than the voice's limit, cut between sentences,
// one Speak and one Flush each, the next once the one before was
// acknowledged; every part is spoken, and together they are the text.
func TestSynthesizeLongTextInParts(t *testing.T) {
	for _, voice := range []string{"aura-2-thalia-en", "aura-asteria-en", "flux-kit-en"} {
		t.Run(voice, func(t *testing.T) {
			f := &fakeSpeech{charAudio: time.Millisecond}
			v, db := newFakeVoices(t, f, nil)
			ctx := testContext(t, 20*time.Second)
			text := longText(70) // about 5,500 characters
			_, res, err := pacedRun(ctx, t, v, clock.NewFake(time.Unix(1000, 0)), sessions.SynthesisRequest{Text: text, Voice: voice, Silent: true})
			if err != nil {
				t.Fatal(err)
			}
			limit := api.MaxSpeakChars(voice)
			if voice == "flux-kit-en" {
				limit = api.MaxSpeakV2Chars
			}
			var texts []string
			var want []string
			end := 0
			for i, p := range res.Parts {
				if n := len([]rune(p.Text)); n > limit || !strings.HasSuffix(p.Text, ".") {
					t.Errorf("part %d: %d characters ending %q, want at most %d, ending a sentence", i, n, p.Text[len(p.Text)-5:], limit)
				}
				if !p.Spoken || p.Start != end || p.End <= p.Start {
					t.Errorf("part %d = spoken %v, audio %d to %d, want spoken from %d", i, p.Spoken, p.Start, p.End, end)
				}
				end = p.End
				texts = append(texts, p.Text)
				want = append(want, "speak:"+p.Text, "flush")
			}
			if len(res.Parts) < 3 || strings.Join(texts, " ") != text || end != len(res.PCM) {
				t.Errorf("%d parts, joined equal to the text %v, audio %d of %d samples", len(res.Parts), strings.Join(texts, " ") == text, end, len(res.PCM))
			}
			if got, w := strings.Join(f.stream(0).controls(), "|"), strings.Join(append(want, "close"), "|"); got != w {
				t.Errorf("sent %.300q…, want %.300q…", got, w)
			}
			if res.Partial != nil || res.Turns[0].State != sessions.TurnSpoken {
				t.Errorf("partial %v, turn %+v", res.Partial, res.Turns[0])
			}
			if s, err := db.Session(ctx, res.SessionID); err != nil || s.Status != store.StatusDone {
				t.Errorf("history: %+v, %v; want done", s, err)
			}
		})
	}
}

// TestSynthesizeResendsRefused: a part the service refuses for rate
// (DATA-0001, its text not taken) goes again, after a wait the pace
// sets, until it is taken; no part is missing and the entry is done.
func TestSynthesizeResendsRefused(t *testing.T) {
	f := &fakeSpeech{charAudio: time.Millisecond, refuse: func(n int) bool { return n == 1 || n == 2 }}
	v, db := newFakeVoices(t, f, nil)
	ctx := testContext(t, 20*time.Second)
	text := longText(30) // about 2,300 characters: three parts of aura-2's 1,000
	retries, res, err := pacedRun(ctx, t, v, clock.NewFake(time.Unix(1000, 0)), sessions.SynthesisRequest{Text: text, Voice: "aura-2-thalia-en", Silent: true})
	if err != nil {
		t.Fatal(err)
	}
	wantSamples := len([]rune(text)) - (len(res.Parts) - 1) // the spaces between parts are not sent
	wantSamples = int(time.Duration(wantSamples) * f.charAudio * fakeRate / time.Second)
	if d := len(res.PCM) - wantSamples; d < -len(res.Parts)*fakeRate/50 || d > 0 {
		t.Errorf("%d samples of audio, want about %d: a part is missing", len(res.PCM), wantSamples)
	}
	if len(retries) != 2 || retries[0].Part != 2 || retries[1].Part != 2 || retries[0].Parts != len(res.Parts) || retries[0].Wait <= 0 || retries[1].Wait <= retries[0].Wait/2 {
		t.Errorf("retries %+v, want part 2 twice, after a wait", retries)
	}
	p := res.Parts[1]
	if p.Refusals != 2 || !p.Spoken || res.Partial != nil {
		t.Errorf("part 2 = %+v, partial %v", p, res.Partial)
	}
	sent := f.stream(0).controls()
	if n := strings.Count(strings.Join(sent, "|"), "speak:"+p.Text); n != 3 {
		t.Errorf("part 2 sent %d times, want 3", n)
	}
	if s, err := db.Session(ctx, res.SessionID); err != nil || s.Status != store.StatusDone {
		t.Errorf("history: %+v, %v; want done", s, err)
	}
}

// TestSynthesizePartial: when the service refuses a part time after
// time, the synthesis gives up on the rest: it says how much was spoken
// and where it stopped, keeps the audio of what was, and history marks
// it partial with the text not spoken.
func TestSynthesizePartial(t *testing.T) {
	f := &fakeSpeech{charAudio: time.Millisecond, refuse: func(n int) bool { return n >= 1 }}
	v, db := newFakeVoices(t, f, nil)
	ctx := testContext(t, 20*time.Second)
	text := longText(30)
	retries, res, err := pacedRun(ctx, t, v, clock.NewFake(time.Unix(1000, 0)), sessions.SynthesisRequest{Text: text, Voice: "aura-2-thalia-en", Silent: true})
	var pe *sessions.PartialSynthesisError
	if !errors.As(err, &pe) || res.Partial == nil {
		t.Fatalf("Stop = %v, result partial %v; want a *PartialSynthesisError", err, res.Partial)
	}
	first := res.Parts[0].Text
	words := len(strings.Fields(text))
	if pe.SpokenWords != len(strings.Fields(first)) || pe.Words != words || !strings.HasPrefix(pe.Unspoken, res.Parts[1].Text) {
		t.Errorf("spoken %d of %d words, unspoken %.40q…; want %d of %d, from part 2", pe.SpokenWords, pe.Words, pe.Unspoken, len(strings.Fields(first)), words)
	}
	msg := err.Error()
	if !strings.Contains(msg, fmt.Sprintf("Only %d of the %d words were spoken", pe.SpokenWords, words)) || !strings.Contains(msg, "“Sentence 14 walks") || !strings.Contains(msg, "refused part 2 of 3 for rate") {
		t.Errorf("the error says %q", msg)
	}
	if len(retries) != 6 || res.Parts[1].Spoken || !res.Parts[0].Spoken || res.Stopped {
		t.Errorf("%d retries, parts %+v, stopped %v", len(retries), res.Parts, res.Stopped)
	}
	if len(res.PCM) == 0 || res.Parts[0].End != len(res.PCM) {
		t.Errorf("kept %d samples, part 1 ends at %d", len(res.PCM), res.Parts[0].End)
	}
	saved, err := v.Open(ctx, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Session.Status != store.StatusPartial || saved.Session.Error != msg || saved.Details.Unspoken != pe.Unspoken || len(saved.PCM) != len(res.PCM) {
		t.Errorf("saved %s %q, unspoken %.40q…, %d samples", saved.Session.Status, saved.Session.Error, saved.Details.Unspoken, len(saved.PCM))
	}
	var md bytes.Buffer
	if err := sessions.ExportSynthesis(&md, sessions.AnalysisMarkdown, saved); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "Partial: Only") {
		t.Errorf("the export does not say it is partial:\n%s", md.String())
	}
	if _, err := db.Session(ctx, res.SessionID); err != nil {
		t.Fatal(err)
	}
}

// TestSynthesisUnsayable: a text with nothing its voice can say is
// refused before anything is sent, in words that say why (the voice's
// language is the end of its name); in a text with words, the synthesis
// says first what the voice will leave out, and speaks the rest.
func TestSynthesisUnsayable(t *testing.T) {
	for _, tt := range []struct{ voice, text, want string }{
		{"aura-asteria-en", "😀🎉👍", "aura-asteria-en speaks English, and this text has nothing it can say: only 3 emoji and symbols (😀 🎉 👍). Voices say words, not emoji."},
		{"aura-asteria-en", "你好世界。今天天气很好。", "aura-asteria-en speaks English, and this text has nothing it can say: only 10 Chinese characters (你 好 世 界 今 天 气 很 …). Choose a voice of the text's language, if the service has one."},
		{"flux-kit-en", "Привет", "flux-kit-en speaks English, and this text has nothing it can say: only 6 Cyrillic letters (П р и в е т). Choose a voice of the text's language, if the service has one."},
	} {
		err := sessions.SynthesisRequest{Text: tt.text, Voice: tt.voice}.Check()
		if !errors.Is(err, sessions.ErrInvalidSynthesis) || err.Error() != tt.want {
			t.Errorf("Check(%s, %q) = %v, want %q", tt.voice, tt.text, err, tt.want)
		}
	}
	if err := (sessions.SynthesisRequest{Text: "こんにちは", Voice: "aura-2-izanami-ja"}).Check(); err != nil {
		t.Errorf("Japanese with a Japanese voice: %v", err)
	}

	f := &fakeSpeech{charAudio: time.Millisecond}
	v, _ := newFakeVoices(t, f, nil)
	ctx := testContext(t, 20*time.Second)
	s, err := v.Synthesize(ctx, sessions.SynthesisRequest{Text: "Hello 😀 world.", Voice: "aura-asteria-en", Silent: true})
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	for ev := range s.Events() {
		if e, ok := ev.(*sessions.TextSkippedEvent); ok {
			skipped = append(skipped, e.Skipped)
		}
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 1 || skipped[0] != "1 emoji and symbols (😀)" || len(s.Result().PCM) == 0 {
		t.Errorf("skipped %q, %d samples; want the emoji named once, and audio", skipped, len(s.Result().PCM))
	}
}
