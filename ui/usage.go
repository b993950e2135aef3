package ui

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/sessions"
)

// usagePeriods are the windows the usage can cover, as shown.
var usagePeriods = []string{"Last 7 days", "Last 30 days", "Last 90 days"}

// usagePeriodDays are their lengths.
var usagePeriodDays = []int{7, 30, 90}

// usageColumns are the columns of the usage table.
var usageColumns = []tableColumn{
	{"Day", 110}, {"Requests", 90}, {"Audio (h)", 100}, {"Agent (h)", 100}, {"Characters", 110},
}

// usagePanel shows what the key has spent: its project, its balance and
// its usage day by day, from the service's management API (on the local
// engine, the engine's own records of what it served).
//
// Its fields are touched only on the UI goroutine.
type usagePanel struct {
	app *App

	period  *widget.Select
	show    *widget.Button
	project *widget.Label
	balance *widget.Label
	table   *widget.Table
	status  *widget.Label

	rows    []sessions.UsageDay // days, then the total
	loading bool
	gen     int // counts queries; only the latest one's answer is shown
}

func newUsagePanel(a *App) *usagePanel { return &usagePanel{app: a} }

// buildUI creates the panel's widgets.
func (u *usagePanel) buildUI() fyne.CanvasObject {
	heading := widget.NewLabelWithStyle("Usage", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	heading.SizeName = theme.SizeNameSubHeadingText
	u.period = widget.NewSelect(usagePeriods, func(string) { u.load() })
	u.period.SetSelectedIndex(1)
	u.show = widget.NewButtonWithIcon("Show usage", theme.ViewRefreshIcon(), u.load)
	u.project = widget.NewLabel("—")
	u.project.Truncation = fyne.TextTruncateEllipsis
	u.balance = widget.NewLabel("—")
	u.status = widget.NewLabel("Usage is read from the service's management API.")
	u.status.Wrapping = fyne.TextWrapWord
	u.status.Importance = widget.LowImportance

	u.table = newTextTable(usageColumns, func() int { return len(u.rows) }, func(row, col int, l *widget.Label) {
		l.TextStyle.Bold = row == len(u.rows)-1
		l.SetText(usageCell(u.rows[row], col))
	})
	facts := container.New(layout.NewFormLayout(),
		widget.NewLabelWithStyle("Project", fyne.TextAlignTrailing, fyne.TextStyle{Bold: true}), u.project,
		widget.NewLabelWithStyle("Balance", fyne.TextAlignTrailing, fyne.TextStyle{Bold: true}), u.balance,
	)
	top := container.NewVBox(container.NewHBox(heading, layout.NewSpacer(), u.period, u.show), facts)
	return container.NewBorder(top, u.status, nil, nil, u.table)
}

// usageCell is the text of one cell; the last row is the total.
func usageCell(d sessions.UsageDay, col int) string {
	switch col {
	case 0:
		return d.Day
	case 1:
		return strconv.Itoa(d.Requests)
	case 2:
		return strconv.FormatFloat(d.AudioHours, 'f', 4, 64)
	case 3:
		return strconv.FormatFloat(d.AgentHours, 'f', 4, 64)
	case 4:
		return strconv.Itoa(d.Characters)
	}
	return ""
}

// days is the length of the chosen period.
func (u *usagePanel) days() int {
	if i := u.period.SelectedIndex(); i >= 0 && i < len(usagePeriodDays) {
		return usagePeriodDays[i]
	}
	return sessions.UsageDays
}

// load asks for the usage off the UI goroutine; a later load supersedes
// an earlier one still under way.
func (u *usagePanel) load() {
	if u.show == nil {
		return
	}
	u.gen++
	gen, days := u.gen, u.days()
	u.loading = true
	u.show.Disable()
	u.status.Importance = widget.MediumImportance
	u.status.SetText("Asking the service for the usage…")
	started := u.app.goAsync(func(ctx context.Context) {
		qctx, cancel := context.WithTimeout(ctx, u.app.opts.queryTimeout())
		r, err := u.app.ws.Usage(qctx, "", days)
		cancel()
		if ctx.Err() != nil {
			return
		}
		u.app.onUI(func() {
			if gen == u.gen {
				u.showReport(r, err)
			}
		})
	})
	if !started {
		u.loading = false
		u.show.Enable()
	}
}

// showReport puts one answer on screen.
func (u *usagePanel) showReport(r sessions.UsageReport, err error) {
	u.loading = false
	u.show.Enable()
	if err != nil {
		u.rows = nil
		u.table.Refresh()
		u.project.SetText("—")
		u.balance.SetText("—")
		if errors.Is(err, sessions.ErrUsageUnavailable) {
			u.status.Importance = widget.WarningImportance
			u.status.SetText(err.Error())
			return
		}
		u.app.log.Warn("usage", "err", err)
		u.status.Importance = widget.DangerImportance
		u.status.SetText(plainError(err))
		return
	}
	name := r.Project.Name
	if name == "" {
		name = r.Project.ProjectID
	}
	if len(r.Projects) > 1 {
		name += fmt.Sprintf(" (one of %d projects)", len(r.Projects))
	}
	u.project.SetText(name)
	u.balance.SetText(balanceText(r.Balances))
	total := r.Total
	total.Day = "Total"
	u.rows = append(append([]sessions.UsageDay(nil), r.Days...), total)
	u.table.Refresh()
	u.status.Importance = widget.MediumImportance
	if len(r.Days) == 0 {
		u.status.SetText(fmt.Sprintf("No usage from %s to %s (%s).", r.Start, r.End, r.Backend))
		return
	}
	u.status.SetText(fmt.Sprintf("From %s to %s, as %s reports it.", r.Start, r.End, r.Backend))
}

// balanceText says what the balances are; none is said plainly.
func balanceText(bs []api.Balance) string {
	if len(bs) == 0 {
		return "None (nothing is charged, or no prepaid balance)"
	}
	parts := make([]string, 0, len(bs))
	for _, b := range bs {
		parts = append(parts, strconv.FormatFloat(b.Amount, 'f', 2, 64)+" "+strings.ToUpper(b.Units))
	}
	return strings.Join(parts, ", ")
}
