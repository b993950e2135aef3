package ui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// The Agent tab: a conversation with the voice agent, spoken or typed,
// as chat bubbles, with the functions it calls, where each reply's time
// went, and every message on the wire.

// Listening modes, as the mode picker names them.
var agentModes = []struct {
	name string
	mode sessions.ListenMode
}{
	{"Echo cancellation (speakers)", sessions.ListenEchoCancel},
	{"Half-duplex (mute while it speaks)", sessions.ListenHalfDuplex},
	{"Push to talk (hold Space)", sessions.ListenPushToTalk},
	{"Headphones (microphone as it is)", sessions.ListenOpen},
}

// agentInspectorMax bounds the messages the inspector keeps.
const agentInspectorMax = 500

type agentTab struct {
	app *App
	ui  lazyTab

	start    *widget.Button
	typeOnly *widget.Check
	mute     *widget.Check
	mode     *widget.Select
	think    *widget.Select
	voice    *widget.Select
	prompt   *boundedEntry
	apply    *widget.Button
	input    *boundedEntry
	send     *widget.Button
	status   *widget.Label

	chat       *fyne.Container
	chatScroll *container.Scroll
	wire       []sessions.AgentWireEvent
	inspector  *widget.List
	inspTitle  *widget.AccordionItem
	inspBox    *widget.Accordion

	past     []store.Session
	pastList *widget.List
	pastItem *widget.AccordionItem

	models []api.ThinkModel
	// llmNoted is set while the status says the language model server
	// cannot be used (noteLLM).
	llmNoted bool
	live     *agentLive
	// playing is a past conversation's sound playing.
	playing *sessions.Playing
	// starting is set from Start until the conversation runs or fails.
	starting bool
	// auto are the messages of Options.AutoAgent still to type.
	auto      []string
	autoBegun bool
}

// agentLive is a conversation in progress.
type agentLive struct {
	s        *sessions.AgentSession
	stopping bool
	// reply is the agent's bubble being written, nil between replies.
	reply    *widget.Label
	latency  *widget.Label
	cards    map[string]*widget.Card
	turns    int
	bargeIns int
	// idle is what the status says while the conversation runs;
	// interrupted what it says of the last barge-in, until the agent's
	// next reply.
	idle, interrupted string
	// history is what history holds of it, as last reported.
	history *sessions.HistoryEvent
}

func newAgentTab(a *App) *agentTab { return &agentTab{app: a} }

// agentIdleStatus is the Agent tab's status while no conversation runs.
const agentIdleStatus = "Start a conversation: speak, or tick Type only and type."

func (t *agentTab) buildUI() fyne.CanvasObject {
	t.start = widget.NewButtonWithIcon("Start", theme.MediaRecordIcon(), t.onStartStop)
	t.start.Importance = widget.HighImportance
	t.typeOnly = widget.NewCheck("Type only", nil)
	t.mute = widget.NewCheck("Mute", func(on bool) {
		if t.live != nil {
			t.live.s.SetMuted(on)
		}
	})
	names := make([]string, len(agentModes))
	for i, m := range agentModes {
		names[i] = m.name
	}
	t.mode = widget.NewSelect(names, nil)
	t.mode.SetSelectedIndex(0)
	t.think = widget.NewSelect(nil, func(string) { t.onThinkChanged() })
	t.think.PlaceHolder = "Model"
	t.voice = widget.NewSelect(nil, func(string) { t.onVoiceChanged() })
	t.voice.PlaceHolder = "Voice"

	t.prompt = newBoundedEditor(shortLimit, func(string) {
		t.setStatus("A prompt holds at most "+thousands(shortLimit)+" characters.", widget.WarningImportance)
	})
	t.prompt.SetPlaceHolder("What the agent is told to be, such as: You are brief and friendly.")
	t.prompt.SetMinRowsVisible(2)
	t.apply = widget.NewButton("Apply prompt", t.onApplyPrompt)

	t.input = newBoundedEntry(lineLimit, func(string) {
		t.setStatus("A message holds at most "+thousands(lineLimit)+" characters.", widget.WarningImportance)
	})
	t.input.SetPlaceHolder("Type to the agent, and press Enter")
	t.input.OnSubmitted = func(string) { t.onSend() }
	t.send = widget.NewButtonWithIcon("Send", theme.MailSendIcon(), t.onSend)

	t.status = widget.NewLabel(agentIdleStatus)
	t.status.Wrapping = fyne.TextWrapWord
	t.status.Truncation = fyne.TextTruncateEllipsis

	t.chat = container.NewVBox()
	t.chatScroll = container.NewVScroll(t.chat)

	t.inspector = widget.NewList(
		func() int { return len(t.wire) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i < len(t.wire) {
				o.(*widget.Label).SetText(wireLine(t.wire[i]))
			}
		})
	tall := canvas.NewRectangle(color.Transparent)
	tall.SetMinSize(fyne.NewSize(0, 160))
	t.inspTitle = widget.NewAccordionItem("Inspector (0 messages)", container.NewStack(tall, t.inspector))
	t.pastList = widget.NewList(
		func() int { return len(t.past) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i < len(t.past) {
				p := t.past[i]
				o.(*widget.Label).SetText(joinDot(p.Started.Format("2 Jan 15:04"), p.Title, p.Model, statusWord(p.Status)))
			}
		})
	t.pastList.OnSelected = func(i widget.ListItemID) {
		if i < len(t.past) {
			t.openPast(t.past[i])
		}
	}
	tallPast := canvas.NewRectangle(color.Transparent)
	tallPast.SetMinSize(fyne.NewSize(0, 140))
	t.pastItem = widget.NewAccordionItem("Past conversations", container.NewStack(tallPast, t.pastList))
	t.inspBox = widget.NewAccordion(t.pastItem, t.inspTitle)

	controls := container.NewHBox(t.start, t.typeOnly, t.mute, widget.NewLabel("Mode"), t.mode)
	pickers := container.New(&columnsOrRows{}, t.think, t.voice)
	promptRow := container.NewBorder(nil, nil, nil, t.apply, t.prompt)
	inputRow := container.NewBorder(nil, nil, nil, t.send, t.input)
	top := container.NewVBox(controls, pickers, promptRow)
	bottom := container.NewVBox(inputRow, t.inspBox, t.status)
	t.setupPushToTalk()
	t.updateControls()
	t.loadChoices()
	t.reload()
	return container.NewBorder(top, bottom, nil, nil, t.chatScroll)
}

// loadChoices fills the model and voice pickers, off the UI goroutine.
func (t *agentTab) loadChoices() {
	t.app.goAsync(func(ctx context.Context) {
		ch, err := t.app.ws.AgentChoices(ctx)
		saved := ""
		if s, serr := t.app.ws.Settings(ctx); serr == nil {
			saved = s.Voice
		}
		t.app.onUI(func() {
			if err != nil {
				t.showError("list the agent's models and voices", err)
			}
			t.models = ch.Models
			var names []string
			for _, m := range ch.Models {
				names = append(names, modelLabel(m))
			}
			t.think.SetOptions(names)
			if len(names) > 0 && !slices.Contains(names, t.think.Selected) {
				t.think.SetSelectedIndex(0)
			}
			t.noteLLM(ch)
			t.voice.SetOptions(ch.Voices)
			if t.voice.Selected == "" && len(ch.Voices) > 0 {
				want := api.DefaultAgentVoice
				if slices.Contains(ch.Voices, saved) {
					want = saved
				}
				if !slices.Contains(ch.Voices, want) {
					want = ch.Voices[0]
				}
				t.voice.SetSelected(want)
			}
			t.updateControls()
			if auto := t.app.opts.AutoAgent; len(auto) > 0 && !t.autoBegun && t.live == nil && !t.starting {
				t.autoBegun = true
				if err != nil {
					t.app.loaded(partAuto, err)
					return
				}
				t.auto = append([]string(nil), auto...)
				t.typeOnly.SetChecked(true)
				t.startConversation()
			}
		})
	})
}

// noteLLM says, while no conversation runs, that the language model
// server of the settings cannot be used, why, and which model the agent
// thinks with instead; and takes it back once the server answers.
func (t *agentTab) noteLLM(ch sessions.AgentChoices) {
	if t.live != nil || t.starting {
		return
	}
	switch {
	case ch.LLMErr != nil && len(ch.Models) > 0:
		m := ch.Models[0]
		name := cmp.Or(m.Name, m.ID)
		t.setStatus(plainError(ch.LLMErr)+" The agent thinks with "+name+" instead.", widget.WarningImportance)
		t.llmNoted = true
	case ch.LLMErr == nil && t.llmNoted:
		t.setStatus(agentIdleStatus, widget.MediumImportance)
		t.llmNoted = false
	}
}

// serviceChanged lists the models and voices again: the service, its
// key or the language model server changed. A tab not built yet lists
// them when it is.
func (t *agentTab) serviceChanged() {
	if t.ui.built {
		t.loadChoices()
	}
}

// nextAuto types the next of Options.AutoAgent; after the last reply the
// App is ready.
func (t *agentTab) nextAuto() {
	if t.live == nil {
		return
	}
	if len(t.auto) == 0 {
		t.app.loaded(partAuto, nil)
		return
	}
	t.input.SetText(t.auto[0])
	t.auto = t.auto[1:]
	t.onSend()
}

// modelLabel names a think model in the picker.
func modelLabel(m api.ThinkModel) string {
	if m.Name == "" || m.Name == m.ID {
		return m.ID
	}
	return m.Name + " (" + m.ID + ")"
}

func (t *agentTab) selectedModel() (api.ThinkModel, bool) {
	i := t.think.SelectedIndex()
	if i < 0 || i >= len(t.models) {
		return api.ThinkModel{}, false
	}
	return t.models[i], true
}

func (t *agentTab) selectedMode() sessions.ListenMode {
	for _, m := range agentModes {
		if m.name == t.mode.Selected {
			return m.mode
		}
	}
	return sessions.ListenEchoCancel
}

func (t *agentTab) setStatus(text string, imp widget.Importance) {
	t.status.Importance = imp
	t.status.SetText(text)
}

func (t *agentTab) showError(what string, err error) {
	t.app.log.Warn(what, "err", err)
	if errors.Is(err, device.ErrNoDevice) || errors.Is(err, device.ErrNoAudioBackend) {
		t.setStatus("No microphone found. Tick Type only to type to the agent, or connect a microphone.", widget.DangerImportance)
	} else {
		t.setStatus(plainError(err), widget.DangerImportance)
	}
	t.app.noteStatus(t.status, err, agentIdleStatus)
}

// updateControls enables what can be done now.
func (t *agentTab) updateControls() {
	live := t.live != nil
	if live {
		t.start.SetText("Stop")
		t.start.SetIcon(theme.MediaStopIcon())
		t.start.Importance = widget.DangerImportance
	} else {
		t.start.SetText("Start")
		t.start.SetIcon(theme.MediaRecordIcon())
		t.start.Importance = widget.HighImportance
	}
	_, haveModel := t.selectedModel()
	setEnabled(t.start, (live && !t.live.stopping) || (!live && !t.starting && haveModel))
	setEnabled(t.typeOnly, !live && !t.starting)
	setEnabled(t.mode, !live && !t.starting)
	setEnabled(t.mute, live && !t.typeOnly.Checked)
	setEnabled(t.send, live)
	setEnabled(t.input, live)
	setEnabled(t.apply, live)
	t.start.Refresh()
}

// setEnabled enables or disables a widget that can be.
func setEnabled(w fyne.Disableable, on bool) {
	if on {
		w.Enable()
	} else {
		w.Disable()
	}
}

func (t *agentTab) onStartStop() {
	switch {
	case t.live != nil:
		t.stop()
	case t.starting:
	default:
		t.startConversation()
	}
}

// startConversation starts a conversation, off the UI goroutine; its
// events come back through a pump.
func (t *agentTab) startConversation() {
	model, ok := t.selectedModel()
	if !ok {
		t.setStatus("Choose a model for the agent to think with.", widget.WarningImportance)
		return
	}
	t.starting = true
	t.chat.Objects = nil
	t.chat.Refresh()
	t.wire = nil
	t.inspector.Refresh()
	t.setStatus("Connecting to the agent…", widget.MediumImportance)
	t.updateControls()
	req := sessions.AgentRequest{Think: model.ID, Voice: t.voice.Selected, Prompt: strings.TrimSpace(t.prompt.Text),
		Text: t.typeOnly.Checked, Mode: t.selectedMode()}
	started := t.app.goAsync(func(ctx context.Context) {
		s, err := t.app.ws.StartAgent(ctx, req)
		if err != nil {
			t.app.onUI(func() {
				t.starting = false
				t.showError("start the conversation", err)
				t.updateControls()
				if t.auto != nil {
					t.app.loaded(partAuto, err)
				}
			})
			return
		}
		live := &agentLive{s: s, cards: map[string]*widget.Card{}}
		t.app.onUI(func() {
			t.starting = false
			t.live = live
			s.SetMuted(t.mute.Checked)
			live.idle = "Speak to the agent; speaking while it talks interrupts it."
			if req.Text {
				live.idle = "Type to the agent, and press Enter."
			}
			t.setStatus(live.idle, widget.SuccessImportance)
			t.updateControls()
			t.app.window.Canvas().Focus(t.input)
			if t.auto != nil {
				t.nextAuto()
			}
		})
		t.app.newPump(s.Events(), func(b []sessions.Event) { t.applyEvents(live, b) }).run(ctx)
		err = s.Stop()
		t.app.onUI(func() { t.ended(live, err) })
	})
	if !started {
		t.starting = false
		t.updateControls()
	}
}

func (t *agentTab) stop() {
	l := t.live
	if l == nil || l.stopping {
		return
	}
	l.stopping = true
	t.setStatus("Stopping…", widget.MediumImportance)
	t.updateControls()
	t.app.goAsync(func(context.Context) { _ = l.s.Stop() })
}

func (t *agentTab) ended(l *agentLive, err error) {
	if t.live == l {
		t.live = nil
	}
	switch {
	case err != nil:
		t.showError("the conversation ended", err)
	case !l.s.Kept():
		t.setStatus("Stopped. Nothing was said, so nothing was kept in history.", widget.MediumImportance)
	default:
		t.setStatus(savedWords("Stopped. "+plural(l.turns, "reply"), l.history))
	}
	t.updateControls()
	t.app.historyChanged(store.KindAgent)
	t.reload()
}

// reload lists the past conversations, off the UI goroutine.
func (t *agentTab) reload() {
	t.app.goAsync(func(ctx context.Context) {
		list, err := t.app.ws.Sessions(ctx, store.Filter{Kind: store.KindAgent, Limit: 100})
		t.app.onUI(func() {
			if err != nil {
				t.showError("list the past conversations", err)
				return
			}
			t.past = list
			t.pastItem.Title = fmt.Sprintf("Past conversations (%d)", len(list))
			t.inspBox.Refresh()
			t.pastList.Refresh()
		})
	})
}

// openPast shows a past conversation in the chat, when none is live.
func (t *agentTab) openPast(s store.Session) {
	if t.live != nil || t.starting {
		t.setStatus("Stop the conversation to read a past one.", widget.WarningImportance)
		return
	}
	t.app.goAsync(func(ctx context.Context) {
		lines, err := t.app.ws.AgentConversation(ctx, s.ID)
		sound, serr := t.app.ws.AgentRecording(ctx, s.ID)
		if serr != nil && !errors.Is(serr, store.ErrNotFound) {
			t.app.log.Warn("read a conversation's sound", "session", s.ID, "err", serr)
		}
		t.app.onUI(func() {
			if err != nil {
				t.showError("open the conversation", err)
				return
			}
			if t.live != nil || t.starting {
				return
			}
			t.chat.Objects = nil
			var reply *widget.Label
			for _, l := range lines {
				switch l.Role {
				case api.RoleUser:
					reply = nil
					t.addBubble(l.Text, true)
				case api.RoleAssistant:
					if reply == nil {
						reply = t.addBubble(l.Text, false)
					} else {
						reply.SetText(reply.Text + " " + l.Text)
					}
				case "function":
					reply = nil
					res := widget.NewLabel("Arguments: " + shortText(l.Arguments, 200) + "\nResult: " + shortText(l.Response, 400))
					res.Wrapping = fyne.TextWrapWord
					t.chat.Add(widget.NewCard("Function "+l.Name, "Called", res))
				case "latency":
					t.addLatency(turnStrip(l.Latency))
				}
			}
			if sound != nil {
				t.chat.Objects = append([]fyne.CanvasObject{t.recordingRow(s, sound)}, t.chat.Objects...)
			}
			t.chat.Refresh()
			t.chatScroll.ScrollToTop()
			ended := ""
			if s.Status == store.StatusInterrupted {
				ended = "interrupted: Earshot stopped before it ended"
			}
			t.setStatus(joinDot("The conversation of "+s.Started.Format("2 January 2006, 15:04"), plural(len(lines), "line"), ended), widget.MediumImportance)
		})
	})
}

// statusWord says how a past session ended, when not well.
func statusWord(status string) string {
	switch status {
	case store.StatusFailed:
		return "failed"
	case store.StatusCancelled:
		return "cancelled"
	case store.StatusRunning:
		return "unfinished"
	case store.StatusInterrupted:
		return "interrupted"
	}
	return ""
}

func (t *agentTab) onSend() {
	text := strings.TrimSpace(t.input.Text)
	if t.live == nil || text == "" {
		return
	}
	t.live.s.Say(text)
	t.input.SetText("")
}

func (t *agentTab) onApplyPrompt() {
	if t.live == nil {
		return
	}
	p := strings.TrimSpace(t.prompt.Text)
	if p == "" {
		t.setStatus("Write a prompt first.", widget.WarningImportance)
		return
	}
	t.live.s.UpdatePrompt(p)
	t.setStatus("Sending the new prompt…", widget.MediumImportance)
}

func (t *agentTab) onThinkChanged() {
	t.updateControls()
	if t.live == nil {
		return
	}
	if m, ok := t.selectedModel(); ok {
		t.live.s.UpdateThink(sessions.AgentThink(m, strings.TrimSpace(t.prompt.Text)))
		t.setStatus("Switching the agent to "+m.ID+"…", widget.MediumImportance)
	}
}

func (t *agentTab) onVoiceChanged() {
	if t.live == nil || t.voice.Selected == "" {
		return
	}
	t.live.s.UpdateVoice(sessions.AgentVoice(t.voice.Selected))
	t.setStatus("Switching the agent's voice to "+t.voice.Selected+"…", widget.MediumImportance)
}

// setupPushToTalk makes a held Space talk in push-to-talk mode, when no
// text field has the keyboard.
func (t *agentTab) setupPushToTalk() {
	dc, ok := t.app.window.Canvas().(desktop.Canvas)
	if !ok {
		return
	}
	held := func(on bool) func(*fyne.KeyEvent) {
		return func(ev *fyne.KeyEvent) {
			if ev.Name != fyne.KeySpace || t.live == nil || t.selectedMode() != sessions.ListenPushToTalk {
				return
			}
			if _, typing := t.app.window.Canvas().Focused().(*boundedEntry); typing {
				return
			}
			t.live.s.SetTalking(on)
			if on {
				t.setStatus("Talking… release Space when you are done.", widget.SuccessImportance)
			} else {
				t.setStatus("Listening to the agent.", widget.MediumImportance)
			}
		}
	}
	dc.SetOnKeyDown(held(true))
	dc.SetOnKeyUp(held(false))
}

// applyEvents shows a batch of the conversation's events, in order.
func (t *agentTab) applyEvents(l *agentLive, batch []sessions.Event) {
	grew := false
	for _, ev := range batch {
		switch e := ev.(type) {
		case *sessions.AgentTextEvent:
			grew = true
			if e.Role == api.RoleUser {
				l.reply, l.latency = nil, nil
				t.addBubble(e.Content, true)
				continue
			}
			if l.reply == nil {
				l.reply = t.addBubble(e.Content, false)
				l.turns++
			} else {
				l.reply.SetText(l.reply.Text + " " + e.Content)
			}
		case *sessions.AgentSpeakingEvent:
			l.latency = t.addLatency(latencyStrip(e))
			grew = true
			if l.interrupted != "" && t.status.Text == l.interrupted {
				t.setStatus(l.idle, widget.SuccessImportance) // a new turn: the barge-in is past
			}
			l.interrupted = ""
		case *sessions.AgentTurnLatencyEvent:
			// The client's own measures complete the service's.
			if l.latency == nil {
				l.latency = t.addLatency("")
			}
			l.latency.SetText(turnStrip(e.TurnLatency))
			grew = true
		case *sessions.AgentBargeInEvent:
			if e.Cut {
				l.bargeIns++
				l.interrupted = bargeInWords(e)
				t.setStatus(l.interrupted, widget.MediumImportance)
				l.reply = nil
			}
		case *sessions.AgentFunctionEvent:
			t.showFunction(l, e)
			grew = true
		case *sessions.AgentAudioDoneEvent:
			if t.auto != nil {
				t.nextAuto()
			}
		case *sessions.AgentAckEvent:
			t.setStatus(ackWords(e.Type), widget.SuccessImportance)
		case *sessions.AgentNoticeEvent:
			t.setStatus(noticeWords(e), widget.WarningImportance)
		case *sessions.NoSpeakerEvent:
			t.setStatus("No speaker is available: the agent's replies are shown as text only.", widget.WarningImportance)
		case *sessions.StateEvent:
			if e.State == sessions.StateFailed && e.Err != nil {
				t.showError("the conversation", e.Err)
			}
		case *sessions.AgentWireEvent:
			t.wire = append(t.wire, *e)
			if len(t.wire) > agentInspectorMax {
				t.wire = t.wire[len(t.wire)-agentInspectorMax:]
			}
		case *sessions.SaveFailedEvent:
			t.showError("save the conversation", e)
		case *sessions.HistoryEvent:
			if words, imp := historyNotice(l.history, e, "lines"); words != "" {
				t.setStatus(words, imp)
			}
			l.history = e
		}
	}
	t.inspTitle.Title = "Inspector (" + plural(len(t.wire), "message") + ")"
	t.inspBox.Refresh()
	t.inspector.Refresh()
	if grew {
		t.chatScroll.ScrollToBottom()
	}
}

// addBubble adds a chat bubble: the person's on the right, the agent's on
// the left. It returns the bubble's label, which grows as text arrives.
func (t *agentTab) addBubble(text string, user bool) *widget.Label {
	l := widget.NewLabel(text)
	l.Wrapping = fyne.TextWrapWord
	fill := theme.Color(theme.ColorNameInputBackground)
	if user {
		fill = withAlpha(theme.Color(theme.ColorNamePrimary), 0x55)
	}
	bg := canvas.NewRectangle(fill)
	bg.CornerRadius = theme.InputRadiusSize() * 2
	bubble := container.NewStack(bg, l)
	indent := canvas.NewRectangle(color.Transparent)
	indent.SetMinSize(fyne.NewSize(120, 1))
	if user {
		t.chat.Add(container.NewBorder(nil, nil, indent, nil, bubble))
	} else {
		t.chat.Add(container.NewBorder(nil, nil, nil, indent, bubble))
	}
	return l
}

func withAlpha(c color.Color, a uint8) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: a}
}

// showFunction shows a function call as a card: requested, then done.
func (t *agentTab) showFunction(l *agentLive, e *sessions.AgentFunctionEvent) {
	args := shortText(e.Arguments, 200)
	card, ok := l.cards[e.ID]
	if !ok {
		where := "on this computer"
		if !e.ClientSide {
			where = "by the service"
		}
		card = widget.NewCard("Function "+e.Name, "Called "+where, widget.NewLabel("Arguments: "+args))
		l.cards[e.ID] = card
		t.chat.Add(card)
		l.reply = nil
	}
	if !e.Done {
		return
	}
	sub := "Answered"
	if e.Took > 0 {
		sub += " in " + shortDuration(e.Took)
	}
	if e.Err != nil {
		sub = "Failed: " + plainError(e.Err)
	}
	card.SetSubTitle(sub)
	res := widget.NewLabel("Arguments: " + args + "\nResult: " + shortText(e.Result, 400))
	res.Wrapping = fyne.TextWrapWord
	card.SetContent(res)
}

// addLatency adds a reply's latency strip to the chat.
func (t *agentTab) addLatency(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.Importance = widget.LowImportance
	l.Wrapping = fyne.TextWrapWord
	t.chat.Add(l)
	return l
}

// turnStrip says where a reply's time went: measured here from the end of
// the person's speech, and the service's own figures.
func turnStrip(l sessions.TurnLatency) string {
	parts := []string{"End of speech to text " + shortDuration(l.ToText), "to the agent's voice " + shortDuration(l.ToAudio)}
	if l.Typed {
		parts = []string{"Sent to the agent's voice " + shortDuration(l.ToAudio)}
	}
	if l.Total > 0 || l.TTT > 0 || l.TTS > 0 {
		parts = append(parts, "service: thinking "+secondsWords(l.TTT)+", voice "+secondsWords(l.TTS))
	}
	return joinDot(parts...)
}

// latencyStrip says where a reply's time went, by the service.
func latencyStrip(e *sessions.AgentSpeakingEvent) string {
	return joinDot(
		"Heard to voice "+secondsWords(e.Total),
		"thinking "+secondsWords(e.TTT),
		"voice "+secondsWords(e.TTS),
	)
}

func secondsWords(s float64) string {
	return shortDuration(time.Duration(s * float64(time.Second)))
}

// bargeInWords says what the person lived as they spoke over the agent:
// how long its voice went on once theirs began.
func bargeInWords(e *sessions.AgentBargeInEvent) string {
	if e.Silenced <= 0 {
		return "You interrupted the agent, and its voice stopped."
	}
	return "You interrupted the agent: its voice stopped " + shortDuration(e.Silenced) + " after you began to speak."
}

func shortDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "under 1 ms"
	case d < 10*time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func shortText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func ackWords(typ string) string {
	switch typ {
	case api.TypePromptUpdated:
		return "The agent took the new prompt."
	case api.TypeSpeakUpdated:
		return "The agent speaks with the new voice."
	case api.TypeThinkUpdated:
		return "The agent thinks with the new model."
	case api.TypeListenUpdated:
		return "The agent listens with the new settings."
	}
	return "The agent confirmed: " + typ + "."
}

func noticeWords(e *sessions.AgentNoticeEvent) string {
	switch e.Type {
	case api.TypeInjectionRefused:
		return "The agent did not take the message: " + lowerFirst(sentence(e.Description))
	case "Refused":
		return "Not sent: " + lowerFirst(sentence(e.Description))
	case api.TypeError:
		return "The agent reported a problem: " + lowerFirst(sentence(e.Description))
	}
	return "The agent warns: " + lowerFirst(sentence(e.Description))
}

// wireLine is one line of the inspector: time, direction, type, JSON.
func wireLine(w sessions.AgentWireEvent) string {
	dir := "←"
	if w.Out {
		dir = "→"
	}
	return w.At.Format("15:04:05.000") + "  " + dir + " " + w.Type + "  " + shortText(w.JSON, 300)
}

// recordingRow offers the sound kept of a past conversation: play it, or
// save it as the file it is kept as, Ogg Opus or WAV (the person on the
// left, the agent on the right).
func (t *agentTab) recordingRow(s store.Session, sound []byte) fyne.CanvasObject {
	var play *widget.Button
	play = widget.NewButtonWithIcon("Play the conversation", theme.MediaPlayIcon(), func() {
		if t.playing != nil {
			_ = t.playing.Stop()
			return
		}
		t.playRecording(sound, play)
	})
	save := widget.NewButtonWithIcon("Save the sound…", theme.DocumentSaveIcon(), func() {
		ext := sessions.RecordingExtension(sound)
		req := pathRequest{title: "Save the conversation's sound", confirm: "Save", save: true, extensions: []string{ext},
			name: strings.TrimSuffix(exportFileName(s.Title+" "+s.Started.Format("2006-01-02 15-04"), sessions.ExportFormat("txt")), ".txt") + ext}
		t.app.askPath(req, func(path string) {
			name := filepath.Base(path)
			t.app.goAsync(func(context.Context) {
				err := sessions.WriteFile(path, func(w io.Writer) error {
					_, err := w.Write(sound)
					return err
				})
				t.app.onUI(func() {
					if err != nil {
						t.showError("save "+name, err)
						return
					}
					t.setStatus("Saved "+name+" (you on the left, the agent on the right).", widget.SuccessImportance)
				})
			})
		})
	})
	return container.NewHBox(play, save)
}

// playRecording plays a conversation's sound, both sides mixed, on the
// speaker of the settings; the button stops it.
func (t *agentTab) playRecording(sound []byte, button *widget.Button) {
	button.Disable()
	t.app.goAsync(func(ctx context.Context) {
		p, err := t.app.ws.PlayConversation(ctx, sound)
		if err != nil {
			t.app.onUI(func() {
				button.Enable()
				t.showError("play the conversation", err)
			})
			return
		}
		t.app.onUI(func() {
			t.playing = p
			button.SetText("Stop playing")
			button.SetIcon(theme.MediaStopIcon())
			button.Enable()
		})
		err = p.Wait()
		t.app.onUI(func() {
			if t.playing == p {
				t.playing = nil
			}
			button.SetText("Play the conversation")
			button.SetIcon(theme.MediaPlayIcon())
			if err != nil {
				t.showError("play the conversation", err)
				return
			}
			t.setStatus("Played the conversation.", widget.MediumImportance)
		})
	})
}
