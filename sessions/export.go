package sessions

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/asticode/go-astisub"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/count"
	"github.com/earshot-app/earshot/store"
)

// ExportFormat is a format a transcript can be saved in.
type ExportFormat string

// Export formats.
const (
	ExportSRT  ExportFormat = "srt"
	ExportVTT  ExportFormat = "vtt"
	ExportText ExportFormat = "txt"
	ExportJSON ExportFormat = "json"
)

// ExportFormats lists every format, in the order to offer them.
var ExportFormats = []ExportFormat{ExportSRT, ExportVTT, ExportText, ExportJSON}

// ParseExportFormat reads a format name or file extension.
func ParseExportFormat(s string) (ExportFormat, error) {
	switch f := ExportFormat(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), ".")); f {
	case ExportSRT, ExportVTT, ExportText, ExportJSON:
		return f, nil
	case "webvtt":
		return ExportVTT, nil
	case "text":
		return ExportText, nil
	}
	return "", fmt.Errorf("unknown export format %q: choose srt, vtt, txt or json", s)
}

// Extension is the file extension of the format, with its dot.
func (f ExportFormat) Extension() string { return "." + string(f) }

// Subtitle cues are kept short enough to read: at most this long, and
// with at most two lines of this many characters.
const (
	maxCueDuration = 7 * time.Second
	maxLineChars   = 42
	maxCueChars    = 2 * maxLineChars
)

// Transcript is what an export is made from: a session's captions and,
// for a file transcription, the service's response.
type Transcript struct {
	Title    string
	Captions []Caption
	// Response, when set, is exported as is to JSON.
	Response *api.ListenResponse
	// Created is when the session started (for the JSON metadata).
	Created time.Time
	// Duration is the length of the session's audio in seconds, 0 when
	// unknown; Models are the models the service named as it transcribed,
	// in the order it first named them (the JSON metadata, without a
	// Response).
	Duration float64
	Models   []namedModel
	// Status is how the session ended (store.StatusDone...) and Error,
	// for a failure, why, in words: exports of a failed session say so.
	Status, Error string
}

// namedModel is a model the service named in its results: its uuid and
// what it said of it.
type namedModel struct {
	UUID string        `json:"model_uuid"`
	Info api.ModelInfo `json:"model_info"`
}

// captionDetails is the JSON of a live caption's Details in history:
// the side it was heard on, in a session with two, and the model the
// service named, on the first caption of each model's.
type captionDetails struct {
	Side  string      `json:"side,omitempty"`
	Model *namedModel `json:"model,omitempty"`
}

// failure says, for a session that failed, that it did and why: what an
// export of it writes before the words kept.
func (t Transcript) failure() string {
	if t.Status != store.StatusFailed {
		return ""
	}
	if t.Error == "" {
		return "This session failed; what follows is what was kept before it did."
	}
	return "This session failed: " + strings.TrimSpace(t.Error) + " What follows is what was kept before it did."
}

// Export writes t in format f.
func Export(w io.Writer, f ExportFormat, t Transcript) error {
	failure := t.failure()
	switch f {
	case ExportSRT, ExportVTT:
		subs := subtitles(t.Captions, f == ExportVTT)
		if f == ExportVTT && failure != "" {
			// A NOTE block, which players skip, right after the header.
			var b bytes.Buffer
			if len(subs.Items) > 0 {
				if err := subs.WriteToWebVTT(&b); err != nil {
					return err
				}
			}
			body := strings.TrimPrefix(b.String(), "WEBVTT\n")
			_, err := io.WriteString(w, "WEBVTT\n\nNOTE "+failure+"\n"+body)
			return err
		}
		if len(subs.Items) == 0 {
			if f == ExportVTT {
				_, err := io.WriteString(w, "WEBVTT\n")
				return err
			}
			return nil // an empty SRT file is empty; SRT has no place for a note
		}
		if f == ExportSRT {
			return subs.WriteToSRT(w)
		}
		return subs.WriteToWebVTT(w)
	case ExportText:
		text := plainText(t.Captions)
		if failure != "" {
			text = failure + "\n\n" + text
		}
		_, err := io.WriteString(w, text)
		return err
	case ExportJSON:
		resp := t.Response
		if resp == nil {
			resp = responseOf(t)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if failure != "" {
			// The service's shape, and beside it how the session ended.
			return enc.Encode(struct {
				*api.ListenResponse
				Status string `json:"status"`
				Error  string `json:"error,omitempty"`
			}{resp, t.Status, t.Error})
		}
		return enc.Encode(resp)
	}
	return fmt.Errorf("unknown export format %q", f)
}

// speakerName names a speaker for people: the service counts from 0,
// people from 1.
func speakerName(s *int) string {
	if s == nil {
		return ""
	}
	return fmt.Sprintf("Speaker %d", *s+1)
}

// subtitles cuts captions into readable cues. With voices (WebVTT) the
// speaker is the cue's voice; otherwise it leads the text.
func subtitles(caps []Caption, voices bool) *astisub.Subtitles {
	subs := astisub.NewSubtitles()
	for _, c := range caps {
		name := speakerName(c.Speaker)
		prefix := ""
		if name != "" && !voices {
			prefix = name + ": "
		}
		for _, cue := range cues(c, prefix) {
			text := cue.text
			line := astisub.Line{}
			if name != "" {
				if voices {
					line.VoiceName = name
				} else {
					text = name + ": " + text
				}
			}
			item := &astisub.Item{
				StartAt: seconds(cue.start),
				EndAt:   seconds(max(cue.end, cue.start+0.001)),
			}
			for i, l := range wrap(text) {
				ln := line
				if i > 0 {
					ln.VoiceName = "" // the voice tag opens the cue once
				}
				ln.Items = []astisub.LineItem{{Text: l}}
				item.Lines = append(item.Lines, ln)
			}
			subs.Items = append(subs.Items, item)
		}
	}
	return subs
}

type cue struct {
	start, end float64
	text       string
}

// cues splits a caption at word boundaries into cues no longer than
// maxCueDuration, and whose text, after prefix (the speaker's name when it
// leads the text), holds at most maxCueChars and wraps into at most two
// lines. A caption without words is one cue.
func cues(c Caption, prefix string) []cue {
	if len(c.Words) == 0 {
		if strings.TrimSpace(c.Text) == "" {
			return nil
		}
		return []cue{{start: c.Start, end: c.End, text: c.Text}}
	}
	var out []cue
	cur := cue{start: c.Words[0].Start}
	for _, w := range c.Words {
		word := w.Text()
		next := word
		if cur.text != "" {
			next = cur.text + " " + word
		}
		// Greedy wrapping can need a third line for 84 characters: the
		// lines are counted, not only the characters.
		long := len(prefix)+len(next) > maxCueChars || len(wrap(prefix+next)) > 2 || w.End-cur.start > maxCueDuration.Seconds()
		if cur.text != "" && long {
			out = append(out, cur)
			cur = cue{start: w.Start}
			next = word
		}
		cur.text = next
		cur.end = w.End
	}
	if cur.text != "" {
		out = append(out, cur)
	}
	return out
}

// wrap breaks text into lines of at most maxLineChars where it can.
func wrap(text string) []string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(text) {
		if cur != "" && len(cur)+1+len(w) > maxLineChars {
			lines = append(lines, cur)
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += w
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// seconds rounds, not truncates: 16.9 s is 16.899999999 s as a float,
// which subtitle writers would print as 16.899.
func seconds(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

// plainText is the transcript as prose: one paragraph per speaker turn,
// the speaker named when known.
func plainText(caps []Caption) string {
	var b strings.Builder
	var cur *int
	open := false
	for i, c := range caps {
		if strings.TrimSpace(c.Text) == "" {
			continue
		}
		turn := i == 0 || !open || !sameSpeaker(cur, c.Speaker)
		if turn {
			if open {
				b.WriteString("\n\n")
			}
			if name := speakerName(c.Speaker); name != "" {
				b.WriteString(name + ": ")
			}
			open = true
			cur = c.Speaker
		} else {
			b.WriteString(" ")
		}
		b.WriteString(strings.TrimSpace(c.Text))
	}
	if open {
		b.WriteString("\n")
	}
	return b.String()
}

// responseOf builds the service's response shape from captions: every
// word in one alternative, and one utterance per caption.
func responseOf(t Transcript) *api.ListenResponse {
	var words []api.Word
	var texts []string
	var conf float64
	var end float64
	utts := []api.Utterance{}
	for _, c := range t.Captions {
		words = append(words, c.Words...)
		if s := strings.TrimSpace(c.Text); s != "" {
			texts = append(texts, s)
		}
		for _, w := range c.Words {
			conf += w.Confidence
		}
		end = max(end, c.End)
		utts = append(utts, api.Utterance{
			Start: c.Start, End: c.End, Confidence: c.Confidence, Transcript: c.Text,
			Words: c.Words, Speaker: c.Speaker, ID: fmt.Sprintf("caption-%d", c.Seq),
		})
	}
	if words == nil {
		words = []api.Word{}
	}
	alt := api.Alternative{Transcript: strings.Join(texts, " "), Words: words}
	if len(words) > 0 {
		alt.Confidence = conf / float64(len(words))
	}
	created := t.Created
	if created.IsZero() {
		created = time.Now()
	}
	duration := end
	if t.Duration > 0 {
		duration = t.Duration // the session's, which runs past its last words
	}
	models, info := []string{}, map[string]api.ModelInfo{}
	for _, m := range t.Models {
		if _, ok := info[m.UUID]; !ok {
			models = append(models, m.UUID)
		}
		info[m.UUID] = m.Info
	}
	return &api.ListenResponse{
		Metadata: api.ListenMetadata{
			TransactionKey: "deprecated",
			Created:        created.UTC().Format("2006-01-02T15:04:05.000Z"),
			Duration:       duration,
			Channels:       1,
			Models:         models,
			ModelInfo:      info,
		},
		Results: api.ListenResults{
			Channels:   []api.ResultChannel{{Alternatives: []api.Alternative{alt}}},
			Utterances: utts,
		},
	}
}

// CaptionsOf turns a batch response into captions: its utterances when it
// has them, otherwise its words cut at pauses and speaker changes.
func CaptionsOf(resp *api.ListenResponse) []Caption {
	if resp == nil {
		return nil
	}
	var out []Caption
	if len(resp.Results.Utterances) > 0 {
		for i, u := range resp.Results.Utterances {
			out = append(out, Caption{Seq: i, Start: u.Start, End: u.End, Speaker: u.Speaker, Text: u.Transcript,
				Words: u.Words, Confidence: u.Confidence})
		}
		return out
	}
	for _, rc := range resp.Results.Channels {
		if len(rc.Alternatives) == 0 {
			continue
		}
		words := rc.Alternatives[0].Words
		start := 0
		for i := 1; i <= len(words); i++ {
			if i < len(words) && sameSpeaker(words[i].Speaker, words[start].Speaker) && words[i].Start-words[i-1].End < 0.8 {
				continue
			}
			for _, c := range splitBySpeaker(words[start:i], api.Alternative{}, true) {
				c.Seq = len(out)
				out = append(out, c)
			}
			start = i
		}
	}
	return out
}

// ExportSynthesis writes a synthesis read back from history in format f:
// Markdown is its text, then the voice, the options and the timing, for
// people; JSON is the same for programs. Its audio is saved with
// EncodeAudio.
func ExportSynthesis(w io.Writer, f AnalysisFormat, s SavedSynthesis) error {
	switch f {
	case AnalysisJSON:
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(synthesisJSONOf(s))
	case AnalysisMarkdown:
		bw := bufio.NewWriter(w)
		writeSynthesisMarkdown(bw, s)
		return bw.Flush()
	}
	return fmt.Errorf("unknown synthesis format %q: choose md or json", f)
}

// synthesisJSON is the JSON export of a synthesis.
type synthesisJSON struct {
	Title    string           `json:"title"`
	Created  string           `json:"created,omitempty"` // RFC 3339
	Status   string           `json:"status"`
	Error    string           `json:"error,omitempty"`
	Backend  string           `json:"backend,omitempty"`
	Voice    string           `json:"voice"`
	Text     string           `json:"text"`
	Duration float64          `json:"duration"` // seconds of audio
	Details  SynthesisDetails `json:"details"`
}

func synthesisJSONOf(s SavedSynthesis) synthesisJSON {
	j := synthesisJSON{Title: s.Session.Title, Status: s.Session.Status, Error: s.Session.Error, Backend: s.Session.Backend,
		Voice: synthesisVoice(s), Text: s.Text, Duration: s.Session.Duration, Details: s.Details}
	if !s.Session.Started.IsZero() {
		j.Created = s.Session.Started.UTC().Format(time.RFC3339Nano)
	}
	return j
}

// synthesisVoice is the voice a synthesis asked for.
func synthesisVoice(s SavedSynthesis) string {
	if s.Details.Voice != "" {
		return s.Details.Voice
	}
	return s.Session.Model
}

func writeSynthesisMarkdown(w *bufio.Writer, s SavedSynthesis) {
	d := s.Details
	fmt.Fprintf(w, "# Synthesis: %s\n\n", mdInline(s.Session.Title))
	var meta []string
	if v := synthesisVoice(s); v != "" {
		meta = append(meta, "Voice "+mdInline(v))
	}
	if s.Session.Backend != "" {
		meta = append(meta, "Spoken by "+mdInline(s.Session.Backend))
	}
	if !s.Session.Started.IsZero() {
		meta = append(meta, s.Session.Started.Local().Format("2 January 2006 15:04"))
	}
	if len(meta) > 0 {
		fmt.Fprintf(w, "%s\n\n", strings.Join(meta, " · "))
	}
	fmt.Fprint(w, "## Text\n\n")
	n := 0
	for line := range strings.Lines(s.Text) {
		if line = strings.TrimSpace(line); line != "" {
			fmt.Fprintf(w, "%s\n\n", mdLine(line))
			n++
		}
	}
	if n == 0 {
		fmt.Fprint(w, "No text was kept.\n\n")
	}

	fmt.Fprint(w, "## Options and timing\n\n")
	item := func(format string, args ...any) { fmt.Fprintf(w, "- "+format+"\n", args...) }
	if v := synthesisVoice(s); v != "" {
		item("Voice: %s", mdInline(v))
	}
	if d.ServiceModel != "" && d.ServiceModel != synthesisVoice(s) {
		item("Model the service used: %s", mdInline(d.ServiceModel))
	}
	if d.Speed != 0 {
		item("Speed: %s×", strconv.FormatFloat(d.Speed, 'f', -1, 64))
	}
	if d.Expressivity != 0 || VoiceFamily(d.Family) == FamilyTurn {
		item("Expressivity: %+d", d.Expressivity)
	}
	if d.TurnByTurn {
		item("Spoken turn by turn (%s)", count.Of(d.Turns, "turn"))
	}
	if d.TimeToFirstAudioMS > 0 {
		item("Time to first audio: %.0f ms", d.TimeToFirstAudioMS)
	}
	if d.PlaybackLatencyMS > 0 {
		item("Playback started %.0f ms after the first audio", d.PlaybackLatencyMS)
	}
	if s.Session.Duration > 0 {
		length := fmt.Sprintf("Audio: %.1f s", s.Session.Duration)
		if d.SampleRate > 0 {
			length += fmt.Sprintf(" at %d Hz", d.SampleRate)
		}
		item("%s", length)
	}
	if d.Stopped {
		item("Stopped before the end")
	}
	if d.InterruptedSpoken != "" || d.InterruptedRemaining != "" {
		item("Interrupted: spoken “%s”, left “%s”", mdInline(d.InterruptedSpoken), mdInline(d.InterruptedRemaining))
	}
	if s.Session.Status == store.StatusPartial {
		item("Partial: %s", mdInline(s.Session.Error))
	}
	if s.Session.Status == store.StatusInterrupted {
		item("Interrupted: Earshot stopped before it ended")
	}
	if s.Session.Status == store.StatusFailed {
		why := "Failed"
		if s.Session.Error != "" {
			why += ": " + mdInline(s.Session.Error)
		}
		item("%s", why)
	}
}

// mdLine is mdInline for a line that stands as its own paragraph: one
// that would start a heading, a quote or a list is escaped.
func mdLine(s string) string {
	s = mdInline(s)
	if s == "" {
		return s
	}
	switch s[0] {
	case '#', '>', '-', '+', '=', '|':
		return `\` + s
	}
	if i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }); i > 0 && (s[i] == '.' || s[i] == ')') {
		return s[:i] + `\` + s[i:]
	}
	return s
}

// Synthesis reads a synthesis back from history with its text and, when
// it was kept, its audio.
func (w *Workspace) Synthesis(ctx context.Context, id int64) (SavedSynthesis, error) {
	return NewVoices(VoicesConfig{History: w.cfg.History, Logger: w.log}).Open(ctx, id)
}

// ExportSynthesis writes the synthesis id of history in format f.
func (w *Workspace) ExportSynthesis(ctx context.Context, id int64, f AnalysisFormat, out io.Writer) error {
	s, err := w.Synthesis(ctx, id)
	if err != nil {
		return err
	}
	return ExportSynthesis(out, f, s)
}
