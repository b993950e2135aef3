package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Snippets mark the words that matched between HighlightStart and
// HighlightEnd: control characters that no transcript contains, so the UI
// can split on them without escaping.
const (
	HighlightStart = "\x02"
	HighlightEnd   = "\x03"
	snippetTokens  = 16 // words of context in a snippet
)

// Limits of a search: a query longer than this is cut, and at most this
// many hits are returned.
const (
	maxQueryBytes = 1024
	maxQueryTerms = 16
	DefaultHits   = 50
	MaxHits       = 1000
)

// Hit is one match of a search.
type Hit struct {
	SessionID int64
	SegmentID int64 // 0 for a file transcript
	// Snippet is the matching text around the match, the matched words
	// between HighlightStart and HighlightEnd, elided parts shown as "…".
	Snippet string
	Start   float64 // seconds into the session; 0 for a file transcript
	Title   string  // the session's title
}

// Search finds caption segments and file transcripts that contain every
// word of query, the last word also as a prefix (so results appear while
// the user types), best match first. query is taken as plain words: quotes,
// operators and other search syntax are matched literally, never parsed,
// so no input makes Search fail. A query with no word finds nothing.
// limit <= 0 means DefaultHits; it is capped at MaxHits. With kinds, only
// sessions of those kinds are searched. A query matching more than
// rankWindow caption segments is ranked among the newest rankWindow of
// them, and a query of several words without bm25's inverse document
// frequency (see searchRows).
func (d *DB) Search(ctx context.Context, query string, limit int, kinds ...string) ([]Hit, error) {
	return d.SearchWithin(ctx, query, limit, Filter{Kinds: kinds})
}

// SearchWithin is Search among the sessions f keeps: its kinds and its
// dates (Since, Until); its paging is ignored.
func (d *DB) SearchWithin(ctx context.Context, query string, limit int, f Filter) ([]Hit, error) {
	match := matchQuery(query)
	if match == "" {
		return nil, nil
	}
	if limit <= 0 {
		limit = DefaultHits
	}
	limit = min(limit, MaxHits)
	f = Filter{Kinds: f.kinds(), Since: f.Since, Until: f.Until}
	if len(f.Kinds) > 0 {
		// A kind is a word (Session.validate); anything else is the kind
		// of no session.
		f.Kinds = slices.DeleteFunc(slices.Clone(f.Kinds), func(k string) bool { return !isWord(k) })
		if len(f.Kinds) == 0 {
			return nil, nil
		}
	}
	if len(f.Kinds) > 0 || !f.Since.IsZero() || !f.Until.IsZero() {
		hits, err := d.searchWithin(ctx, match, limit, f)
		if err != nil {
			return nil, fmt.Errorf("store: search: %w", err)
		}
		return hits, nil
	}
	rows, err := d.searchRows(ctx, match, limit)
	if err != nil {
		return nil, fmt.Errorf("store: search: %w", err)
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var (
			h     Hit
			rowid int64
		)
		if err := rows.Scan(&rowid, &h.SessionID, &h.Start, &h.Snippet, &h.Title); err != nil {
			return nil, fmt.Errorf("store: search: %w", err)
		}
		if rowid > 0 { // see migration 2: negative rowids are transcripts
			h.SegmentID = rowid
		}
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: search: %w", err)
	}
	return hits, nil
}

// minPrefixRunes is the length, in characters, from which the last word
// typed is searched as the start of a word rather than as a whole word:
// the start of a shorter word matches much of a long history ("the"
// matches then, there, they...), which took seconds over a million
// captions, and finds little the word itself does not.
const minPrefixRunes = 4

// matchQuery turns what a user typed into an FTS5 query that cannot be a
// syntax error: each word becomes a quoted string (quotes inside doubled),
// joined by FTS5's implicit AND, and the last word becomes a prefix query
// unless the input ends in a space or the word is shorter than
// minPrefixRunes. Words without a letter or digit would
// be empty strings to the tokenizer and are dropped. It returns "" when
// nothing is left.
func matchQuery(q string) string {
	if len(q) > maxQueryBytes {
		q = q[:maxQueryBytes] // a character cut in two becomes a space below
	}
	q = strings.ToValidUTF8(q, " ")
	sep := func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }
	words := strings.FieldsFunc(q, sep)
	var terms []string
	prefix := false // the last term is the last word, still being typed
	for i, w := range words {
		if len(terms) == maxQueryTerms {
			break
		}
		if strings.ContainsFunc(w, isTokenRune) {
			terms = append(terms, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
			prefix = i == len(words)-1
		}
	}
	if len(terms) == 0 {
		return ""
	}
	if r, _ := utf8.DecodeLastRuneInString(q); prefix && !sep(r) && utf8.RuneCountInString(words[len(words)-1]) >= minPrefixRunes {
		terms[len(terms)-1] += "*"
	}
	return strings.Join(terms, " ")
}

// isTokenRune reports whether the unicode61 tokenizer keeps r in a token:
// letters, numbers and private-use characters (its categories L*, N*, Co).
func isTokenRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}
