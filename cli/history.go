package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/earshot-app/earshot/internal/timecode"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

const historySummary = "list, search and export the sessions kept in history"

// historyDefaultLimit is how many sessions, or hits, a listing prints
// unless --limit says otherwise.
const historyDefaultLimit = 50

// historyKinds are the kinds --kind accepts, in the order help lists them.
var historyKinds = []string{store.KindCaptions, store.KindFile, store.KindConversation,
	store.KindSynthesis, store.KindAgent, store.KindAnalysis}

const historyUsage = `Usage: earshot history [--kind K] [--since DATE] [--limit N] [--json]
       earshot history search WORDS... [--kind K] [--since DATE] [--limit N] [--json]
       earshot history export ID [--format F] [-o FILE]

Lists the sessions kept in the app's history, newest first: id, kind,
when it started, how long it lasted and its title. "search" finds the
sessions whose words match every word given (the last also as the start
of a word), best first, with the matching words and, for captions, where
in the recording they were said. "export" writes one session: a
transcript as srt, vtt, txt or json, an analysis as md or json, a
synthesis as md or json (its text, voice, options and timing) or its
audio as wav, mp3, ogg, flac or aac. Without --format, the extension of
-o FILE chooses the format when it names one the session has.

Kinds: captions, file, conversation, synthesis, agent, analysis.
DATE is YYYY-MM-DD (from the start of that day, local time), today,
yesterday, or a number of days or weeks back: 7d, 2w.
With --json each session, or hit, is one JSON object on its own line.

Flags:
`

// historyFlags are the flags of every history command; each command
// refuses the ones that do not apply to it.
type historyFlags struct {
	kind, since, format, output string
	limit                       int
	json                        bool
}

func history(ctx context.Context, env Env, args []string) error {
	var f historyFlags
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.StringVar(&f.kind, "kind", "", "only sessions of kind `K`")
	fs.StringVar(&f.since, "since", "", "only sessions started on or after `DATE`")
	fs.IntVar(&f.limit, "limit", historyDefaultLimit, "print at most `N` sessions or hits")
	fs.BoolVar(&f.json, "json", false, "print JSON lines instead of a table")
	fs.StringVar(&f.format, "format", "", "export: `F`, one of srt, vtt, txt, json (a transcript), md, json (an analysis), or md, json, wav, mp3, ogg, flac, aac (a synthesis)")
	fs.StringVar(&f.output, "o", "", "export: write to `FILE` instead of standard output")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, historyUsage)
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return errUsage
	}
	usageErr := usageError(env, "history")
	verb := ""
	if len(pos) > 0 {
		verb = pos[0]
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	var filter store.Filter
	if verb != "export" {
		if set["format"] || set["o"] {
			return usageErr("--format and -o are for export")
		}
		if f.limit <= 0 {
			return usageErr("--limit must be a positive number, not %d", f.limit)
		}
		if f.kind != "" {
			k, ok := parseKind(f.kind)
			if !ok {
				return usageErr("unknown kind %q: use one of %s", f.kind, strings.Join(historyKinds, ", "))
			}
			filter.Kind = k
		}
		if f.since != "" {
			filter.Since, err = parseSince(f.since, time.Now())
			if err != nil {
				return usageErr("%v", err)
			}
		}
	}
	var id int64
	switch verb {
	case "":
	case "search":
		if len(pos) == 1 || strings.TrimSpace(strings.Join(pos[1:], " ")) == "" {
			return usageErr("search for what? give the words to find")
		}
	case "export":
		if set["kind"] || set["since"] || set["limit"] || set["json"] {
			return usageErr("export takes an ID, --format and -o only")
		}
		if len(pos) != 2 {
			return usageErr("export one session: give its ID (earshot history lists them)")
		}
		id, err = strconv.ParseInt(pos[1], 10, 64)
		if err != nil || id <= 0 {
			return usageErr("%q is not a session ID: give the number earshot history shows", pos[1])
		}
	default:
		return usageErr("unknown history command %q: use search or export, or nothing to list", verb)
	}

	ws, err := env.historyWorkspace(ctx, "read the history")
	if err != nil {
		return err
	}
	defer ws.Close()
	switch verb {
	case "search":
		return searchHistory(ctx, env, ws, strings.Join(pos[1:], " "), filter, f)
	case "export":
		return exportHistory(ctx, env, ws, id, f)
	}
	filter.Limit = f.limit
	list, err := ws.Sessions(ctx, filter)
	if err != nil {
		return err
	}
	if f.json {
		return writeJSONLines(env.Stdout, list, sessionJSONOf)
	}
	if len(list) == 0 {
		if filter.Kind == "" && filter.Since.IsZero() {
			fmt.Fprintln(env.Stderr, "The history is empty: what Earshot transcribes, speaks and analyses is kept there.")
		} else {
			fmt.Fprintf(env.Stderr, "No %s in the history.\n", filtered(filter))
		}
		return nil
	}
	for _, s := range list {
		failed := ""
		if s.Status == store.StatusFailed {
			failed = "  (failed"
			if why := oneLine(s.Error); why != "" {
				failed += ": " + why
			}
			failed += ")"
		}
		fmt.Fprintf(env.Stdout, "%6d  %-12s  %s  %8s  %s%s\n", s.ID, s.Kind, s.Started.Local().Format("2006-01-02 15:04"), timecode.Of(s.Duration), oneLine(s.Title), failed)
	}
	if len(list) == f.limit {
		fmt.Fprintf(env.Stderr, "The newest %d; --limit shows more.\n", f.limit)
	}
	return nil
}

// kindNouns name the sessions of each kind, in the plural.
var kindNouns = map[string]string{
	store.KindCaptions:     "captions sessions",
	store.KindFile:         "file transcriptions",
	store.KindConversation: "conversations",
	store.KindSynthesis:    "syntheses",
	store.KindAgent:        "agent conversations",
	store.KindAnalysis:     "analyses",
}

// filtered names the sessions filter keeps: "sessions", "syntheses since
// 2026-11-01".
func filtered(filter store.Filter) string {
	what := "sessions"
	if n, ok := kindNouns[filter.Kind]; ok {
		what = n
	}
	if !filter.Since.IsZero() {
		what += " since " + filter.Since.Format(time.DateOnly)
	}
	return what
}

// parseKind reads a kind, ignoring case.
func parseKind(s string) (string, bool) {
	k := strings.ToLower(strings.TrimSpace(s))
	for _, known := range historyKinds {
		if k == known {
			return k, true
		}
	}
	return "", false
}

// parseSince reads --since: a date (the start of that day, local time),
// today, yesterday, or Nd / Nw back from now's day.
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	y, m, d := now.Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, now.Location())
	switch s {
	case "today":
		return today, nil
	case "yesterday":
		return today.AddDate(0, 0, -1), nil
	}
	if n := len(s); n >= 2 && (s[n-1] == 'd' || s[n-1] == 'w') {
		count, err := strconv.Atoi(s[:n-1])
		if err == nil && count >= 0 && count <= store.MaxRetentionDays {
			if s[n-1] == 'w' {
				count *= 7
			}
			return today.AddDate(0, 0, -count), nil
		}
	}
	t, err := time.ParseInLocation(time.DateOnly, s, now.Location())
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a date: use YYYY-MM-DD, today, yesterday, or 7d, 2w", s)
	}
	return t, nil
}

// sessionJSON is one session of `history --json`.
type sessionJSON struct {
	ID       int64   `json:"id"`
	Kind     string  `json:"kind"`
	Title    string  `json:"title"`
	Started  string  `json:"started"` // RFC 3339
	Duration float64 `json:"duration"`
	Status   string  `json:"status"`
	Error    string  `json:"error,omitempty"` // why it failed, in words
	Source   string  `json:"source,omitempty"`
	Backend  string  `json:"backend,omitempty"`
	Model    string  `json:"model,omitempty"`
}

func sessionJSONOf(s store.Session) sessionJSON {
	return sessionJSON{ID: s.ID, Kind: s.Kind, Title: s.Title, Started: s.Started.Format(time.RFC3339),
		Duration: s.Duration, Status: s.Status, Error: s.Error, Source: s.Source, Backend: s.Backend, Model: s.Model}
}

// hitJSON is one hit of `history search --json`. Snippet is plain text;
// Matches are the words in it that matched.
type hitJSON struct {
	SessionID int64    `json:"session_id"`
	Kind      string   `json:"kind"`
	Title     string   `json:"title"`
	Started   string   `json:"started"`
	At        *float64 `json:"at,omitempty"` // seconds into the recording: a caption's, or one found in a file's transcript
	Snippet   string   `json:"snippet"`
	Matches   []string `json:"matches"`
}

func writeJSONLines[T, J any](w io.Writer, list []T, conv func(T) J) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, v := range list {
		if err := enc.Encode(conv(v)); err != nil {
			return err
		}
	}
	return nil
}

// searchHistory prints the hits of q among the sessions filter keeps.
func searchHistory(ctx context.Context, env Env, ws *Workspace, q string, filter store.Filter, f historyFlags) error {
	hits, err := ws.SearchWithin(ctx, q, f.limit, filter)
	if err != nil {
		return err
	}
	located := 0 // file transcriptions read back to locate their hit
	byID := map[int64]store.Session{}
	var out []hitJSON
	for _, h := range hits {
		s, ok := byID[h.SessionID]
		if !ok {
			s, err = ws.History.Session(ctx, h.SessionID)
			if errors.Is(err, store.ErrNotFound) {
				continue // deleted since the search
			}
			if err != nil {
				return err
			}
			byID[s.ID] = s
		}
		plain, matches := splitSnippet(h.Snippet)
		j := hitJSON{SessionID: s.ID, Kind: s.Kind, Title: s.Title, Started: s.Started.Format(time.RFC3339), Snippet: plain, Matches: matches}
		if h.SegmentID > 0 || located < sessions.LocateMax && s.Kind == store.KindFile {
			if h.SegmentID == 0 {
				located++
			}
			if at, ok := ws.LocateHit(ctx, h); ok {
				j.At = &at
			}
		}
		if out = append(out, j); len(out) == f.limit {
			break
		}
	}
	if f.json {
		return writeJSONLines(env.Stdout, out, func(j hitJSON) hitJSON { return j })
	}
	if len(out) == 0 {
		fmt.Fprintf(env.Stderr, "No %s match “%s”.\n", filtered(filter), q)
		return nil
	}
	bold := env.isTerminal(env.Stdout)
	for _, j := range out {
		at := ""
		if j.At != nil {
			at = " at " + timecode.Of(*j.At)
		}
		started, _ := time.Parse(time.RFC3339, j.Started)
		fmt.Fprintf(env.Stdout, "%6d  %-12s  %s  %s%s\n", j.SessionID, j.Kind, started.Local().Format("2006-01-02 15:04"), oneLine(j.Title), at)
		fmt.Fprintf(env.Stdout, "        %s\n", markSnippet(j, bold))
	}
	return nil
}

// splitSnippet returns a snippet's text without its highlight marks, and
// the words that were highlighted.
func splitSnippet(snippet string) (string, []string) {
	var plain strings.Builder
	var matches []string
	rest := oneLine(snippet)
	for rest != "" {
		i := strings.Index(rest, store.HighlightStart)
		if i < 0 {
			plain.WriteString(rest)
			break
		}
		plain.WriteString(rest[:i])
		rest = rest[i+len(store.HighlightStart):]
		j := strings.Index(rest, store.HighlightEnd)
		if j < 0 {
			j = len(rest)
		}
		matches = append(matches, rest[:j])
		plain.WriteString(rest[:j])
		rest = strings.TrimPrefix(rest[j:], store.HighlightEnd)
	}
	if matches == nil {
		matches = []string{}
	}
	return plain.String(), matches
}

// markSnippet shows a hit's snippet with its matched words in bold on a
// terminal, or between asterisks elsewhere.
func markSnippet(j hitJSON, bold bool) string {
	open, end := "*", "*"
	if bold {
		open, end = "\x1b[1m", "\x1b[0m"
	}
	out, rest := "", j.Snippet
	for _, m := range j.Matches {
		i := strings.Index(rest, m)
		if i < 0 {
			continue
		}
		out += rest[:i] + open + m + end
		rest = rest[i+len(m):]
	}
	return out + rest
}

// oneLine puts text on one line: line breaks and other control
// characters (but the snippets' highlight marks) become spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && string(r) != store.HighlightStart && string(r) != store.HighlightEnd {
			return ' '
		}
		return r
	}, s)
}

// exportHistory writes session id in the format f asks for or, without
// --format, the one the extension of -o names, when the session has it.
func exportHistory(ctx context.Context, env Env, ws *Workspace, id int64, f historyFlags) error {
	s, err := ws.History.Session(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return reword(err, "no session %d in the history (earshot history lists them)", id)
	}
	if err != nil {
		return err
	}
	name, fromFile := f.format, false
	if name == "" && f.output != "" && f.output != "-" {
		name, fromFile = filepath.Ext(f.output), true
	}
	var buf bytes.Buffer
	what := ""
	switch s.Kind {
	case store.KindAnalysis:
		format, err := mdOrJSON(name, fromFile, func(err error) error {
			return reword(err, "an analysis is exported as md or json, not %q", f.format)
		})
		if err != nil {
			return err
		}
		if err := ws.ExportAnalysis(ctx, id, format, &buf); err != nil {
			return err
		}
		what = string(format)
	case store.KindSynthesis:
		if enc, ok := synthesisAudioFormat(name); ok {
			return exportSynthesisAudio(ctx, env, ws, s, enc, f.output)
		}
		format, err := mdOrJSON(name, fromFile, func(err error) error {
			return reword(err, "a synthesis is exported as md or json, or its audio as wav, mp3, ogg, flac or aac, not %q", f.format)
		})
		if err != nil {
			return err
		}
		if err := ws.ExportSynthesis(ctx, id, format, &buf); err != nil {
			return err
		}
		what = string(format)
	default:
		format := sessions.ExportText
		if name != "" {
			g, err := sessions.ParseExportFormat(name)
			switch {
			case err == nil:
				format = g
			case !fromFile:
				return reword(err, "a transcript is exported as srt, vtt, txt or json, not %q", f.format)
			}
		}
		t, err := ws.Transcript(ctx, id)
		if err != nil {
			return err
		}
		if len(t.Captions) == 0 && t.Response == nil {
			return reword(store.ErrNotFound, "session %d (%s, “%s”) has no words to export", id, s.Kind, s.Title)
		}
		if err := sessions.Export(&buf, format, t); err != nil {
			return err
		}
		what = string(format)
	}
	return writeExport(env, f.output, buf.Bytes(), what)
}

// synthesisAudioFormat reads an audio format for a synthesis's audio: an
// extension (wav, mp3, ogg, opus, flac, aac) or an encoding of
// sessions.SaveEncodings.
func synthesisAudioFormat(name string) (string, bool) {
	name = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(name), "."))
	if name == "" {
		return "", false
	}
	if slices.Contains(sessions.SaveEncodings, name) {
		return name, true
	}
	return sessions.EncodingForPath("audio." + name)
}

// exportSynthesisAudio writes the audio kept with synthesis s in
// encoding enc, as `earshot speak -o` does.
func exportSynthesisAudio(ctx context.Context, env Env, ws *Workspace, s store.Session, enc, out string) error {
	saved, err := ws.Synthesis(ctx, s.ID)
	if err != nil {
		return err
	}
	if len(saved.PCM) == 0 {
		return reword(store.ErrNotFound, "synthesis %d (“%s”) kept no audio: export its text with --format md or json", s.ID, s.Title)
	}
	if out == "" && env.isTerminal(env.Stdout) {
		return fmt.Errorf("the audio would go to the terminal: write it to a file with -o FILE")
	}
	var buf bytes.Buffer
	if err := sessions.EncodeAudio(ctx, &buf, saved.PCM, saved.SampleRate, enc); err != nil {
		return err
	}
	seconds := float64(len(saved.PCM)) / float64(saved.SampleRate)
	return writeExport(env, out, buf.Bytes(), fmt.Sprintf("%s, %.1f s", enc, seconds))
}

// writeExport writes an export to standard output, or whole to the file
// out, and then says so as `earshot speak -o` does: what is the format.
func writeExport(env Env, out string, b []byte, what string) error {
	if out == "" || out == "-" {
		_, err := env.Stdout.Write(b)
		return err
	}
	err := sessions.WriteFile(out, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
	if err != nil {
		return fmt.Errorf("write the export: %w", err)
	}
	fmt.Fprintf(env.Stderr, "Wrote %s (%s, %s).\n", out, what, byteSize(int64(len(b))))
	return nil
}

// mdOrJSON is the Markdown or JSON format name asks for: Markdown when
// name is empty, or when it is a file's extension that names neither; a
// format asked by name that is neither is refused through wrong.
func mdOrJSON(name string, fromFile bool, wrong func(error) error) (sessions.AnalysisFormat, error) {
	if name == "" {
		return sessions.AnalysisMarkdown, nil
	}
	g, err := sessions.ParseAnalysisFormat(name)
	switch {
	case err == nil:
		return g, nil
	case !fromFile:
		return "", wrong(err)
	}
	return sessions.AnalysisMarkdown, nil
}
