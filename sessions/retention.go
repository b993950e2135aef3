package sessions

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/store"
)

// PruneEvery is how often Retention applies the settings' retention while
// the app runs.
const PruneEvery = 24 * time.Hour

// HistorySpace measures the room the history takes on disk.
func (w *Workspace) HistorySpace(ctx context.Context) (store.Space, error) {
	return w.cfg.History.Space(ctx)
}

// CountExpired returns how many saved sessions a retention of days days
// would delete now; 0 for days <= 0 (keep everything).
func (w *Workspace) CountExpired(ctx context.Context, days int, now time.Time) (int, error) {
	cutoff := store.RetentionCutoff(now, days)
	if cutoff.IsZero() {
		return 0, nil
	}
	return w.cfg.History.CountOlder(ctx, cutoff)
}

// PruneHistory deletes the sessions older than the saved settings keep,
// as of now, and returns how many it deleted. It never deletes a running
// session. With the settings keeping everything it deletes nothing.
func (w *Workspace) PruneHistory(ctx context.Context, now time.Time) (int, error) {
	s, err := w.Settings(ctx)
	if err != nil {
		return 0, err
	}
	cutoff := store.RetentionCutoff(now, s.RetentionDays)
	if cutoff.IsZero() {
		return 0, nil
	}
	n, err := w.cfg.History.Prune(ctx, cutoff)
	if err != nil {
		return n, fmt.Errorf("apply the history's retention: %w", err)
	}
	if n > 0 {
		w.log.Info("deleted history past its retention", "sessions", n, "days", s.RetentionDays)
	}
	return n, nil
}

// Retention applies the settings' retention to history once when it
// starts and then every PruneEvery, on a goroutine it owns, until Stop.
type Retention struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// StartRetention starts pruning the history under ctx. c tells the time
// and paces the prunes (nil for the system's clock); pruned, when not
// nil, is called on the pruning goroutine after every prune with what it
// deleted, so that a view can list the history again. Stop ends it.
func (w *Workspace) StartRetention(ctx context.Context, c clock.Clock, pruned func(n int, err error)) *Retention {
	c = clock.Or(c)
	ctx, cancel := context.WithCancel(ctx)
	r := &Retention{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		t := c.NewTicker(PruneEvery)
		defer t.Stop()
		for {
			n, err := w.PruneHistory(ctx, c.Now())
			if err != nil && ctx.Err() == nil {
				w.log.Warn("prune the history", "err", err)
			}
			if pruned != nil && ctx.Err() == nil {
				pruned(n, err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C():
			}
		}
	}()
	return r
}

// Stop ends the pruning and waits for a prune under way to end. It is
// safe to call more than once, and on a nil Retention.
func (r *Retention) Stop() {
	if r == nil {
		return
	}
	r.once.Do(r.cancel)
	<-r.done
}

// HistoryHit is a session a search found, with its best match.
type HistoryHit struct {
	Session store.Session
	store.Hit
	// Located says that Start is where in the recording the match was
	// said: always for a caption, and for a file transcription when its
	// captions hold the match (see LocateHit).
	Located bool
}

// SearchHistory finds the sessions whose words match query among those f
// keeps (its kinds and dates; not its paging), best match first, one hit
// per session, at most limit of them.
func (w *Workspace) SearchHistory(ctx context.Context, query string, limit int, f store.Filter) ([]HistoryHit, error) {
	hits, err := w.cfg.History.SearchWithin(ctx, query, limit, f)
	if err != nil {
		return nil, err
	}
	var ids []int64
	seen := map[int64]bool{}
	for _, h := range hits {
		if !seen[h.SessionID] {
			seen[h.SessionID] = true
			ids = append(ids, h.SessionID)
		}
	}
	byID, err := w.cfg.History.SessionsByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	var out []HistoryHit
	located := 0 // file transcriptions read back to locate their hit
	for _, h := range hits {
		s, ok := byID[h.SessionID]
		if !ok {
			continue // deleted since, or already listed
		}
		delete(byID, h.SessionID)
		hit := HistoryHit{Session: s, Hit: h, Located: h.SegmentID > 0}
		if !hit.Located && s.Kind == store.KindFile && located < LocateMax {
			located++
			hit.Start, hit.Located = w.LocateHit(ctx, h)
		}
		if out = append(out, hit); len(out) == limit {
			break
		}
	}
	return out, nil
}

// HasAudio reports whether session id has its audio kept, so that it can
// be played or run again.
func (w *Workspace) HasAudio(ctx context.Context, id int64) (bool, error) {
	return w.cfg.History.HasAudio(ctx, id)
}
