package ui

import (
	"context"
	"math"
	"path/filepath"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// conversationHint is what the Conversation tab says before it starts.
const conversationHint = "Press Start (Ctrl+T) and speak: each turn appears as a card that updates as you talk and closes when the turn ends. " +
	"Tune the end-of-turn threshold and timeout while you talk; End turn (Ctrl+D) closes a turn by hand."

// conversationTab is the Conversation tab: a turn-aware view of
// /v2/listen. This file holds the tab and the life of its conversation;
// the source picker, the end-of-turn controls, the turn cards and the
// event timeline each have their own file. Its fields are touched only
// on the UI goroutine.
type conversationTab struct {
	app *App
	ui  lazyTab // its widgets, built when the tab is first shown

	source   convSource   // the microphone or recording (conversation_source.go)
	tuning   convTuning   // end-of-turn threshold, timeout and key terms (conversation_controls.go)
	turns    convTurns    // the turn cards (conversation_turns.go)
	timeline convTimeline // the events, newest first (conversation_timeline.go)

	start   *widget.Button
	endTurn *widget.Button
	level   *levelMeter
	status  *widget.Label

	settings store.Settings
	starting bool
	live     *convSession
}

// convSession is a running conversation as the tab sees it.
type convSession struct {
	c        *sessions.Conversation
	t0       time.Time // when it started, for the timeline's times
	stopping bool
	ended    int // turns ended
	source   string
	byIndex  map[int]*turnCard
	history  *sessions.HistoryEvent // what history holds of it, as last reported
}

func newConversationTab(a *App) *conversationTab {
	return &conversationTab{app: a, settings: store.DefaultSettings()}
}

func (c *conversationTab) buildUI() fyne.CanvasObject {
	picker, openFile := c.source.build(c.onOpenFile)
	c.start = widget.NewButtonWithIcon("Start", theme.MediaRecordIcon(), c.onStartStop)
	c.endTurn = widget.NewButtonWithIcon("End turn", theme.MediaSkipNextIcon(), c.onEndTurn)
	c.level = newLevelMeter()
	tuning := c.buildTuning()
	turns := c.turns.build()
	events := c.timeline.build()
	c.status = widget.NewLabel("Ready.")
	c.status.Wrapping = fyne.TextWrapWord

	toolbar := container.NewBorder(nil, nil,
		container.NewHBox(
			widget.NewIcon(micIcon),
			container.New(widthLayout{width: 300}, picker),
			openFile,
			widget.NewSeparator(),
			c.start, c.endTurn,
			container.NewPadded(c.level),
		), nil)
	split := container.NewHSplit(container.NewPadded(turns), container.NewPadded(events))
	split.Offset = 0.66
	c.updateControls()
	return container.NewBorder(
		container.NewVBox(container.NewPadded(toolbar), container.NewPadded(tuning), widget.NewSeparator()),
		container.NewVBox(widget.NewSeparator(), c.status),
		nil, nil, split)
}

func (c *conversationTab) setStatus(text string, imp widget.Importance) {
	c.status.Importance = imp
	c.status.SetText(text)
}

func (c *conversationTab) showError(what string, err error) {
	c.app.log.Warn(what, "err", err)
	c.setStatus(plainError(err), widget.DangerImportance)
	c.app.noteStatus(c.status, err, captionsReady)
}

// updateControls enables what can be done now.
func (c *conversationTab) updateControls() {
	live := c.live != nil
	if live {
		c.start.SetText("Stop")
		c.start.SetIcon(theme.MediaStopIcon())
		c.start.Importance = widget.DangerImportance
	} else {
		c.start.SetText("Start")
		c.start.SetIcon(theme.MediaRecordIcon())
		c.start.Importance = widget.HighImportance
	}
	enable(c.start, !c.starting && !(live && c.live.stopping))
	c.start.Refresh()
	enable(c.endTurn, live && !c.live.stopping)
	c.source.enable(!c.starting && !live)
}

// onStartStop starts a conversation, or stops it (Ctrl+T).
func (c *conversationTab) onStartStop() {
	switch {
	case c.live != nil:
		c.stopLive()
	case c.starting:
	default:
		c.startLive()
	}
}

// startLive starts a conversation on the chosen source. It is started,
// and its events read, off the UI goroutine; they come back through the
// pump, in batches, at most one per frame.
func (c *conversationTab) startLive() {
	c.starting = true
	c.turns.reset()
	c.timeline.reset()
	c.level.SetLevel(math.Inf(-1))
	c.setStatus("Connecting…", widget.MediumImportance)
	c.updateControls()

	opts := c.startOptions()
	req := sessions.ConversationRequest{Options: &opts}
	sourceID := c.source.selected()
	path := c.source.file
	if sourceID == fileChoice {
		req.SourceName = filepath.Base(path)
	} else {
		req.DeviceID = sourceID
	}
	started := c.app.goAsync(func(ctx context.Context) {
		if sourceID == fileChoice {
			src, err := sessions.OpenPacedFile(ctx, path, 1)
			if err != nil {
				c.app.onUI(func() { c.liveFailed(err) })
				return
			}
			req.Source = src
		}
		conv, err := c.app.ws.StartConversation(ctx, req)
		if err != nil {
			if req.Source != nil {
				req.Source.Close()
			}
			c.app.onUI(func() { c.liveFailed(err) })
			return
		}
		c.app.setConversation(conv)
		defer c.app.setConversation(nil)
		ls := &convSession{c: conv, t0: time.Now(), source: conv.SourceName(), byIndex: map[int]*turnCard{}}
		c.app.onUI(func() { c.liveStarted(ls) })
		c.app.newPump(conv.Events(), func(b []sessions.Event) { c.apply(ls, b) }).run(ctx)
		err = conv.Stop()
		c.app.onUI(func() { c.liveEnded(ls, err) })
	})
	if !started {
		c.starting = false
		c.updateControls()
	}
}

func (c *conversationTab) liveFailed(err error) {
	c.starting = false
	c.showError("start a conversation", err)
	c.updateControls()
	c.app.loaded(partAuto, err)
}

func (c *conversationTab) liveStarted(ls *convSession) {
	c.starting = false
	c.live = ls
	c.setStatus(joinDot("Listening to "+ls.source, "speak, and pause to end a turn"), widget.SuccessImportance)
	s := ls.c.Settings()
	c.tuning.setConfirm("In force: "+settingsWords(s)+".", widget.MediumImportance)
	c.updateControls()
}

// liveEnded is called once the conversation has ended and its last
// events are on screen.
func (c *conversationTab) liveEnded(ls *convSession, err error) {
	if c.live == ls {
		c.live = nil
	}
	for _, card := range ls.byIndex {
		if card.turn.State != sessions.TurnEnded {
			card.badge.Importance = widget.LowImportance
			card.badge.SetText("Not ended")
		}
	}
	c.level.SetLevel(math.Inf(-1))
	if text, imp, ended := endedWords("Stopped. "+plural(ls.ended, "turn"), ls.history, err); !ended {
		c.showError("the conversation ended", err)
	} else {
		if m, ok := medianLatency(ls); ok {
			text += " Median end-of-turn latency " + latencyWords(m) + "."
		}
		c.setStatus(text, imp)
	}
	c.updateControls()
	c.app.historyChanged(store.KindConversation)
	c.app.loaded(partAuto, err)
}

// stopLive asks the conversation to stop; its end arrives through
// liveEnded.
func (c *conversationTab) stopLive() {
	ls := c.live
	if ls == nil || ls.stopping {
		return
	}
	ls.stopping = true
	c.setStatus("Stopping…", widget.MediumImportance)
	c.updateControls()
	c.app.goAsync(func(context.Context) { _ = ls.c.Stop() })
}

// apply shows a batch of the conversation's events, in order; the level
// meter and the timeline are painted once per batch.
func (c *conversationTab) apply(ls *convSession, batch []sessions.Event) {
	var level *sessions.LevelEvent
	for _, ev := range batch {
		switch e := ev.(type) {
		case *sessions.TurnInfoEvent:
			c.turns.show(ls, e.Turn)
			if e.Event == api.EventEndOfTurn {
				ls.ended++
			}
		case *sessions.ConfigureEvent:
			c.tuning.configured(e)
		case *sessions.TurnWarningEvent:
			c.setStatus(warningWords(e), widget.WarningImportance)
		case *sessions.LevelEvent:
			level = e
		case *sessions.StateEvent:
			c.showState(e)
		case *sessions.SaveFailedEvent:
			c.showError("conversation: not saved", e)
		case *sessions.HistoryEvent:
			if words, imp := historyNotice(ls.history, e, "turns"); words != "" {
				c.setStatus(words, imp)
			}
			ls.history = e
		}
		c.timeline.add(ls.t0, ev)
	}
	if level != nil {
		c.level.SetLevel(level.RMS)
	}
	c.timeline.refresh()
}

func (c *conversationTab) showState(e *sessions.StateEvent) {
	switch e.State {
	case sessions.StateLoading:
		c.setStatus("Loading the recogniser… (the local engine loads it for the first session)", widget.MediumImportance)
	case sessions.StateStopping:
		c.setStatus("Stopping…", widget.MediumImportance)
	case sessions.StateFailed:
		c.showError("the conversation failed", e.Err)
	}
}

// warningWords says what a Warning means.
func warningWords(e *sessions.TurnWarningEvent) string {
	if e.Code == api.CodeForceEndTurnNoActive {
		return "No turn was in progress, so there was no turn to end."
	}
	if e.Description != "" {
		return "The service warns: " + sentence(e.Description)
	}
	return "The service warns: " + e.Code + "."
}
