package sessions_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/asticode/go-astisub"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/historytest"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// caption builds a caption from words of text, one every step seconds
// from start, each lasting 80% of step.
func caption(seq int, speaker *int, start, step float64, text string) sessions.Caption {
	c := sessions.Caption{Seq: seq, Speaker: speaker, Text: text, Confidence: 0.9}
	for i, w := range strings.Fields(text) {
		s := start + float64(i)*step
		c.Words = append(c.Words, api.Word{
			Word:           strings.ToLower(strings.Trim(w, ".,?!")),
			PunctuatedWord: w,
			Start:          round3(s),
			End:            round3(s + 0.8*step),
			Confidence:     0.9,
			Speaker:        speaker,
		})
	}
	c.Start = c.Words[0].Start
	c.End = c.Words[len(c.Words)-1].End
	return c
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// longTurn is 32 words over 12.8 s: more than one cue by time and by length.
const longTurn = "Well, I suppose the committee will want to hear about the budget before " +
	"anything else, because the numbers for the second quarter were considerably " +
	"worse than expected."

func exportCaptions() []sessions.Caption {
	return []sessions.Caption{
		caption(0, ptr(0), 0.5, 0.45, "Good morning everyone."),
		caption(1, ptr(1), 2.0, 0.4, longTurn),
		caption(2, ptr(1), 15.0, 0.5, "Thanks."),
		caption(3, ptr(0), 16.0, 0.5, "You're welcome."),
		{Seq: 4, Start: 18, End: 19, Text: "[music]"}, // no words, no speaker
		// 82 characters that greedy wrapping puts on three lines.
		caption(5, nil, 20, 0.3, "Extraordinarily comprehensive documentation accompanies internationally recognized standardization procedures."),
	}
}

// cueWant is a cue the captions above must give, before the speaker.
type cueWant struct {
	start, end float64
	speaker    string
	text       string
}

// wantCues cuts the captions by the rules: at most 7 s, at most 84
// characters and two lines of 42, at word boundaries, greedily.
func wantCues(t *testing.T, caps []sessions.Caption, prefixed bool) []cueWant {
	t.Helper()
	var out []cueWant
	for _, c := range caps {
		name := ""
		if c.Speaker != nil {
			name = "Speaker " + string(rune('1'+*c.Speaker))
		}
		if len(c.Words) == 0 {
			out = append(out, cueWant{c.Start, c.End, name, c.Text})
			continue
		}
		prefix := ""
		if prefixed && name != "" {
			prefix = name + ": "
		}
		cur := cueWant{start: c.Words[0].Start, speaker: name}
		for _, w := range c.Words {
			next := strings.TrimSpace(cur.text + " " + w.Text())
			if cur.text != "" && (len(prefix+next) > 84 || len(wrapLines(prefix+next)) > 2 || w.End-cur.start > 7) {
				out = append(out, cur)
				cur = cueWant{start: w.Start, speaker: name}
				next = w.Text()
			}
			cur.text = next
			cur.end = w.End
		}
		out = append(out, cur)
	}
	return out
}

// wrapLines breaks text greedily into lines of at most 42 characters.
func wrapLines(text string) []string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(text) {
		if cur != "" && len(cur)+1+len(w) > 42 {
			lines = append(lines, cur)
			cur = ""
		}
		cur = strings.TrimSpace(cur + " " + w)
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

func export(t *testing.T, f sessions.ExportFormat, tr sessions.Transcript) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := sessions.Export(&b, f, tr); err != nil {
		t.Fatalf("Export %s: %v", f, err)
	}
	return b.Bytes()
}

func TestExportSubtitles(t *testing.T) {
	caps := exportCaptions()
	tests := []struct {
		format sessions.ExportFormat
		read   func([]byte) (*astisub.Subtitles, error)
		voices bool
	}{
		{sessions.ExportSRT, func(b []byte) (*astisub.Subtitles, error) { return astisub.ReadFromSRT(bytes.NewReader(b)) }, false},
		{sessions.ExportVTT, func(b []byte) (*astisub.Subtitles, error) { return astisub.ReadFromWebVTT(bytes.NewReader(b)) }, true},
	}
	for _, tc := range tests {
		t.Run(string(tc.format), func(t *testing.T) {
			out := export(t, tc.format, sessions.Transcript{Title: "Meeting", Captions: caps})
			if tc.voices && !bytes.HasPrefix(out, []byte("WEBVTT")) {
				t.Errorf("a WebVTT file must start with WEBVTT:\n%s", out)
			}
			subs, err := tc.read(out)
			if err != nil {
				t.Fatalf("the export does not parse back: %v\n%s", err, out)
			}
			want := wantCues(t, caps, !tc.voices)
			if len(subs.Items) != len(want) {
				t.Fatalf("%d cues, want %d:\n%s", len(subs.Items), len(want), out)
			}
			for i, it := range subs.Items {
				w := want[i]
				// Subtitles count milliseconds.
				if it.StartAt != seconds(w.start) {
					t.Errorf("cue %d starts at %v, want %.3f s", i, it.StartAt, w.start)
				}
				if it.EndAt != seconds(w.end) {
					t.Errorf("cue %d ends at %v, want %.3f s", i, it.EndAt, w.end)
				}
				if it.EndAt-it.StartAt > 7*time.Second {
					t.Errorf("cue %d lasts %v, over 7 s", i, it.EndAt-it.StartAt)
				}
				if len(it.Lines) == 0 || len(it.Lines) > 2 {
					t.Errorf("cue %d has %d lines, want 1 or 2:\n%s", i, len(it.Lines), out)
				}
				var lines []string
				for _, l := range it.Lines {
					s := strings.TrimSpace(l.String())
					if len(s) > 42 {
						t.Errorf("cue %d has a line of %d characters: %q", i, len(s), s)
					}
					lines = append(lines, s)
				}
				text := strings.Join(lines, " ")
				wantText := w.text
				if tc.voices {
					if voice := it.Lines[0].VoiceName; voice != w.speaker {
						t.Errorf("cue %d voice %q, want %q", i, voice, w.speaker)
					}
				} else if w.speaker != "" {
					wantText = w.speaker + ": " + w.text
				}
				if text != wantText {
					t.Errorf("cue %d text %q, want %q", i, text, wantText)
				}
				if len(w.text) > 84 {
					t.Errorf("cue %d holds %d characters, over 84", i, len(w.text))
				}
			}
			// The long turn needed several cues, and they hold every word.
			var turn []string
			for _, w := range want {
				if w.start >= 2 && w.end <= 15 {
					turn = append(turn, w.text)
				}
			}
			if len(turn) < 2 || strings.Join(turn, " ") != longTurn {
				t.Errorf("the long turn became %q", turn)
			}
		})
	}
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

func TestExportText(t *testing.T) {
	out := export(t, sessions.ExportText, sessions.Transcript{Captions: exportCaptions()})
	want := "Speaker 1: Good morning everyone.\n\n" +
		"Speaker 2: " + longTurn + " Thanks.\n\n" +
		"Speaker 1: You're welcome.\n\n" +
		"[music] Extraordinarily comprehensive documentation accompanies internationally recognized standardization procedures.\n"
	if string(out) != want {
		t.Errorf("text export:\n%s\nwant:\n%s", out, want)
	}
	// Without speakers: one paragraph.
	plain := []sessions.Caption{caption(0, nil, 0, 0.5, "One two."), caption(1, nil, 2, 0.5, "Three.")}
	if out := export(t, sessions.ExportText, sessions.Transcript{Captions: plain}); string(out) != "One two. Three.\n" {
		t.Errorf("text export without speakers: %q", out)
	}
}

func TestExportJSON(t *testing.T) {
	caps := exportCaptions()
	created := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	out := export(t, sessions.ExportJSON, sessions.Transcript{Title: "Meeting", Captions: caps, Created: created})
	var resp api.ListenResponse
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&resp); err != nil {
		t.Fatalf("the JSON export is not the service's response: %v\n%s", err, out)
	}
	if resp.Metadata.Created != "2026-03-01T09:30:00.000Z" || resp.Metadata.Duration != caps[len(caps)-1].End || resp.Metadata.Channels != 1 {
		t.Errorf("metadata %+v", resp.Metadata)
	}
	if len(resp.Results.Channels) != 1 || len(resp.Results.Channels[0].Alternatives) != 1 {
		t.Fatalf("results %+v, want one channel with one alternative", resp.Results)
	}
	alt := resp.Results.Channels[0].Alternatives[0]
	var texts []string
	var words []api.Word
	for _, c := range caps {
		texts = append(texts, c.Text)
		words = append(words, c.Words...)
	}
	if alt.Transcript != strings.Join(texts, " ") {
		t.Errorf("transcript %q", alt.Transcript)
	}
	if !reflect.DeepEqual(alt.Words, words) {
		t.Errorf("words differ:\n%+v\nwant\n%+v", alt.Words, words)
	}
	if len(resp.Results.Utterances) != len(caps) {
		t.Fatalf("%d utterances for %d captions", len(resp.Results.Utterances), len(caps))
	}
	for i, u := range resp.Results.Utterances {
		c := caps[i]
		if u.Start != c.Start || u.End != c.End || u.Transcript != c.Text || !sameSpeaker(u.Speaker, c.Speaker) || len(u.Words) != len(c.Words) {
			t.Errorf("utterance %d = %+v, caption %+v", i, u, c)
		}
	}
	// A file transcription exports the service's own response unchanged.
	own := &api.ListenResponse{Metadata: api.ListenMetadata{RequestID: "req-1", Duration: 3.5, Channels: 1},
		Results: api.ListenResults{Channels: []api.ResultChannel{{Alternatives: []api.Alternative{{Transcript: "hello", Words: []api.Word{{Word: "hello", Start: 1, End: 1.5}}}}}}}}
	out = export(t, sessions.ExportJSON, sessions.Transcript{Captions: caps, Response: own})
	var back api.ListenResponse
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, own) {
		t.Errorf("the response changed on export:\n%+v\nwant\n%+v", back, *own)
	}
}

func TestExportEmpty(t *testing.T) {
	tests := []struct {
		format sessions.ExportFormat
		want   string
	}{
		{sessions.ExportSRT, ""},
		{sessions.ExportVTT, "WEBVTT\n"},
		{sessions.ExportText, ""},
	}
	for _, tc := range tests {
		t.Run(string(tc.format), func(t *testing.T) {
			if out := export(t, tc.format, sessions.Transcript{}); string(out) != tc.want {
				t.Errorf("empty %s export = %q, want %q", tc.format, out, tc.want)
			}
		})
	}
	var resp api.ListenResponse
	if err := json.Unmarshal(export(t, sessions.ExportJSON, sessions.Transcript{}), &resp); err != nil {
		t.Fatal(err)
	}
	if alt := resp.Results.Channels[0].Alternatives[0]; alt.Transcript != "" || alt.Words == nil || len(alt.Words) != 0 {
		t.Errorf("empty JSON export: %+v; want no words, as an empty list", alt)
	}
	if err := sessions.Export(&bytes.Buffer{}, "pdf", sessions.Transcript{}); err == nil {
		t.Error("exporting to an unknown format succeeded")
	}
}

func TestParseExportFormat(t *testing.T) {
	tests := []struct {
		in   string
		want sessions.ExportFormat
		ok   bool
	}{
		{"srt", sessions.ExportSRT, true},
		{".SRT", sessions.ExportSRT, true},
		{" vtt ", sessions.ExportVTT, true},
		{"WebVTT", sessions.ExportVTT, true},
		{"txt", sessions.ExportText, true},
		{"text", sessions.ExportText, true},
		{".json", sessions.ExportJSON, true},
		{"pdf", "", false},
		{"", "", false},
	}
	for _, tc := range tests {
		got, err := sessions.ParseExportFormat(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseExportFormat(%q) = %q, %v; want %q, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	for _, f := range sessions.ExportFormats {
		if got, err := sessions.ParseExportFormat(f.Extension()); err != nil || got != f {
			t.Errorf("the extension %q of %q does not parse back: %q, %v", f.Extension(), f, got, err)
		}
	}
}

func TestCaptionsOf(t *testing.T) {
	w := func(text string, start, end float64, speaker int) api.Word {
		return api.Word{Word: strings.ToLower(strings.Trim(text, ".,")), PunctuatedWord: text, Start: start, End: end, Confidence: 0.8, Speaker: &speaker}
	}
	utterances := &api.ListenResponse{Results: api.ListenResults{
		Channels: []api.ResultChannel{{Alternatives: []api.Alternative{{Transcript: "Hi. Hello there."}}}},
		Utterances: []api.Utterance{
			{Start: 0.1, End: 0.5, Confidence: 0.9, Transcript: "Hi.", Speaker: ptr(0), Words: []api.Word{w("Hi.", 0.1, 0.5, 0)}},
			{Start: 1.0, End: 2.0, Confidence: 0.7, Transcript: "Hello there.", Speaker: ptr(1), Words: []api.Word{w("Hello", 1.0, 1.4, 1), w("there.", 1.5, 2.0, 1)}},
		},
	}}
	wordsOnly := &api.ListenResponse{Results: api.ListenResults{Channels: []api.ResultChannel{{Alternatives: []api.Alternative{{
		Words: []api.Word{
			w("So,", 0.0, 0.3, 0), w("yes.", 0.4, 0.6, 0), // a pause of 0.9 s follows
			w("Then", 1.5, 1.8, 0), // the speaker changes after
			w("No", 1.9, 2.1, 1), w("way.", 2.2, 2.4, 1),
		},
	}}}}}}
	tests := []struct {
		name string
		resp *api.ListenResponse
		want []sessions.Caption
	}{
		{"nil", nil, nil},
		{"no alternatives", &api.ListenResponse{Results: api.ListenResults{Channels: []api.ResultChannel{{}}}}, nil},
		{"utterances", utterances, []sessions.Caption{
			{Seq: 0, Start: 0.1, End: 0.5, Speaker: ptr(0), Text: "Hi.", Words: utterances.Results.Utterances[0].Words, Confidence: 0.9},
			{Seq: 1, Start: 1.0, End: 2.0, Speaker: ptr(1), Text: "Hello there.", Words: utterances.Results.Utterances[1].Words, Confidence: 0.7},
		}},
		{"words cut at pauses and speakers", wordsOnly, []sessions.Caption{
			{Seq: 0, Start: 0.0, End: 0.6, Speaker: ptr(0), Text: "So, yes.", Words: wordsOnly.Results.Channels[0].Alternatives[0].Words[0:2], Confidence: 0.8, SpeechFinal: true},
			{Seq: 1, Start: 1.5, End: 1.8, Speaker: ptr(0), Text: "Then", Words: wordsOnly.Results.Channels[0].Alternatives[0].Words[2:3], Confidence: 0.8, SpeechFinal: true},
			{Seq: 2, Start: 1.9, End: 2.4, Speaker: ptr(1), Text: "No way.", Words: wordsOnly.Results.Channels[0].Alternatives[0].Words[3:5], Confidence: 0.8, SpeechFinal: true},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := sessions.CaptionsOf(tc.resp)
			if len(got) != len(tc.want) {
				t.Fatalf("%d captions, want %d: %+v", len(got), len(tc.want), got)
			}
			for i := range got {
				g, w := got[i], tc.want[i]
				if math.Abs(g.Confidence-w.Confidence) < 1e-9 {
					g.Confidence = w.Confidence
				}
				if !reflect.DeepEqual(g, w) {
					t.Errorf("caption %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// saveSynthesis saves a finished synthesis of text with voice as the
// Voices tab does: its details, its request and, with pcm, its audio as
// WAV at 24 kHz.
func saveSynthesis(t *testing.T, db *store.DB, text, voice string, pcm []int16) int64 {
	started := time.Date(2026, 11, 3, 14, 5, 0, 0, time.UTC)
	return historytest.SaveSynthesis(t, db, historytest.Synthesis{
		Session: store.Session{Title: "Welcome", Backend: "Local engine", Options: `{"voice":"` + voice + `","speed":1.25}`, Started: started},
		Voice:   voice, Text: text, PCM: pcm, Ended: started.Add(3 * time.Second),
		Details: sessions.SynthesisDetails{Family: string(sessions.FamilyTurn), Speed: 1.25, Expressivity: 1,
			TurnByTurn: true, TimeToFirstAudioMS: 183.5, PlaybackLatencyMS: 41, Turns: 2, ServiceModel: voice + "-v2"},
		Request: map[string]any{"text": text, "voice": voice, "speed": 1.25},
	})
}

// tone24k is d seconds of a 440 Hz tone at 24 kHz.
func tone24k(d float64) []int16 {
	pcm := make([]int16, int(d*24000))
	for i := range pcm {
		pcm[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/24000))
	}
	return pcm
}

func TestExportSynthesis(t *testing.T) {
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	w, err := sessions.NewWorkspace(sessions.WorkspaceConfig{History: db, Keys: sessions.NewKeys(&store.Memory{}, nil)})
	if err != nil {
		t.Fatal(err)
	}
	const text = "# Hello, and welcome.\nThis is *the* show."
	id := saveSynthesis(t, db, text, "flux-aria-en", tone24k(1.5))

	var md bytes.Buffer
	if err := w.ExportSynthesis(t.Context(), id, sessions.AnalysisMarkdown, &md); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", md.String())
	for _, want := range []string{
		"# Synthesis: Welcome\n\nVoice flux-aria-en · Spoken by Local engine · " + time.Date(2026, 11, 3, 14, 5, 0, 0, time.UTC).Local().Format("2 January 2006 15:04") + "\n\n",
		"## Text\n\n\\# Hello, and welcome.\n\nThis is \\*the\\* show.\n\n",
		"- Voice: flux-aria-en\n", "- Model the service used: flux-aria-en-v2\n", "- Speed: 1.25×\n", "- Expressivity: +1\n",
		"- Spoken turn by turn (2 turns)\n", "- Time to first audio: 184 ms\n", "- Playback started 41 ms after the first audio\n",
		"- Audio: 1.5 s at 24000 Hz\n",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md.String())
		}
	}

	var js bytes.Buffer
	if err := w.ExportSynthesis(t.Context(), id, sessions.AnalysisJSON, &js); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Title, Created, Status, Backend, Voice, Text string
		Duration                                     float64
		Details                                      sessions.SynthesisDetails
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatalf("%v:\n%s", err, js.String())
	}
	if got.Text != text || got.Voice != "flux-aria-en" || got.Title != "Welcome" || got.Created != "2026-11-03T14:05:00Z" ||
		got.Status != store.StatusDone || got.Backend != "Local engine" || got.Duration != 1.5 ||
		got.Details.TimeToFirstAudioMS != 183.5 || got.Details.Speed != 1.25 || got.Details.ServiceModel != "flux-aria-en-v2" {
		t.Errorf("the JSON: %+v\n%s", got, js.String())
	}

	// The audio reads back at its own rate, to be saved with EncodeAudio.
	saved, err := w.Synthesis(t.Context(), id)
	if err != nil || saved.SampleRate != 24000 || len(saved.PCM) != 36000 {
		t.Errorf("Synthesis: %d samples at %d Hz, %v", len(saved.PCM), saved.SampleRate, err)
	}
	if err := w.ExportSynthesis(t.Context(), id, "srt", &bytes.Buffer{}); err == nil {
		t.Error("a synthesis exported as srt")
	}
	if err := w.ExportSynthesis(t.Context(), 9999, sessions.AnalysisJSON, &bytes.Buffer{}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a missing synthesis: %v", err)
	}

	// A synthesis without its text, details or audio still exports what
	// there is.
	bare, err := db.CreateSession(t.Context(), store.Session{Kind: store.KindSynthesis, Title: "Bare", Model: "aura-2-thalia-en", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	md.Reset()
	if err := w.ExportSynthesis(t.Context(), bare, sessions.AnalysisMarkdown, &md); err != nil || !strings.Contains(md.String(), "No text was kept.") || !strings.Contains(md.String(), "- Voice: aura-2-thalia-en") {
		t.Errorf("a bare synthesis: %v\n%s", err, md.String())
	}
}
