package ui

import (
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"

	"github.com/earshot-app/earshot/internal/count"
)

// when says when t was, as briefly as now allows: "Today 15:04",
// "Yesterday 09:12", "3 Mar 15:04", or "3 Mar 2025" for another year.
func when(t, now time.Time) string {
	if t.IsZero() {
		return "—"
	}
	t, now = t.Local(), now.Local()
	y, m, d := now.Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, time.Local)
	switch {
	case !t.Before(today):
		return "Today " + t.Format("15:04")
	case !t.Before(today.AddDate(0, 0, -1)):
		return "Yesterday " + t.Format("15:04")
	case t.Year() == now.Year():
		return t.Format("2 Jan 15:04")
	}
	return t.Format("2 Jan 2006")
}

// megabytes writes a byte count for people.
func megabytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d bytes", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.0f kB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// plural says n of noun, given in the singular: "7 replies" (count.Of,
// the one place a number meets a noun).
func plural(n int, noun string) string { return count.Of(n, noun) }

// joinDot joins the non-empty parts with a middle dot.
func joinDot(parts ...string) string {
	kept := parts[:0:0]
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, " · ")
}

// widthLayout gives its objects a fixed width and their own minimum
// height: a picker that should not grow with the window, or jump in width
// as its choice changes.
type widthLayout struct{ width float32 }

func (l widthLayout) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objects {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(size)
	}
}

func (l widthLayout) MinSize(objects []fyne.CanvasObject) fyne.Size {
	h := float32(0)
	for _, o := range objects {
		h = max(h, o.MinSize().Height)
	}
	return fyne.NewSize(l.width, h)
}
