package ui

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// modelColumns are the columns of the models table and their widths.
var modelColumns = []tableColumn{
	{"Name", 210},
	{"Kind", 140},
	{"Engine", 320},
	{"Languages", 190},
	{"Batch", 70},
	{"Streaming", 90},
}

// modelCell returns the text of one column of m.
func modelCell(m ModelInfo, col int) string {
	switch col {
	case 0:
		return m.Name
	case 1:
		return m.Kind
	case 2:
		return orDash(m.Engine)
	case 3:
		return orDash(strings.Join(m.Languages, ", "))
	case 4:
		return yesNo(m.Batch)
	case 5:
		return yesNo(m.Streaming)
	}
	return ""
}

// tableColumn is a column of a table of text: its heading and width.
type tableColumn struct {
	title string
	width float32
}

// newTextTable is a table of labels under bold headings: rows counts its
// rows, fill sets the label of a row and column.
func newTextTable(cols []tableColumn, rows func() int, fill func(row, col int, l *widget.Label)) *widget.Table {
	t := widget.NewTableWithHeaders(
		func() (int, int) { return rows(), len(cols) },
		func() fyne.CanvasObject { return widget.NewLabel("") },
		func(id widget.TableCellID, o fyne.CanvasObject) {
			if id.Row < rows() {
				fill(id.Row, id.Col, o.(*widget.Label))
			}
		},
	)
	t.ShowHeaderColumn = false
	t.CreateHeader = func() fyne.CanvasObject {
		return widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	t.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if id.Col >= 0 && id.Col < len(cols) {
			o.(*widget.Label).SetText(cols[id.Col].title)
		}
	}
	for i, c := range cols {
		t.SetColumnWidth(i, c.width)
	}
	return t
}

func yesNo(b bool) string {
	if b {
		return "Yes"
	}
	return "No"
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// serviceTab shows which service the app is connected to and its models.
//
// Its fields are touched only on the UI goroutine: widget callbacks run
// there, and background results arrive through App.onUI.
type serviceTab struct {
	app *App
	ui  lazyTab // its widgets, built when the tab is first shown

	backend   *widget.Label
	url       *widget.Label
	models    *widget.Label // heading of the table, with the count
	table     *widget.Table
	empty     *widget.Label
	refresh   *widget.Button
	activity  *widget.Activity
	status    *widget.Label
	statusBar *fyne.Container // activity and status; laid out again when activity shows or hides

	usage    *usagePanel // the key's project and usage, beside the models
	sections *container.AppTabs

	rows    []ModelInfo // the rows of table
	loading bool        // an Info query is under way
	loaded  bool        // some ServiceInfo has been shown
}

// newServiceTab makes the Service tab; buildUI creates its widgets.
func newServiceTab(a *App) *serviceTab {
	return &serviceTab{app: a, usage: newUsagePanel(a)}
}

// buildUI creates the tab's widgets and lays them out.
func (s *serviceTab) buildUI() fyne.CanvasObject {
	s.backend = widget.NewLabel("—")
	s.url = widget.NewLabel("—")
	s.url.Truncation = fyne.TextTruncateEllipsis
	s.models = widget.NewLabelWithStyle("Models", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	s.models.SizeName = theme.SizeNameSubHeadingText

	s.table = newTextTable(modelColumns, func() int { return len(s.rows) }, func(row, col int, l *widget.Label) {
		l.Truncation = fyne.TextTruncateEllipsis
		l.SetText(modelCell(s.rows[row], col))
	})
	s.empty = widget.NewLabel("The service lists no models.")
	s.empty.Alignment = fyne.TextAlignCenter
	s.empty.Hide()

	s.refresh = widget.NewButtonWithIcon("Refresh", theme.ViewRefreshIcon(), s.onRefresh)
	s.activity = widget.NewActivity()
	s.activity.Hide()
	s.status = widget.NewLabel("")
	s.status.Wrapping = fyne.TextWrapWord

	heading := widget.NewLabelWithStyle("Service", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	heading.SizeName = theme.SizeNameSubHeadingText
	facts := container.New(layout.NewFormLayout(),
		widget.NewLabelWithStyle("Backend", fyne.TextAlignTrailing, fyne.TextStyle{Bold: true}), s.backend,
		widget.NewLabelWithStyle("Address", fyne.TextAlignTrailing, fyne.TextStyle{Bold: true}), s.url,
	)
	top := container.NewVBox(
		container.NewHBox(heading, layout.NewSpacer(), s.refresh),
		facts,
		widget.NewSeparator(),
	)
	s.statusBar = container.NewBorder(nil, nil, s.activity, nil, s.status)
	bottom := container.NewVBox(widget.NewSeparator(), s.statusBar)
	models := container.NewBorder(s.models, nil, nil, nil, container.NewStack(s.table, s.empty))
	s.sections = container.NewAppTabs(
		container.NewTabItemWithIcon("Models", theme.ListIcon(), models),
		container.NewTabItemWithIcon("Usage", theme.InfoIcon(), s.usage.buildUI()),
	)
	return container.NewBorder(top, bottom, nil, nil, s.sections)
}

// onRefresh asks the service for its description, unless a query is
// already under way. The query runs off the UI goroutine, bounded by
// Options.QueryTimeout, and its answer comes back through show.
func (s *serviceTab) onRefresh() {
	if s.loading {
		return
	}
	// The loading state is set before the query starts, so the answer
	// can never arrive before it.
	s.setLoading(true)
	started := s.app.goAsync(func(ctx context.Context) {
		qctx, cancel := context.WithTimeout(ctx, s.app.opts.queryTimeout())
		info, err := s.app.svc.Info(qctx)
		cancel()
		if ctx.Err() != nil {
			return // the window is gone; nobody is looking
		}
		s.app.onUI(func() { s.show(info, err) })
	})
	if !started {
		s.setLoading(false)
	}
}

// setLoading says whether a query is under way: in the header the first
// time, and in the tab's status bar once it is built.
func (s *serviceTab) setLoading(on bool) {
	s.loading = on
	if on && !s.loaded {
		s.app.header.setConnecting()
	}
	s.ui.do(func() {
		if on {
			s.refresh.Disable()
			s.activity.Show()
			s.activity.Start()
			s.status.Importance = widget.MediumImportance
			s.status.SetText("Asking the service for its models…")
		} else {
			s.activity.Stop()
			s.activity.Hide()
			s.refresh.Enable()
		}
		s.statusBar.Refresh()
	})
}

// show puts the answer of one Info query on screen. On error, what was
// shown before stays, and the status line says in plain words what failed.
func (s *serviceTab) show(info ServiceInfo, err error) {
	s.setLoading(false)
	if err != nil {
		// Nothing of the backend shown before stays: its models are not
		// this one's.
		s.app.log.Warn("service info", "err", err)
		s.loaded = false
		s.ui.do(func() {
			s.rows = nil
			s.backend.SetText(orDash(info.Backend) + " (does not answer)")
			s.url.SetText(orDash(info.URL))
			s.models.SetText("Models (unknown)")
			s.empty.Hide()
			s.table.Refresh()
			s.status.Importance = widget.DangerImportance
			s.status.SetText(plainError(err))
		})
		s.app.header.setUnreachable(info)
		s.app.serviceShown(info, err)
		return
	}

	s.loaded = true
	rows := slices.Clone(info.Models)
	asOf := s.app.now()
	s.ui.do(func() {
		s.rows = rows
		s.backend.SetText(orDash(info.Backend))
		s.url.SetText(orDash(info.URL))
		s.models.SetText(fmt.Sprintf("Models (%d)", len(s.rows)))
		if len(s.rows) == 0 {
			s.empty.Show()
		} else {
			s.empty.Hide()
		}
		s.table.Refresh()
		s.table.ScrollToTop()
		s.status.Importance = widget.MediumImportance
		s.status.SetText(fmt.Sprintf("Up to date as of %s.", asOf.Format("15:04:05")))
		s.usage.load()
	})
	s.app.header.setConnected(info)
	s.app.serviceShown(info, nil)
}
