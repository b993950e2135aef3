package sessions

import (
	"sort"
	"time"

	"github.com/earshot-app/earshot/api"
)

// AnalysisResult is a finished analysis, fresh or reopened from history.
type AnalysisResult struct {
	// SessionID is its id in history; 0 when it was not saved.
	SessionID int64
	// History is what history holds of an analysis just made, as its
	// session's final HistoryEvent says; zero for one read back.
	History Keeping
	Title   string
	// Source names the document for people: the file's name, the URL
	// (never with credentials or query), or "Pasted text".
	Source string
	// SourceKind is SourceText, SourceFile or SourceURL.
	SourceKind string
	// Text is the document analysed; "" when a document named by URL
	// could not be fetched for the source view (TextErr says why).
	Text    string
	TextErr error
	// Features were asked for; Language is the request's.
	Features Features
	Language string
	// Backend names the service that answered.
	Backend string
	Created time.Time
	// Response is the service's answer; for a document analysed in
	// parts, the parts' answers merged, with word positions in the whole
	// document.
	Response *api.ReadResponse
	// Parts are the parts a document longer than one request takes was
	// analysed in, in order; nil when it was analysed whole. PartCount
	// says how many.
	Parts []AnalysisPart
	// Format is the source's format, as document.Format names it
	// ("text" for pasted text); "" for a plain-text URL the service
	// fetched.
	Format string
	// Pages are where the pages of a paged source (a PDF) start, in
	// order; nil for a source without pages. PageOf uses them.
	Pages []PageStart

	words *WordIndex
}

// PageStart is where a page of the source starts: its number (from 1)
// and the index of its first word in the document (as WordIndex counts).
type PageStart struct {
	Page      int `json:"page"`
	StartWord int `json:"start_word"`
}

// PartCount is how many parts the document was analysed in: 1 when it
// was analysed whole.
func (r *AnalysisResult) PartCount() int { return max(len(r.Parts), 1) }

// PageAtOffset returns the page of the source that holds byte offset of
// Text, or 0 when the source has no pages.
func (r *AnalysisResult) PageAtOffset(offset int) int {
	if len(r.Pages) == 0 {
		return 0
	}
	w := r.Words()
	return r.PageOf(sort.SearchInts(w.starts, offset+1) - 1)
}

// PageOf returns the page of the source that holds word startWord of the
// document (a segment's start_word), or 0 when the source has no pages.
func (r *AnalysisResult) PageOf(startWord int) int {
	i := sort.Search(len(r.Pages), func(i int) bool { return r.Pages[i].StartWord > startWord })
	if i == 0 {
		if len(r.Pages) == 0 {
			return 0
		}
		return r.Pages[0].Page
	}
	return r.Pages[i-1].Page
}

// Words indexes the words of Text, which the response's segments count.
func (r *AnalysisResult) Words() *WordIndex {
	if r.words == nil {
		r.words = IndexWords(r.Text)
	}
	return r.words
}

// Passage returns the words startWord to endWord of the document, or
// fallback (the segment's own text) when the document does not hold them.
func (r *AnalysisResult) Passage(startWord, endWord int, fallback string) string {
	if r.Text == "" {
		return fallback
	}
	return r.Words().Passage(r.Text, startWord, endWord, fallback)
}
