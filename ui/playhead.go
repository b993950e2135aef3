package ui

import (
	"context"
	"time"

	"github.com/earshot-app/earshot/sessions"
)

// playheadInterval is how often a playhead is shown while audio plays,
// on a transcript or a waveform: twenty times a second moves the word
// mark and the waveform's line with the sound, at little cost.
const playheadInterval = 50 * time.Millisecond

// followPlaying shows the playhead of pl until it ends: every
// playheadInterval it hands what has been played to show, then, once pl
// has ended, its error (nil when it played to the end or was stopped) to
// ended; both run on the UI goroutine. Cancelling ctx stops following at
// once, without ended. It blocks: run it on a goroutine of the App's
// (goAsync).
func (a *App) followPlaying(ctx context.Context, pl *sessions.Playing, show func(played time.Duration), ended func(err error)) {
	t := time.NewTicker(playheadInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-pl.Done():
			err := pl.Wait()
			a.onUI(func() { ended(err) })
			return
		case <-t.C:
			played := pl.Played()
			a.onUI(func() { show(played) })
		}
	}
}
