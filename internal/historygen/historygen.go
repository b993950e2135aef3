// Package historygen writes a large made-up history into an Earshot
// database, fast, for benchmarks: sessions of every kind, each with
// captions whose words follow Zipf's law over a fixed vocabulary, as
// spoken words do. It writes through SQL in large transactions, so the
// database's own triggers index every caption for search as they do when
// the app saves one.
package historygen

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the driver store uses
)

// Config says what to write.
type Config struct {
	Captions int       // captions in all
	PerSess  int       // captions per session (at least 1)
	Words    int       // most words per caption; each has Words/2 to Words
	Start    time.Time // when the oldest session started; one follows every hour
	Seed     uint64
}

// Kinds are the kinds of session written, in turn.
var Kinds = []string{"captions", "conversation", "file", "agent", "captions", "synthesis", "analysis"}

// Vocabulary is 2,000 words, the most frequent first: common words of
// spoken English, then made-up ones for the long tail.
func Vocabulary() []string {
	v := strings.Fields(`the i you and to a it that of is in we so what know like this have be
		on do just was not but they yeah for with are about think there can if my get all me one
		go at out he as or going right really your would um because people no up mean well then
		now time when from some how our here more she had them were see an good want also
		actually by us okay lot kind said which where things very thing could other something
		say make even back much these way work only why first two need those maybe take year new
		who been into than did come again look over still many through years little before day
		let after most same great next long down meeting budget project team week invoice`)
	seen := map[string]bool{}
	for _, w := range v {
		seen[w] = true
	}
	r := rand.New(rand.NewPCG(1, 2))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	for len(v) < 2000 {
		b := make([]byte, 3+r.IntN(6))
		for i := range b {
			b[i] = letters[r.IntN(len(letters))]
		}
		if w := string(b); !seen[w] {
			seen[w] = true
			v = append(v, w)
		}
	}
	return v
}

// Fill writes cfg's history into the database at path, which store.Open
// has created (so its schema is current), and returns how many sessions
// it wrote. Durability is off while it writes: it is for benchmarks.
func Fill(ctx context.Context, path string, cfg Config) (int, error) {
	if cfg.PerSess < 1 || cfg.Words < 2 || cfg.Captions < 0 {
		return 0, fmt.Errorf("historygen: %+v is not a history", cfg)
	}
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(OFF)", "foreign_keys(0)", "busy_timeout(5000)", "cache_size(-262144)"} {
		q.Add("_pragma", p)
	}
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}).String())
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	vocab := Vocabulary()
	r := rand.New(rand.NewPCG(cfg.Seed, 7))
	zipf := rand.NewZipf(r, 1.07, 1, uint64(len(vocab)-1))
	const batch = 50_000
	sessions := 0
	for done := 0; done < cfg.Captions; {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return sessions, err
		}
		addSession, err := tx.PrepareContext(ctx, `INSERT INTO sessions (kind, title, source, backend, model, started, ended, duration, status)
			VALUES (?, ?, 'Generated', 'Local engine', 'nova-3', ?, ?, ?, 'done')`)
		if err != nil {
			_ = tx.Rollback()
			return sessions, err
		}
		addSegment, err := tx.PrepareContext(ctx, `INSERT INTO segments
			(session_id, seq, start_sec, end_sec, text, words, confidence, channel, details)
			VALUES (?, ?, ?, ?, ?, '', 0.9, 0, '')`)
		if err != nil {
			_ = tx.Rollback()
			return sessions, err
		}
		for end := min(cfg.Captions, done+batch); done < end; {
			started := cfg.Start.Add(time.Duration(sessions) * time.Hour)
			n := min(cfg.PerSess, cfg.Captions-done)
			res, err := addSession.ExecContext(ctx, Kinds[sessions%len(Kinds)],
				fmt.Sprintf("Session %d: %s %s", sessions+1, vocab[200+r.IntN(500)], vocab[200+r.IntN(500)]),
				started.UnixNano(), started.Add(time.Duration(n*3)*time.Second).UnixNano(), float64(n*3))
			if err != nil {
				_ = tx.Rollback()
				return sessions, err
			}
			id, err := res.LastInsertId()
			if err != nil {
				_ = tx.Rollback()
				return sessions, err
			}
			sessions++
			for seq := range n {
				words := make([]string, cfg.Words/2+r.IntN(cfg.Words/2+1))
				for j := range words {
					words[j] = vocab[zipf.Uint64()]
				}
				if _, err := addSegment.ExecContext(ctx, id, seq, float64(3*seq), float64(3*seq)+2.5, strings.Join(words, " ")); err != nil {
					_ = tx.Rollback()
					return sessions, err
				}
			}
			done += n
		}
		if err := tx.Commit(); err != nil {
			return sessions, err
		}
	}
	if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return sessions, err
	}
	return sessions, nil
}
