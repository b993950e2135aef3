package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkAddSegment measures saving finals one by one, as captions do:
// each its own transaction, committed before the next.
func BenchmarkAddSegment(b *testing.B) {
	d := openTest(b)
	ctx := b.Context()
	id := newSession(b, d, "bench")
	words, _ := json.Marshal([]map[string]any{
		{"word": "the", "start": 1.0, "end": 1.2, "confidence": 0.99, "speaker": 0},
		{"word": "quarterly", "start": 1.2, "end": 1.8, "confidence": 0.97, "speaker": 0},
		{"word": "budget", "start": 1.8, "end": 2.3, "confidence": 0.98, "speaker": 0},
	})
	sp := 0
	seg := Segment{SessionID: id, Speaker: &sp, Text: "the quarterly budget is due at the end of the month, said the chair",
		Words: string(words), Confidence: 0.97}
	i := 0
	for b.Loop() {
		seg.Seq, seg.Start, seg.End = i, float64(i), float64(i)+0.9
		if _, err := d.AddSegment(ctx, seg); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "segments/s")
}

// BenchmarkSearch measures ranked searches with snippets over 100,000
// segments of 12 to 20 words, their words drawn from a vocabulary of
// 4,000 with Zipf's law, as in speech.
func BenchmarkSearch(b *testing.B) {
	const segments = 100_000
	d, err := Open(b.Context(), filepath.Join(b.TempDir(), "history.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	vocab := vocabulary(4000)
	if err := fill(b.Context(), d, segments, vocab); err != nil {
		b.Fatal(err)
	}
	queries := []struct{ name, q string }{
		{"common word", vocab[1]},
		{"middling word", vocab[200]},
		{"rare word", vocab[3900]},
		{"two words", vocab[3] + " " + vocab[40]},
		{"prefix", vocab[10][:3]},
		{"one-letter prefix", vocab[10][:1]},
		{"no match", "xyzzyplugh"},
	}
	for _, q := range queries {
		hits, err := d.Search(b.Context(), q.q, 20)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%s/%d hits", q.name, len(hits)), func(b *testing.B) {
			for b.Loop() {
				if _, err := d.Search(b.Context(), q.q, 20); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// vocabulary makes n distinct pronounceable words, most frequent first.
func vocabulary(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	cons, vows := "bcdfghjklmnprstvwz", "aeiou"
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var w strings.Builder
		for range 1 + r.IntN(3) {
			w.WriteByte(cons[r.IntN(len(cons))])
			w.WriteByte(vows[r.IntN(len(vows))])
		}
		if s := w.String(); len(s) >= 3 && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// fill writes n segments over 100 sessions in one transaction; the
// triggers index them as AddSegment's would.
func fill(ctx context.Context, d *DB, n int, vocab []string) error {
	r := rand.New(rand.NewPCG(3, 4))
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	stmt, err := tx.PrepareContext(ctx, insertSegmentSQL)
	if err != nil {
		return err
	}
	defer stmt.Close()
	var session int64
	for i := range n {
		if i%(n/100) == 0 {
			res, err := tx.ExecContext(ctx, `INSERT INTO sessions (kind, started, status) VALUES ('captions', ?, 'done')`, i)
			if err != nil {
				return err
			}
			if session, err = res.LastInsertId(); err != nil {
				return err
			}
		}
		words := make([]string, 12+r.IntN(9))
		for j := range words {
			words[j] = vocab[zipf.Uint64()]
		}
		if _, err := stmt.ExecContext(ctx, session, i, float64(i), float64(i)+2, nil, strings.Join(words, " "), "", 0.9, 0); err != nil {
			return err
		}
	}
	return tx.Commit()
}
