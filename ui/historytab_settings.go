package ui

import (
	"context"
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/store"
)

// retentionChoices are how long history may be kept, 0 for ever.
var retentionChoices = []struct {
	days int
	name string
}{
	{0, "Forever"},
	{7, "7 days"},
	{30, "30 days"},
	{90, "90 days"},
	{365, "365 days"},
}

// retentionName names a retention for people.
func retentionName(days int) string {
	for _, c := range retentionChoices {
		if c.days == days {
			return c.name
		}
	}
	return plural(days, "day")
}

// historySettings is the Settings tab's History card: how long history is
// kept, saved at once (after a confirmation when it deletes entries), and
// the room it takes. Touched only on the UI goroutine.
type historySettings struct {
	t     *settingsTab
	keep  *widget.Select
	space *widget.Label
	form  *widget.Form
	busy  bool
}

func newHistorySettings(t *settingsTab) *historySettings {
	h := &historySettings{t: t}
	names := make([]string, len(retentionChoices))
	for i, c := range retentionChoices {
		names[i] = c.name
	}
	h.keep = widget.NewSelect(names, h.onKeepChanged)
	h.space = widget.NewLabel("Measuring…")
	h.space.Wrapping = fyne.TextWrapWord
	h.form = widget.NewForm(
		&widget.FormItem{Text: "Keep history", Widget: h.keep, HintText: "Older entries are deleted, daily."},
		widget.NewFormItem("Space used", h.space),
	)
	t.app.watchHistory(func(string) { h.measure() })
	h.measure()
	return h
}

// fill shows the saved retention without counting as a choice.
func (h *historySettings) fill(s store.Settings) {
	setSelected(h.keep, retentionName(s.RetentionDays))
}

// measure shows the room the history takes, read off the UI goroutine.
func (h *historySettings) measure() {
	a := h.t.app
	a.goAsync(func(ctx context.Context) {
		sp, err := a.ws.HistorySpace(ctx)
		a.onUI(func() {
			if err != nil {
				a.log.Warn("measure the history", "err", err)
				h.space.SetText(plainError(err))
				return
			}
			n := 0
			for _, c := range sp.Sessions {
				n += c
			}
			h.space.SetText(fmt.Sprintf("%s for %s", megabytes(sp.Bytes()), plural(n, "session")))
		})
	})
}

// onKeepChanged follows a choice of retention: one that deletes entries
// kept now asks first.
func (h *historySettings) onKeepChanged(name string) {
	if h.t.filling || h.busy {
		return
	}
	days := -1
	for _, c := range retentionChoices {
		if c.name == name {
			days = c.days
		}
	}
	current := h.t.current.RetentionDays
	if days < 0 || days == current {
		return
	}
	a := h.t.app
	h.busy = true
	now := a.now()
	started := a.goAsync(func(ctx context.Context) {
		n, err := a.ws.CountExpired(ctx, days, now)
		a.onUI(func() {
			h.busy = false
			if err != nil {
				h.t.setStatus("Could not count the older entries: "+plainError(err), widget.DangerImportance)
				h.fill(h.t.current)
				return
			}
			if n == 0 {
				h.save(days)
				return
			}
			d := dialog.NewConfirm("Delete older history?",
				fmt.Sprintf("Keeping %s deletes %s started before %s, now. This cannot be undone.",
					retentionName(days), plural(n, "session"), store.RetentionCutoff(now, days).Format("2 January 2006")),
				func(ok bool) {
					if ok {
						h.save(days)
					} else {
						h.fill(h.t.current)
					}
				}, a.window)
			d.SetConfirmText("Delete")
			d.SetConfirmImportance(widget.DangerImportance)
			d.SetDismissText("Keep")
			d.Show()
		})
	})
	if !started {
		h.busy = false
	}
}

// save saves the retention of days and applies it at once.
func (h *historySettings) save(days int) {
	a := h.t.app
	h.busy = true
	now := a.now()
	a.goAsync(func(ctx context.Context) {
		s, err := a.ws.Settings(ctx)
		if err == nil {
			s.RetentionDays = days
			err = a.ws.SaveSettings(ctx, s)
		}
		n := 0
		if err == nil {
			n, err = a.ws.PruneHistory(ctx, now)
		}
		a.onUI(func() {
			h.busy = false
			if err != nil {
				h.t.setStatus("Could not keep history "+retentionName(days)+": "+plainError(err), widget.DangerImportance)
				h.fill(h.t.current)
				return
			}
			a.settingsSaved(s, false)
			h.fill(s)
			msg := "History is kept " + retentionName(days) + "."
			if days == 0 {
				msg = "History is kept forever."
			}
			if !a.ws.HistoryKept() {
				msg = "History is off for this session, so this choice lasts until Earshot closes."
			}
			if n > 0 {
				msg += fmt.Sprintf(" Deleted %s.", plural(n, "older session"))
				a.historyChanged("")
			}
			h.t.setStatus(msg, widget.SuccessImportance)
			h.measure()
		})
	})
}
