package sessions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/textseg"
	"github.com/earshot-app/earshot/internal/timecode"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// The other speaker of the meeting: a man calling playing cards
// (pocketsphinx-testdata), beside the LibriVox reader.
const cardsDir = "/usr/share/pocketsphinx/test/data/cards"

// meetingRecording is a real recording of two people taking turns: the
// LibriVox reader, the card caller, the reader, the card caller, with
// pauses between. It returns the audio and its length in seconds.
func meetingRecording(t *testing.T) ([]int16, float64) {
	t.Helper()
	pause := make([]int16, 16000*6/10)
	var pcm []int16
	for _, path := range []string{
		librivoxPath("0870"), cardsDir + "/005.wav", librivoxPath("0880"), cardsDir + "/002.wav",
	} {
		pcm = append(append(pcm, loadPCM(t, path)...), pause...)
	}
	return pcm, float64(len(pcm)) / 16000
}

// recordMeeting transcribes pcm as live captions through ws, as the
// Captions tab does with a microphone (here the recording, read as fast
// as the engine takes it), and returns the meeting's id in history.
func recordMeeting(t *testing.T, ctx context.Context, ws *sessions.Workspace, pcm []int16) int64 {
	t.Helper()
	src, err := audio.NewReplay(mono16k, pcm, audio.ReplayConfig{FrameDuration: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ws.StartCaptions(ctx, sessions.CaptionsRequest{Source: src, SourceName: "Meeting recording"})
	if err != nil {
		src.Close()
		t.Fatal(err)
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for range c.Events() {
		}
	}()
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("the captions did not end with the recording")
	}
	if err := c.Stop(); err != nil {
		t.Fatalf("the captions failed: %v", err)
	}
	<-drained
	return c.SessionID()
}

var (
	// itemLine is a topic or an action item of the notes' Markdown.
	itemLine = regexp.MustCompile(`(?m)^- \*\*(.+?)\*\* \((.+?), (\d{1,2}:\d{2}|\d+:\d{2}:\d{2})\)$`)
	// transcriptLine is a line of the transcript the notes end with.
	transcriptLine = regexp.MustCompile(`(?m)^\*\*(\d{1,2}:\d{2}|\d+:\d{2}:\d{2}) (Speaker \d+):\*\* \S`)
)

// clockSeconds reads m:ss or h:mm:ss.
func clockSeconds(t *testing.T, clock string) float64 {
	t.Helper()
	s := 0.0
	for p := range strings.SplitSeq(clock, ":") {
		n, err := strconv.Atoi(p)
		if err != nil {
			t.Fatalf("time %q: %v", clock, err)
		}
		s = s*60 + float64(n)
	}
	return s
}

// markdownPart returns the part of md under the heading "## name".
func markdownPart(md, name string) string {
	_, rest, ok := strings.Cut(md, "\n## "+name+"\n\n")
	if !ok {
		return ""
	}
	part, _, _ := strings.Cut(rest, "\n## ")
	return part
}

// TestMeetingNotesFromARecording records a real meeting of two people
// as live captions on the local engine, writes its notes through the
// app's own path, and exports them as Markdown: a summary, topics, action
// items (or the plain line saying there are none), each placed by
// speaker and time within the recording, then the transcript.
func TestMeetingNotesFromARecording(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 4*time.Minute)
	s := store.DefaultSettings()
	s.Diarize = true
	ws, db := analysisWorkspace(t, &s)
	pcm, length := meetingRecording(t)
	id := recordMeeting(t, ctx, ws, pcm)

	var parts []sessions.NotesProgress
	n, err := ws.MeetingNotes(ctx, id, false, func(p sessions.NotesProgress) { parts = append(parts, p) })
	if err != nil {
		t.Fatalf("MeetingNotes: %v", err)
	}
	if len(parts) != 1 || parts[0] != (sessions.NotesProgress{Part: 1, Parts: 1}) || n.Parts != 1 {
		t.Errorf("progress %+v, %d parts; want one request", parts, n.Parts)
	}
	var md bytes.Buffer
	if err := ws.ExportMeetingNotes(ctx, id, &md); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	t.Logf("the notes of a %.1f s recording:\n%s", length, out)

	if !strings.HasPrefix(out, "# Meeting notes: Live captions\n\nDate: ") || !strings.Contains(out, "Notes by Local engine") {
		t.Errorf("the notes do not open with their title, date and service:\n%s", out)
	}
	if summary := strings.TrimSpace(markdownPart(out, "Summary")); summary == "" || summary == sessions.NoSummary {
		t.Errorf("no summary: %q", summary)
	}
	topics := itemLine.FindAllStringSubmatch(markdownPart(out, "Topics"), -1)
	if len(topics) == 0 {
		t.Errorf("no topic placed by speaker and time:\n%s", markdownPart(out, "Topics"))
	}
	actionPart := markdownPart(out, "Action items")
	actions := itemLine.FindAllStringSubmatch(actionPart, -1)
	if len(actions) == 0 && strings.TrimSpace(actionPart) != sessions.NoActionItems {
		t.Errorf("action items neither listed nor said to be none:\n%s", actionPart)
	}
	for _, it := range append(topics, actions...) {
		if !strings.HasPrefix(it[2], "Speaker ") {
			t.Errorf("%q is placed with speaker %q", it[1], it[2])
		}
		if at := clockSeconds(t, it[3]); at > length {
			t.Errorf("%q is placed at %s, beyond the %.1f s recording", it[1], it[3], length)
		}
	}
	lines := transcriptLine.FindAllStringSubmatch(markdownPart(out, "Transcript"), -1)
	if len(lines) < 2 {
		t.Fatalf("the transcript has %d lines with time and speaker:\n%s", len(lines), markdownPart(out, "Transcript"))
	}
	speakers := map[string]bool{}
	last := 0.0
	for _, l := range lines {
		at := clockSeconds(t, l[1])
		if at > length || at < last {
			t.Errorf("transcript line at %s: beyond the %.1f s recording, or before the line above it", l[1], length)
		}
		last = at
		speakers[l[2]] = true
	}
	if len(speakers) != 2 {
		t.Errorf("the transcript names %d speakers (%v), want the two who spoke", len(speakers), speakers)
	}
	if !strings.Contains(out, "Speakers: Speaker 1, Speaker 2") {
		t.Errorf("the notes do not list the speakers")
	}

	// Reopened, the meeting has its notes, without asking again.
	again, err := ws.MeetingNotes(ctx, id, false, func(sessions.NotesProgress) { t.Error("the notes were written again") })
	if err != nil || !again.Written.Equal(n.Written) || again.Summary != n.Summary {
		t.Errorf("the second call: %v, written %v (first %v)", err, again.Written, n.Written)
	}
	if list, err := db.Sessions(ctx, store.Filter{Kind: store.KindAnalysis}); err != nil || len(list) != 0 {
		t.Errorf("analyses in history: %+v, %v; the notes belong to the meeting", list, err)
	}
}

// meetingOf saves a finished captions meeting of lines to db.
func meetingOf(t *testing.T, db *store.DB, title string, lines ...store.Segment) int64 {
	t.Helper()
	ctx := t.Context()
	id, err := db.CreateSession(ctx, store.Session{Kind: store.KindCaptions, Title: title, Backend: "Local engine",
		Started: time.Date(2025, 3, 14, 9, 30, 0, 0, time.Local)})
	if err != nil {
		t.Fatal(err)
	}
	end := 0.0
	for i, g := range lines {
		g.SessionID, g.Seq = id, i
		if _, err := db.AddSegment(ctx, g); err != nil {
			t.Fatal(err)
		}
		end = max(end, g.End)
	}
	if err := db.FinishSession(ctx, id, time.Time{}, end, store.StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	return id
}

func speaker(n int) *int { return &n }

// standup is a short meeting of two with a request in it.
var standup = []store.Segment{
	{Start: 0.5, End: 4, Speaker: speaker(0), Text: "we shipped the new dashboard release on friday and customers love the faster reports"},
	{Start: 5, End: 9, Speaker: speaker(1), Text: "the support queue is growing and the dashboard reports need more work"},
	{Start: 65, End: 70, Speaker: speaker(0), Text: "please schedule a review of the dashboard reports with the support team"},
}

// TestMeetingNotesCachedAndRedone writes a meeting's notes once: asked
// again, the saved notes come back without a request; asked to redo,
// they are written anew. A meeting renamed keeps its notes under its new
// title.
func TestMeetingNotesCachedAndRedone(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	proxy := newFaultProxy(t, localEngine(t).URL.Host)
	ws, db := analysisWorkspaceAt(t, nil, proxy.endpoint())
	id := meetingOf(t, db, "Standup", standup...)
	reads := func() int { return len(requestsTo(proxy, "POST", "/v1/read")) }

	if _, err := ws.SavedNotes(ctx, id); !errors.Is(err, sessions.ErrNoNotes) {
		t.Fatalf("SavedNotes before any: %v, want ErrNoNotes", err)
	}
	first, err := ws.MeetingNotes(ctx, id, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the request at the proxy", func() bool { return reads() == 1 })
	if len(first.ActionItems) == 0 || first.ActionItems[0].Speaker != "Speaker 1" || timecode.Of(first.ActionItems[0].At) != "1:05" {
		t.Errorf("action items %+v, want Speaker 1's request at 1:05", first.ActionItems)
	}
	if err := ws.RenameSession(ctx, id, "Monday standup"); err != nil {
		t.Fatal(err)
	}
	second, err := ws.MeetingNotes(ctx, id, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if reads() != 1 {
		t.Errorf("%d requests; the second call should read the saved notes", reads())
	}
	first.Title = "Monday standup"
	if !notesEqual(second, first) {
		t.Errorf("the saved notes\n%+v\ndiffer from those written\n%+v", second, first)
	}
	redone, err := ws.MeetingNotes(ctx, id, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the second request at the proxy", func() bool { return reads() == 2 })
	if saved, err := ws.SavedNotes(ctx, id); err != nil || !saved.Written.Equal(redone.Written) || saved.Title != "Monday standup" {
		t.Errorf("saved after redo: written %v, %q, %v; want %v", saved.Written, saved.Title, err, redone.Written)
	}
}

// notesEqual compares notes as saved: times to the nanosecond, without
// their monotonic clock readings.
func notesEqual(a, b sessions.Notes) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// TestMeetingNotesDeletedWithMeeting deletes a meeting's notes with it.
func TestMeetingNotesDeletedWithMeeting(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	ws, db := analysisWorkspace(t, nil)
	id := meetingOf(t, db, "Standup", standup...)
	other := meetingOf(t, db, "Other", standup...)
	for _, m := range []int64{id, other} {
		if _, err := ws.MeetingNotes(ctx, m, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := ws.DeleteSession(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Notes(ctx, id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the deleted meeting's notes: %v, want ErrNotFound", err)
	}
	if _, err := ws.SavedNotes(ctx, id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SavedNotes of a deleted meeting: %v, want ErrNotFound", err)
	}
	if _, err := ws.SavedNotes(ctx, other); err != nil {
		t.Errorf("the other meeting lost its notes: %v", err)
	}
}

// TestMeetingNotesRefused refuses, in plain words and without a request,
// meetings with no words or one, sessions that are not meetings and a
// language text intelligence does not read.
func TestMeetingNotesRefused(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	db := openDB(t)
	var connects int
	var mu sync.Mutex
	ws, err := sessions.NewWorkspace(sessions.WorkspaceConfig{
		History: db,
		Keys:    sessions.NewKeys(&store.Memory{}, func(string) string { return "" }),
		Local: func() (api.Endpoint, api.Secret, error) {
			mu.Lock()
			defer mu.Unlock()
			connects++
			return api.Endpoint{}, "", errors.New("no engine in this test")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	empty := meetingOf(t, db, "Silence")
	blank := meetingOf(t, db, "Blank", store.Segment{Start: 1, End: 2, Text: "  "})
	one := meetingOf(t, db, "One word", store.Segment{Start: 1, End: 2, Speaker: speaker(0), Text: "hello"})
	for _, id := range []int64{empty, blank, one} {
		_, err := ws.MeetingNotes(ctx, id, false, nil)
		if !errors.Is(err, sessions.ErrNoWords) {
			t.Errorf("notes of meeting %d: %v, want ErrNoWords", id, err)
		}
	}
	if err := sessions.ErrNoWords.Error(); err != "this meeting has no words to take notes from" {
		t.Errorf("the refusal reads %q", err)
	}
	file, err := db.CreateSession(ctx, store.Session{Kind: store.KindFile, Title: "talk.wav"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.MeetingNotes(ctx, file, false, nil); !errors.Is(err, sessions.ErrNotMeeting) || !strings.Contains(err.Error(), "a file transcription") {
		t.Errorf("notes of a file transcription: %v, want ErrNotMeeting", err)
	}
	s := store.DefaultSettings()
	s.Language = "fr"
	if err := db.SaveSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	fr := meetingOf(t, db, "Réunion", standup...)
	if _, err := ws.MeetingNotes(ctx, fr, false, nil); !errors.Is(err, sessions.ErrEnglishOnly) {
		t.Errorf("notes in French: %v, want ErrEnglishOnly", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if connects != 0 {
		t.Errorf("the service was reached %d times for requests it would refuse", connects)
	}
}

// TestMeetingNotesSentenceMarks: a line that ends in a mark that ends
// sentences, whichever textseg knows, is given no full stop of its own
// (notes kept a list of its own that lacked ⁉, ‼ and the CJK brackets,
// and wrote "so⁉." and "」.").
func TestMeetingNotesSentenceMarks(t *testing.T) {
	m := sessions.Meeting{Lines: []sessions.MeetingLine{
		{Start: 0, End: 1, Speaker: "Speaker 1", Text: "is that so⁉"},
		{Start: 1, End: 2, Speaker: "Speaker 2", Text: "「終わりました。」"},
		{Start: 2, End: 3, Speaker: "Speaker 1", Text: "great‼"},
		{Start: 3, End: 4, Speaker: "Speaker 2", Text: "see Dr."},
		{Start: 4, End: 5, Speaker: "Speaker 1", Text: "thanks"},
	}}
	want := "Is that so⁉\n「終わりました。」\nGreat‼\nSee Dr.\nThanks."
	if got := m.Document(); got != want {
		t.Errorf("Document =\n%q\nwant\n%q", got, want)
	}
}

// TestMeetingNotesLocate maps the positions of the words of a meeting's
// Document back to its lines: their speakers, and their times, a word's
// own when the line has word timings.
func TestMeetingNotesLocate(t *testing.T) {
	m := sessions.Meeting{Lines: []sessions.MeetingLine{
		{Start: 1, End: 3, Speaker: "Speaker 1", Text: "we shipped the release", Words: []api.Word{
			{Word: "we", Start: 1.0, End: 1.2}, {Word: "shipped", Start: 1.3, End: 1.8},
			{Word: "the", Start: 1.9, End: 2.0}, {Word: "release", Start: 2.1, End: 3}}},
		{Start: 3.2, End: 4, Speaker: "Speaker 1", Text: "on friday"},
		{Start: 5, End: 6, Speaker: "", Text: "   "},
		{Start: 6, End: 9, Speaker: "Speaker 2", Text: "Great. can you   send the iPhone notes?"},
		{Start: 3700, End: 3702, Speaker: "You", Text: "bye"},
	}}
	doc := m.Document()
	want := "We shipped the release\non friday.\nGreat. can you send the iPhone notes?\nBye."
	if doc != want {
		t.Errorf("Document =\n%q\nwant\n%q", doc, want)
	}
	if n := len(strings.Fields(doc)); n != m.Words() || n != 14 {
		t.Fatalf("the Document has %d words, the meeting %d; want 14", n, m.Words())
	}
	for _, tc := range []struct {
		word    int
		line    int
		speaker string
		at      float64
	}{
		{-3, 0, "Speaker 1", 1.0}, // before the first word: the first
		{0, 0, "Speaker 1", 1.0},
		{1, 0, "Speaker 1", 1.3}, // the word's own time
		{3, 0, "Speaker 1", 2.1},
		{4, 1, "Speaker 1", 3.2}, // no word timings: the line's start
		{5, 1, "Speaker 1", 3.2},
		{6, 3, "Speaker 2", 6}, // the blank line holds no word
		{12, 3, "Speaker 2", 6},
		{13, 4, "You", 3700},
	} {
		p, ok := m.Locate(tc.word)
		if !ok || p.Line != tc.line || p.Speaker != tc.speaker || p.At != tc.at {
			t.Errorf("Locate(%d) = %+v, %v; want line %d, %q at %g", tc.word, p, ok, tc.line, tc.speaker, tc.at)
		}
	}
	if p, ok := m.Locate(14); ok {
		t.Errorf("Locate past the last word = %+v, want false", p)
	}
	if _, ok := (sessions.Meeting{}).Locate(0); ok {
		t.Error("Locate in an empty meeting reports a place")
	}
}

// TestMeetingNotesSpeakers names segments' speakers: a name or the side
// of a meeting heard both ways in their details first, then the diarized
// speaker, then the channel of a meeting recorded on several.
func TestMeetingNotesSpeakers(t *testing.T) {
	for _, tc := range []struct {
		g     store.Segment
		multi bool
		want  string
	}{
		{store.Segment{Details: `{"speaker":"Dana"}`, Speaker: speaker(2)}, false, "Dana"},
		{store.Segment{Details: `{"side":"Others"}`, Speaker: speaker(2), Channel: 1}, true, sessions.SideOthers},
		{store.Segment{Details: `{"speaker":7}`, Speaker: speaker(2)}, false, "Speaker 3"},
		{store.Segment{Speaker: speaker(0), Channel: 1}, true, "Speaker 1"},
		{store.Segment{Channel: 0}, true, sessions.SideYou},
		{store.Segment{Channel: 1}, true, sessions.SideOthers},
		{store.Segment{Channel: 2}, true, "Channel 3"},
		{store.Segment{Channel: 1}, false, ""},
		{store.Segment{Details: `{"trigger":"model"}`}, false, ""},
	} {
		if got := sessions.SegmentSpeaker(tc.g, tc.multi); got != tc.want {
			t.Errorf("SegmentSpeaker(%+v, %v) = %q, want %q", tc.g, tc.multi, got, tc.want)
		}
	}

	// A meeting heard both ways names its sides in its notes, and places
	// what each side said.
	db := openDB(t)
	id := meetingOf(t, db, "Call",
		store.Segment{Start: 0, End: 2, Channel: 0, Details: `{"side":"You"}`, Text: "hello there"},
		store.Segment{Start: 2.5, End: 4, Channel: 1, Details: `{"side":"Others"}`, Text: "hi how are you"})
	m, err := sessions.LoadMeeting(t.Context(), db, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Speakers(); !slices.Equal(got, []string{sessions.SideYou, sessions.SideOthers}) {
		t.Errorf("speakers %q, want You and Others", got)
	}
	if p, ok := m.Locate(3); !ok || p.Speaker != sessions.SideOthers || p.At != 2.5 {
		t.Errorf("Locate(3) = %+v, %v; want Others at 2.5", p, ok)
	}
}

// fakeNotesReader answers /v1/read as a service with a limit of limit
// tokens: for each text, a summary of its first line, a topic on its
// first word and an intent on its last. It records every text sent.
type fakeNotesReader struct {
	limit int
	block bool // wait for the request to be cancelled

	mu    sync.Mutex
	texts []string
}

func (f *fakeNotesReader) Read(ctx context.Context, in api.ReadRequest, _ api.ReadOptions) (*api.ReadResponse, error) {
	f.mu.Lock()
	f.texts = append(f.texts, in.Text)
	f.mu.Unlock()
	if f.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if textseg.Tokens(in.Text) > f.limit {
		return nil, &api.Error{Status: 400, Code: api.CodeTokenLimitExceeded, Message: "too many tokens"}
	}
	words := strings.Fields(in.Text)
	firstLine, _, _ := strings.Cut(in.Text, "\n")
	last := len(words) - 1
	return &api.ReadResponse{Results: api.ReadResults{
		Summary: &api.ReadSummary{Text: firstLine},
		Topics: &api.Topics{Segments: []api.TopicSegment{{Text: words[0], StartWord: 0, EndWord: 0,
			Topics: []api.Topic{{Topic: "Opening", ConfidenceScore: 0.7}}}}},
		Intents: &api.Intents{Segments: []api.IntentSegment{
			{Text: words[last], StartWord: last, EndWord: last, Intents: []api.Intent{{Intent: "Close " + words[last], ConfidenceScore: 0.9}}},
			{Text: "beyond", StartWord: last + 5, EndWord: last + 9, Intents: []api.Intent{{Intent: "Nowhere", ConfidenceScore: 0.5}}},
		}},
	}}, nil
}

func (f *fakeNotesReader) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.texts)
}

// longMeeting is a meeting of n lines of ten words, two speakers taking
// turns every line, one line every 3 seconds; line i ends with the word
// "lineI".
func longMeeting(n int) sessions.Meeting {
	m := sessions.Meeting{ID: 7, Title: "All hands", Length: float64(3 * n)}
	for i := range n {
		m.Lines = append(m.Lines, sessions.MeetingLine{
			Start: float64(3 * i), End: float64(3*i + 2), Speaker: fmt.Sprintf("Speaker %d", i%2+1),
			Text: fmt.Sprintf("the quarterly numbers look good and we go on line%d", i),
		})
	}
	return m
}

// TestMeetingNotesLongMeeting writes the notes of a meeting longer than
// one request holds: it is sent in parts within the service's limit, cut
// between lines, and what each part finds is placed in the whole
// meeting. A part the service still finds too long is cut in two.
func TestMeetingNotesLongMeeting(t *testing.T) {
	t.Parallel()
	m := longMeeting(16_000) // 11 tokens a line: 176,000 tokens
	if tokens := textseg.Tokens(m.Document()); tokens <= api.ReadTokenLimit {
		t.Fatalf("the meeting has %d tokens, not more than the limit", tokens)
	}
	r := &fakeNotesReader{limit: api.ReadTokenLimit}
	nt := sessions.NoteTaker{Client: r, Backend: "Test"}
	var progress []sessions.NotesProgress
	n, err := nt.Write(t.Context(), m, func(p sessions.NotesProgress) { progress = append(progress, p) })
	if err != nil {
		t.Fatal(err)
	}
	sent := r.sent()
	if len(sent) != 2 || n.Parts != 2 || !slices.Equal(progress, []sessions.NotesProgress{{1, 2}, {2, 2}}) {
		t.Fatalf("%d requests, %d parts, progress %v; want 2", len(sent), n.Parts, progress)
	}
	if got, want := strings.Join(sent, "\n"), m.Document(); got != want {
		t.Error("the parts sent do not make up the transcript")
	}
	for _, s := range sent {
		if tok := textseg.Tokens(s); tok > sessions.DefaultNotesChunkTokens {
			t.Errorf("a part of %d tokens was sent, over %d", tok, sessions.DefaultNotesChunkTokens)
		}
	}
	checkParts(t, m, sent, n)

	// A service that counts more than Earshot refuses the first part
	// (120,000 tokens), which is cut in two and sent again; the second
	// (56,000) it takes.
	hosted := &fakeNotesReader{limit: api.ReadTokenLimit / 2}
	nt.Client = hosted
	n, err = nt.Write(t.Context(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	var answered []string
	for _, s := range hosted.sent() {
		if textseg.Tokens(s) <= hosted.limit {
			answered = append(answered, s)
		}
	}
	if len(answered) != 3 || n.Parts != 3 || len(hosted.sent()) != 4 {
		t.Fatalf("%d requests, %d answered, %d parts; want 1 refused, then its 2 halves and the second part", len(hosted.sent()), len(answered), n.Parts)
	}
	checkParts(t, m, answered, n)
}

// checkParts checks notes n of m, sent as parts: their summaries joined,
// one topic (its first mention), and each part's intent placed on the
// last line of the part, whichever part it was in.
func checkParts(t *testing.T, m sessions.Meeting, parts []string, n sessions.Notes) {
	t.Helper()
	var summaries []string
	for _, p := range parts {
		first, _, _ := strings.Cut(p, "\n")
		summaries = append(summaries, first)
	}
	if n.Summary != strings.Join(summaries, "\n\n") {
		t.Errorf("summary %q", n.Summary)
	}
	if len(n.Topics) != 1 || n.Topics[0].Line != 0 || n.Topics[0].Mentions != len(parts) || n.Topics[0].Speaker != "Speaker 1" {
		t.Errorf("topics %+v, want one first raised on line 0", n.Topics)
	}
	if len(n.ActionItems) != len(parts)+1 {
		t.Fatalf("%d action items, want one a part and one not placed", len(n.ActionItems))
	}
	line := -1
	for i, it := range n.ActionItems[:len(parts)] {
		line += strings.Count(parts[i], "\n") + 1
		l := m.Lines[line]
		wantLabel := "Close " + strings.TrimSuffix(strings.Fields(l.Text)[9], ".")
		if it.Line != line || it.Speaker != l.Speaker || it.At != l.Start || strings.TrimSuffix(it.Label, ".") != wantLabel {
			t.Errorf("action item %d: %+v, want %q on line %d (%s at %g)", i, it, wantLabel, line, l.Speaker, l.Start)
		}
	}
	if it := n.ActionItems[len(parts)]; it.Placed() || it.Label != "Nowhere" || sessions.ItemWhere(it) != "" {
		t.Errorf("an intent beyond its part: %+v, want it last and not placed", it)
	}
}

// TestMeetingNotesCancelled stops the request under way when its
// context is cancelled.
func TestMeetingNotesCancelled(t *testing.T) {
	t.Parallel()
	r := &fakeNotesReader{block: true}
	nt := sessions.NoteTaker{Client: r}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := nt.Write(ctx, longMeeting(3), nil)
		done <- err
	}()
	eventually(t, "the request", func() bool { return len(r.sent()) == 1 })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
	case <-time.After(patience):
		t.Fatal("Write did not return once cancelled")
	}
}

// TestMeetingNotesMarkdown writes notes as Markdown: times as the app
// writes them (timecode.Of), every item with its speaker and time, and
// plain lines for what was not found.
func TestMeetingNotesMarkdown(t *testing.T) {
	m := sessions.Meeting{Title: "Standup *weekly*", Started: time.Date(2025, 3, 14, 9, 30, 0, 0, time.Local), Length: 3725,
		Lines: []sessions.MeetingLine{
			{Start: 0.5, Speaker: "Speaker 1", Text: "we shipped the release"},
			{Start: 3700, Speaker: "Speaker 2", Text: "send the notes please"},
		}}
	n := sessions.Notes{Summary: "The release shipped.", Backend: "Local engine",
		Topics: []sessions.NoteItem{{Label: "Release", Passage: "we shipped the release", Line: 0, Speaker: "Speaker 1", At: 0.5, Mentions: 1}}}
	var b bytes.Buffer
	if err := sessions.WriteNotesMarkdown(&b, n, m); err != nil {
		t.Fatal(err)
	}
	want := `# Meeting notes: Standup \*weekly\*

Date: 14 March 2025 09:30 · Length: 1:02:05 · Speakers: Speaker 1, Speaker 2 · Notes by Local engine

## Summary

The release shipped.

## Topics

- **Release** (Speaker 1, 0:00)
  > we shipped the release

## Action items

No action items were found.

## Transcript

**0:00 Speaker 1:** we shipped the release

**1:01:40 Speaker 2:** send the notes please

`
	if b.String() != want {
		t.Errorf("Markdown:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestAnalysisWhole: a text sent whole is never cut into parts; over the
// limit by Earshot's count it is refused before anything is sent, and a
// refusal of the service is a TooLongError, not parts.
func TestAnalysisWhole(t *testing.T) {
	t.Parallel()
	long := longMeeting(16_000).Document() // 176,000 tokens
	r := &fakeNotesReader{limit: api.ReadTokenLimit}
	a := sessions.Analysis{Client: r, Backend: "Test"}
	s := a.Session(sessions.AnalysisInput{Text: long, Whole: true}, sessions.NotesFeatures())
	err := s.Start(t.Context())
	if err == nil {
		_, err = s.Wait(nil)
	}
	var tl *sessions.TooLongError
	if !errors.As(err, &tl) || len(r.sent()) != 0 {
		t.Fatalf("%v after %d requests; want a TooLongError before any", err, len(r.sent()))
	}

	mid := longMeeting(10_000).Document() // 110,000 tokens: Earshot sends it
	hosted := &fakeNotesReader{limit: api.ReadTokenLimit / 2}
	a.Client = hosted
	s = a.Session(sessions.AnalysisInput{Text: mid, Whole: true}, sessions.NotesFeatures())
	if err = s.Start(t.Context()); err == nil {
		_, err = s.Wait(nil)
	}
	if !errors.As(err, &tl) || len(hosted.sent()) != 1 {
		t.Fatalf("%v after %d requests; want the service's refusal as a TooLongError after one", err, len(hosted.sent()))
	}
}
