package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/internal/textseg"
	"github.com/earshot-app/earshot/store"
)

// Meeting notes: a summary, the topics and the action items (the
// intents) of a meeting's saved transcript, each topic and action item
// placed in the meeting: who said it and when. They are written through
// text intelligence (/v1/read) on the service in use, the hosted one or
// the local engine, and kept in history with the meeting (the notes
// table), which they go with when it is deleted.

// Errors of meeting notes that a person can act on.
var (
	// ErrNoWords matches a meeting with fewer than two words: there is
	// nothing to summarise.
	ErrNoWords = errors.New("this meeting has no words to take notes from")
	// ErrNoNotes matches a meeting whose notes were never written.
	ErrNoNotes = errors.New("this meeting has no notes yet")
	// ErrNotMeeting matches a session that is not a meeting (a file
	// transcription, a synthesis, an analysis, an agent conversation).
	ErrNotMeeting = errors.New("notes are written of live captions and conversations only")
)

// IsMeeting reports whether sessions of kind are meetings notes can be
// written of: live captions and turn-aware conversations.
func IsMeeting(kind string) bool {
	return kind == store.KindCaptions || kind == store.KindConversation
}

// NotesFeatures are the analyses notes ask of a transcript: a summary,
// topics, and intents, which are the action items.
func NotesFeatures() Features { return Features{Summary: true, Topics: true, Intents: true} }

// Meeting is a meeting's saved transcript as notes read it: each line
// (a caption, a turn) with its time in the meeting and its speaker's
// name.
type Meeting struct {
	ID      int64
	Kind    string
	Title   string
	Started time.Time
	// Length is the meeting's length in seconds.
	Length float64
	Lines  []MeetingLine
}

// MeetingLine is one line of a meeting's transcript.
type MeetingLine struct {
	// Start and End are seconds from the meeting's start.
	Start, End float64
	// Speaker names who spoke, "" when the meeting does not tell
	// (see SegmentSpeaker).
	Speaker string
	Text    string
	// Words are the timings of the words of Text, when the service sent
	// one for each; nil otherwise.
	Words []api.Word
}

// Speakers lists the speakers' names in the order they first spoke.
func (m Meeting) Speakers() []string {
	var out []string
	for _, l := range m.Lines {
		if l.Speaker != "" && !slices.Contains(out, l.Speaker) {
			out = append(out, l.Speaker)
		}
	}
	return out
}

// Words counts the words of the transcript.
func (m Meeting) Words() int {
	n := 0
	for _, l := range m.Lines {
		n += len(strings.Fields(l.Text))
	}
	return n
}

// maxLineWords bounds a line: a longer one (a turn that ran for minutes)
// is cut into lines of this many words, so that every request of a long
// meeting can be cut between lines.
const maxLineWords = 1000

// SegmentSpeaker names the speaker of a saved segment: the "speaker"
// string of its details when it has one (a name given to it), else the
// "side" of a meeting heard both ways (SideYou, SideOthers), else its
// diarized speaker ("Speaker 1" for the service's 0), else, in a meeting
// of several channels (multichannel), its channel (SideYou for 0,
// SideOthers for 1, "Channel N" beyond); "" when nothing tells.
func SegmentSpeaker(g store.Segment, multichannel bool) string {
	if g.Details != "" {
		var d struct {
			Speaker any `json:"speaker"`
			Side    any `json:"side"`
		}
		if json.Unmarshal([]byte(g.Details), &d) == nil {
			for _, v := range []any{d.Speaker, d.Side} {
				if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
					return strings.Join(strings.Fields(s), " ")
				}
			}
		}
	}
	if g.Speaker != nil {
		return speakerName(g.Speaker)
	}
	if multichannel {
		switch g.Channel {
		case 0:
			return SideYou
		case 1:
			return SideOthers
		}
		return fmt.Sprintf("Channel %d", g.Channel+1)
	}
	return ""
}

// MeetingArchive reads meetings back; *store.DB implements it.
type MeetingArchive interface {
	Session(ctx context.Context, id int64) (store.Session, error)
	Segments(ctx context.Context, sessionID int64) ([]store.Segment, error)
}

// LoadMeeting reads meeting id back from history.
func LoadMeeting(ctx context.Context, h MeetingArchive, id int64) (Meeting, error) {
	sess, err := h.Session(ctx, id)
	if err != nil {
		return Meeting{}, err
	}
	if !IsMeeting(sess.Kind) {
		return Meeting{}, fmt.Errorf("%w: session %d is %s", ErrNotMeeting, id, kindWords(sess.Kind))
	}
	segs, err := h.Segments(ctx, id)
	if err != nil {
		return Meeting{}, err
	}
	m := Meeting{ID: id, Kind: sess.Kind, Title: sess.Title, Started: sess.Started, Length: sess.Duration}
	channels := map[int]bool{}
	for _, g := range segs {
		channels[g.Channel] = true
	}
	for _, g := range segs {
		fields := strings.Fields(g.Text)
		if len(fields) == 0 {
			continue // not words: a conversation's timing, say
		}
		l := MeetingLine{Start: g.Start, End: g.End, Speaker: SegmentSpeaker(g, len(channels) > 1), Text: strings.Join(fields, " ")}
		if g.Words != "" {
			var words []api.Word
			if json.Unmarshal([]byte(g.Words), &words) == nil && len(words) == len(fields) {
				l.Words = words
			}
		}
		m.Lines = append(m.Lines, splitLine(l, fields)...)
		m.Length = max(m.Length, g.End)
	}
	return m, nil
}

// kindWords names a kind of session for an error.
func kindWords(kind string) string {
	switch kind {
	case store.KindFile:
		return "a file transcription"
	case store.KindSynthesis:
		return "a synthesis"
	case store.KindAgent:
		return "a voice agent conversation"
	case store.KindAnalysis:
		return "a text analysis"
	}
	return "a " + kind + " session"
}

// splitLine cuts a line of more than maxLineWords words into lines of
// that many.
func splitLine(l MeetingLine, fields []string) []MeetingLine {
	if len(fields) <= maxLineWords {
		return []MeetingLine{l}
	}
	var out []MeetingLine
	for a := 0; a < len(fields); a += maxLineWords {
		b := min(a+maxLineWords, len(fields))
		p := MeetingLine{Start: l.Start, End: l.End, Speaker: l.Speaker, Text: strings.Join(fields[a:b], " ")}
		if l.Words != nil {
			p.Words = l.Words[a:b]
			p.Start, p.End = p.Words[0].Start, p.Words[len(p.Words)-1].End
		}
		out = append(out, p)
	}
	return out
}

// sentencePause is a pause, in seconds, after which a line that does not
// end in punctuation is taken to end its sentence.
const sentencePause = 1.0

// sentences returns each line's text as it is sent to text
// intelligence: its words, the first capitalised when the line starts a
// sentence, the last given a full stop when the line ends one (at a
// change of speaker, a pause of sentencePause or the end) without
// punctuation of its own. Unpunctuated captions are thus cut into
// sentences where the speech was, not every 40 words. Neither changes
// the number of words, which the analysis's positions count.
func (m Meeting) sentences() []string {
	out := make([]string, len(m.Lines))
	starts := true
	for i, l := range m.Lines {
		words := strings.Fields(l.Text)
		if len(words) == 0 {
			continue
		}
		if starts {
			words[0] = capitaliseWord(words[0])
		}
		last := words[len(words)-1]
		ends := textseg.EndsInStop(last)
		if !ends && m.lineEndsSentence(i) {
			words[len(words)-1] = last + "."
			ends = true
		}
		starts = ends
		out[i] = strings.Join(words, " ")
	}
	return out
}

// lineEndsSentence reports whether line i ends a sentence: it is the last
// line with words, the next is another speaker's, or starts after a pause.
func (m Meeting) lineEndsSentence(i int) bool {
	for j := i + 1; j < len(m.Lines); j++ {
		next := m.Lines[j]
		if strings.TrimSpace(next.Text) == "" {
			continue
		}
		return next.Speaker != m.Lines[i].Speaker || next.Start-m.Lines[i].End >= sentencePause
	}
	return true
}

// capitaliseWord capitalises a word written all in lower case ("we",
// "i"), and leaves one with a capital of its own ("iPhone") as it is.
func capitaliseWord(w string) string {
	if strings.IndexFunc(w, unicode.IsUpper) >= 0 {
		return w
	}
	r, n := utf8.DecodeRuneInString(w)
	if !unicode.IsLower(r) {
		return w
	}
	return string(unicode.ToUpper(r)) + w[n:]
}

// Document is the transcript as it is sent to text intelligence: a line
// a caption, cut into sentences (see sentences). Its words, as
// strings.Fields counts them, are the lines' words in order, which is
// what Locate reads the analysis's positions by.
func (m Meeting) Document() string {
	var parts []string
	for _, s := range m.sentences() {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// firstWords returns the index in the Document of each line's first
// word, and the number of words.
func (m Meeting) firstWords() ([]int, int) {
	first := make([]int, len(m.Lines))
	n := 0
	for i, l := range m.Lines {
		first[i] = n
		n += len(strings.Fields(l.Text))
	}
	return first, n
}

// NotePlace is where a word of a meeting's Document was said.
type NotePlace struct {
	// Line is the index of its line in Meeting.Lines.
	Line    int
	Speaker string
	// At is when the word was said, in seconds from the meeting's start:
	// its own time when the line has word timings, else the line's start.
	At float64
}

// Locate finds where word (an index into the Document's words, as an
// analysis's start_word gives it) was said. A negative index is the
// first word; it reports false for an index beyond the last word.
func (m Meeting) Locate(word int) (NotePlace, bool) {
	first, n := m.firstWords()
	return m.locate(first, n, word)
}

func (m Meeting) locate(first []int, n, word int) (NotePlace, bool) {
	word = max(word, 0)
	if word >= n {
		return NotePlace{}, false
	}
	// The last line starting at or before word: lines without words
	// share their first word with the line after them.
	i := sort.Search(len(first), func(i int) bool { return first[i] > word }) - 1
	l := m.Lines[i]
	p := NotePlace{Line: i, Speaker: l.Speaker, At: l.Start}
	if k := word - first[i]; k < len(l.Words) {
		p.At = l.Words[k].Start
	}
	return p, true
}

// Notes are a meeting's notes.
type Notes struct {
	MeetingID int64     `json:"meeting_id"`
	Title     string    `json:"title"`
	Started   time.Time `json:"started"`
	// Length is the meeting's length in seconds.
	Length   float64  `json:"length"`
	Speakers []string `json:"speakers"`
	Summary  string   `json:"summary"`
	// Topics are in the order they were first raised.
	Topics []NoteItem `json:"topics"`
	// ActionItems are the intents found, in the order they were said.
	ActionItems []NoteItem `json:"action_items"`
	// Backend names the service that wrote them, Language the language
	// asked for.
	Backend  string `json:"backend"`
	Language string `json:"language"`
	// Written is when the notes were written; Parts is the number of
	// requests the transcript took.
	Written time.Time `json:"written"`
	Parts   int       `json:"parts"`
}

// NoteItem is a topic or an action item, placed in the meeting.
type NoteItem struct {
	Label      string  `json:"label"`
	Confidence float64 `json:"confidence"`
	// Passage is the words it was found in.
	Passage string `json:"passage"`
	// Line is the index in Meeting.Lines of the line its passage starts
	// in, -1 when the service placed it outside the transcript; Word is
	// the index of that first word in the Document.
	Line int `json:"line"`
	Word int `json:"word"`
	// Speaker said it ("" when not known), At seconds into the meeting.
	Speaker string  `json:"speaker,omitempty"`
	At      float64 `json:"at"`
	// Mentions counts the passages a topic was found in.
	Mentions int `json:"mentions,omitempty"`
}

// Placed reports whether the item was placed in the meeting.
func (it NoteItem) Placed() bool { return it.Line >= 0 }

// NotesProgress reports which request of a meeting's notes is being
// made: Part of Parts (more than one for a meeting longer than one
// request may hold).
type NotesProgress struct{ Part, Parts int }

// NoteTaker writes meetings' notes through text intelligence. Its fields
// are set before use and never change; it is safe for concurrent use.
type NoteTaker struct {
	Client Reader
	// Backend names the service for the notes.
	Backend string
	// Language is the requests' language; "" is English.
	Language string
	Logger   *slog.Logger
	Clock    Clock
	// ChunkTokens bounds the tokens (textseg.Tokens) of one request; 0
	// is DefaultNotesChunkTokens. It is never more than api.ReadTokenLimit.
	ChunkTokens int
}

// DefaultNotesChunkTokens is the most of a transcript sent in one
// request: four fifths of the service's limit, since the hosted service
// counts sub-word tokens, more than Earshot does. A request the service
// still finds too long is cut in two and sent again.
const DefaultNotesChunkTokens = api.ReadTokenLimit * 4 / 5

// notesChunk is the part of a meeting one request carries: lines from to
// to-1, their words from firstWord on in the Document.
type notesChunk struct {
	from, to  int
	firstWord int
	text      string
}

// Write writes m's notes. A meeting with fewer than two words is
// ErrNoWords, and nothing is sent. A transcript longer than one request
// holds is sent in parts, cut between lines, and their notes joined.
// progress, which may be nil, is told of each request before it is sent,
// on the calling goroutine; it must not block. Cancelling ctx stops the
// request under way; Write then returns an error matching
// context.Canceled.
func (t *NoteTaker) Write(ctx context.Context, m Meeting, progress func(NotesProgress)) (Notes, error) {
	if t.Client == nil {
		return Notes{}, errors.New("notes: a client is needed")
	}
	if m.Words() < 2 {
		return Notes{}, ErrNoWords
	}
	f := NotesFeatures()
	if err := checkReadOptions(ReadOptionsFor(t.Language, f), f); err != nil {
		return Notes{}, err
	}
	budget := t.ChunkTokens
	if budget <= 0 {
		budget = DefaultNotesChunkTokens
	}
	budget = min(budget, api.ReadTokenLimit)
	sents := m.sentences()
	first, words := m.firstWords()
	queue := chunkLines(sents, first, budget)

	clk := clock.Or(t.Clock)
	n := Notes{
		MeetingID: m.ID, Title: m.Title, Started: m.Started, Length: m.Length, Speakers: m.Speakers(),
		Backend: t.Backend, Language: ReadOptionsFor(t.Language, f).Language,
	}
	var summaries []string
	topics := map[string]int{} // lower-case label: index in n.Topics
	actions := map[string]bool{}
	for i := 0; i < len(queue); i++ {
		c := queue[i]
		if progress != nil {
			progress(NotesProgress{Part: i + 1, Parts: len(queue)})
		}
		resp, err := t.read(ctx, c.text)
		var tl *TooLongError
		if errors.As(err, &tl) && c.to-c.from > 1 {
			// The service counted more than Earshot: send it in halves.
			mid := c.from + (c.to-c.from)/2
			halves := []notesChunk{makeChunk(sents, first, c.from, mid), makeChunk(sents, first, mid, c.to)}
			queue = slices.Replace(queue, i, i+1, halves...)
			i--
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return Notes{}, fmt.Errorf("write the notes of %q: %w", m.Title, ctx.Err())
			}
			return Notes{}, fmt.Errorf("write the notes of %q: %w", m.Title, err)
		}
		n.Parts++
		res := resp.Results
		if res.Summary != nil {
			if s := strings.TrimSpace(res.Summary.Text); s != "" {
				summaries = append(summaries, s)
			}
		}
		idx := IndexWords(c.text)
		chunkWords := idx.Len()
		place := func(s LabelledSegment) NoteItem {
			it := NoteItem{Line: -1, Word: -1, Passage: strings.Join(strings.Fields(idx.Passage(c.text, s.StartWord, s.EndWord, s.Text)), " ")}
			if s.StartWord < chunkWords && s.EndWord >= 0 && s.StartWord <= s.EndWord {
				w := c.firstWord + max(s.StartWord, 0)
				if p, ok := m.locate(first, words, w); ok {
					it.Line, it.Word, it.Speaker, it.At = p.Line, w, p.Speaker, p.At
				}
			}
			return it
		}
		for _, s := range TopicSegments(res.Topics) {
			at := place(s)
			for _, l := range s.Labels {
				key := strings.ToLower(strings.TrimSpace(l.Name))
				if key == "" {
					continue
				}
				if k, ok := topics[key]; ok {
					old := &n.Topics[k]
					old.Mentions++
					old.Confidence = max(old.Confidence, l.Confidence)
					if earlier(at, *old) {
						old.Line, old.Word, old.Speaker, old.At, old.Passage = at.Line, at.Word, at.Speaker, at.At, at.Passage
					}
					continue
				}
				it := at
				it.Label, it.Confidence, it.Mentions = strings.TrimSpace(l.Name), l.Confidence, 1
				topics[key] = len(n.Topics)
				n.Topics = append(n.Topics, it)
			}
		}
		for _, s := range IntentSegments(res.Intents) {
			at := place(s)
			for _, l := range s.Labels {
				name := strings.TrimSpace(l.Name)
				key := fmt.Sprintf("%s\x00%d\x00%d", strings.ToLower(name), at.Word, at.Line)
				if name == "" || actions[key] {
					continue
				}
				actions[key] = true
				it := at
				it.Label, it.Confidence = name, l.Confidence
				n.ActionItems = append(n.ActionItems, it)
			}
		}
	}
	byPlace := func(a, b NoteItem) int {
		switch {
		case earlier(a, b):
			return -1
		case earlier(b, a):
			return 1
		}
		return 0
	}
	slices.SortStableFunc(n.Topics, byPlace)
	slices.SortStableFunc(n.ActionItems, byPlace)
	n.Summary = strings.Join(summaries, "\n\n")
	n.Written = clk.Now()
	return n, nil
}

// earlier reports whether a was said before b; items not placed come
// last.
func earlier(a, b NoteItem) bool {
	switch {
	case !a.Placed():
		return false
	case !b.Placed():
		return true
	}
	return a.Word < b.Word
}

// chunkLines cuts the lines into requests of at most budget tokens each,
// between lines; a line over the budget alone is one request.
func chunkLines(sents []string, first []int, budget int) []notesChunk {
	var out []notesChunk
	from, tokens := 0, 0
	for i, s := range sents {
		n := textseg.Tokens(s)
		if i > from && tokens+n > budget {
			out = append(out, makeChunk(sents, first, from, i))
			from, tokens = i, 0
		}
		tokens += n
	}
	if from < len(sents) {
		out = append(out, makeChunk(sents, first, from, len(sents)))
	}
	// Parts without words are not worth a request.
	return slices.DeleteFunc(out, func(c notesChunk) bool { return strings.TrimSpace(c.text) == "" })
}

func makeChunk(sents []string, first []int, from, to int) notesChunk {
	var parts []string
	for _, s := range sents[from:to] {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return notesChunk{from: from, to: to, firstWord: first[from], text: strings.Join(parts, "\n")}
}

// read sends one part of a transcript to text intelligence, through an
// analysis session, the path every document analysed takes: the same
// checks before sending, the same errors after. It is not saved as an
// analysis of its own; the notes are saved with the meeting.
func (t *NoteTaker) read(ctx context.Context, text string) (*api.ReadResponse, error) {
	a := Analysis{Client: t.Client, Backend: t.Backend, Language: t.Language, Logger: t.Logger, Clock: t.Clock}
	s := a.Session(AnalysisInput{Text: text, Whole: true}, NotesFeatures())
	if err := s.Start(ctx); err != nil {
		return nil, err
	}
	res, err := s.Wait(nil)
	if err != nil {
		return nil, err
	}
	if res == nil || res.Response == nil {
		return nil, errors.New("the service sent no analysis")
	}
	return res.Response, nil
}

// NotesArchive is where notes are kept with their meetings; *store.DB
// implements it.
type NotesArchive interface {
	MeetingArchive
	SaveNotes(ctx context.Context, sessionID int64, body []byte) error
	Notes(ctx context.Context, sessionID int64) ([]byte, error)
}

// LoadNotes reads the notes saved with meeting id, or an error matching
// ErrNoNotes when none were. Their title is the meeting's, as it is now.
func LoadNotes(ctx context.Context, h NotesArchive, id int64) (Notes, error) {
	sess, err := h.Session(ctx, id)
	if err != nil {
		return Notes{}, err
	}
	body, err := h.Notes(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Notes{}, ErrNoNotes
	}
	if err != nil {
		return Notes{}, err
	}
	var n Notes
	if err := json.Unmarshal(body, &n); err != nil {
		return Notes{}, fmt.Errorf("the saved notes are damaged: %w", err)
	}
	n.MeetingID, n.Title = id, sess.Title
	return n, nil
}

// Meeting reads a past meeting's transcript back, as notes read it.
func (w *Workspace) Meeting(ctx context.Context, id int64) (Meeting, error) {
	return LoadMeeting(ctx, w.cfg.History, id)
}

// SavedNotes reads the notes saved with meeting id, or an error matching
// ErrNoNotes when none were written.
func (w *Workspace) SavedNotes(ctx context.Context, id int64) (Notes, error) {
	return LoadNotes(ctx, w.cfg.History, id)
}

// MeetingNotes returns the notes of meeting id: those saved with it, or,
// when there are none or redo asks for new ones, notes written from its
// saved transcript with the connection and language the settings choose
// (the hosted service or the local engine), then saved with it. See
// NoteTaker.Write for progress and cancellation. Notes written that
// history could not keep are returned with the *SaveFailedEvent as the
// error; notes that could not be written leave the saved ones as they
// were.
func (w *Workspace) MeetingNotes(ctx context.Context, id int64, redo bool, progress func(NotesProgress)) (Notes, error) {
	if !redo {
		n, err := w.SavedNotes(ctx, id)
		if !errors.Is(err, ErrNoNotes) {
			return n, err
		}
	}
	m, err := w.Meeting(ctx, id)
	if err != nil {
		return Notes{}, err
	}
	// Refuse what would be refused before connecting (which may start
	// the local engine).
	if m.Words() < 2 {
		return Notes{}, ErrNoWords
	}
	s, err := w.Settings(ctx)
	if err != nil {
		return Notes{}, err
	}
	f := NotesFeatures()
	if err := checkReadOptions(ReadOptionsFor(s.Language, f), f); err != nil {
		return Notes{}, err
	}
	conn, err := w.Connection(ctx)
	if err != nil {
		return Notes{}, err
	}
	t := NoteTaker{Client: conn.Client, Backend: conn.Name, Language: s.Language, Logger: w.log}
	n, err := t.Write(WireContext(ctx, id), m, progress) // kept with the meeting
	if err != nil {
		return Notes{}, err
	}
	body, err := json.Marshal(n)
	if err == nil {
		err = w.cfg.History.SaveNotes(ctx, id, body)
	}
	if err != nil {
		w.log.Warn("meeting notes not saved", "session", id, "err", err)
		return n, &SaveFailedEvent{What: "the meeting notes", Plural: true, Err: err}
	}
	return n, nil
}
