package store

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/earshot-app/earshot/internal/historygen"
)

// BenchmarkOpen measures what SQLite's own check costs at open, on
// histories of 10,000 to 1,000,000 captions (historygen, ten a session,
// 8 to 16 words each): a whole Open (checkedAtOpen included), the check
// of those tables alone, and the check of the whole file (Check), each
// in ms. -short leaves out the million.
//
//	go test -run '^$' -bench BenchmarkOpen -benchtime 3x ./store/
func BenchmarkOpen(b *testing.B) {
	sizes := []int{10_000, 100_000, 1_000_000}
	if testing.Short() {
		sizes = sizes[:2]
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("captions=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "history.db")
			d, err := Open(b.Context(), path)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := historygen.Fill(b.Context(), path, historygen.Config{Captions: n, PerSess: 10, Words: 16,
				Start: time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC), Seed: 1}); err != nil {
				b.Fatal(err)
			}
			if err := d.Close(); err != nil {
				b.Fatal(err)
			}
			var open, tables, whole time.Duration
			for b.Loop() {
				t0 := time.Now()
				d, err := Open(b.Context(), path)
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := quickCheck(b.Context(), d.w, checkedAtOpen); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				if err := d.Check(b.Context()); err != nil {
					b.Fatal(err)
				}
				t3 := time.Now()
				if err := d.Close(); err != nil {
					b.Fatal(err)
				}
				open, tables, whole = open+t1.Sub(t0), tables+t2.Sub(t1), whole+t3.Sub(t2)
			}
			ms := func(d time.Duration) float64 { return float64(d) / float64(b.N) / 1e6 }
			b.ReportMetric(ms(open), "open-ms")
			b.ReportMetric(ms(tables), "check-at-open-ms")
			b.ReportMetric(ms(whole), "check-all-ms")
		})
	}
}
