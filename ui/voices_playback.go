package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// voicesRun is what the Voices tab speaks: a synthesis, a comparison of
// two voices or kept audio played again, with its waveform, time to
// first audio and turns, and the audio each run leaves to play again
// and save. At most one runs at a time.
type voicesRun struct {
	play       *widget.Button
	stop       *widget.Button
	compare    *widget.Button
	wave       *waveform
	metrics    *widget.Label
	turnBox    *fyne.Container
	turnLabels map[int]*widget.Label
	results    *fyne.Container

	syn     *sessions.Synthesis  // the synthesis speaking, if any
	cmp     *sessions.Comparison // the comparison speaking, if any
	playing *sessions.Playing    // the kept audio playing again, if any
	side    string               // the side of the comparison speaking: "A", "B" or ""
	kept    []keptAudio          // the last synthesis, or both sides of a comparison

	// history is what history holds of the last synthesis, once it ended.
	history *sessions.HistoryEvent

	autoSpoken bool // Options.AutoSpeak was started
	autoing    bool // the AutoSpeak synthesis is under way
	// unsaid says what the voice of the synthesis does not say, "" for
	// nothing (sessions.TextSkippedEvent).
	unsaid string
}

// keptAudio is a synthesis kept for playing again and saving.
type keptAudio struct {
	label string
	pcm   []int16
	rate  int
	ttfa  time.Duration
}

// buildRun creates the run's buttons and its views.
func (v *voicesTab) buildRun() {
	r := &v.run
	r.play = widget.NewButtonWithIcon("Play", theme.MediaPlayIcon(), v.onPlay)
	r.play.Importance = widget.HighImportance
	r.stop = widget.NewButtonWithIcon("Stop", theme.MediaStopIcon(), v.onStop)
	r.compare = widget.NewButtonWithIcon("Compare A/B", theme.ViewRefreshIcon(), v.onCompare)
	r.wave = newWaveform()
	r.metrics = widget.NewLabel("Time to first audio: –")
	r.turnBox = container.NewVBox()
	r.results = container.NewVBox()
}

// busy reports whether something is speaking.
func (r *voicesRun) busy() bool { return r.syn != nil || r.cmp != nil || r.playing != nil }

// onPlay speaks the text with the chosen voice.
func (v *voicesTab) onPlay() {
	if v.busy() || v.voices == nil {
		return
	}
	req := v.controls.request()
	if err := req.Check(); err != nil {
		v.setStatus(plainError(err), widget.WarningImportance)
		v.autoDone(err)
		return
	}
	v.persist()
	v.begin("Speaking with " + req.Voice + "…")
	voices := v.voices
	v.app.goAsync(func(ctx context.Context) {
		s, err := voices.Synthesize(ctx, req)
		if err != nil {
			v.app.onUI(func() { v.updateControls(); v.showError("speak", err); v.autoDone(err) })
			return
		}
		v.app.onUI(func() { v.run.syn = s; v.run.side = ""; v.updateControls() })
		v.app.newPump(s.Events(), v.apply).run(ctx)
		err = s.Stop()
		res := s.Result()
		v.app.onUI(func() {
			v.run.syn = nil
			v.finish(res, err)
		})
	})
}

// onCompare speaks the text with voice A, then voice B.
func (v *voicesTab) onCompare() {
	if v.busy() || v.voices == nil {
		return
	}
	i := v.controls.voiceB.SelectedIndex()
	if i < 0 || i >= len(v.controls.all) {
		return
	}
	req := v.controls.request()
	if err := req.Check(); err != nil {
		v.setStatus(plainError(err), widget.WarningImportance)
		return
	}
	voiceB := v.controls.all[i].Name
	v.begin(fmt.Sprintf("Comparing %s with %s…", req.Voice, voiceB))
	voices := v.voices
	v.app.goAsync(func(ctx context.Context) {
		c, err := voices.Compare(ctx, req, voiceB)
		if err != nil {
			v.app.onUI(func() { v.updateControls(); v.showError("compare", err) })
			return
		}
		v.app.onUI(func() { v.run.cmp = c; v.updateControls() })
		v.app.newPump(c.Events(), v.apply).run(ctx)
		err = c.Stop()
		results := c.Results()
		v.app.onUI(func() {
			v.run.cmp = nil
			v.updateControls()
			v.run.kept = nil
			v.run.results.RemoveAll()
			for i, r := range results {
				v.keep(fmt.Sprintf("%s: %s", string(rune('A'+i)), r.Request.Voice), r)
			}
			v.app.historyChanged(store.KindSynthesis)
			if err != nil {
				v.showError("compare", err)
				return
			}
			v.setStatus("Compared: play either again, or save it.", widget.SuccessImportance)
		})
	})
}

// begin clears the result view for a new synthesis.
func (v *voicesTab) begin(status string) {
	r := &v.run
	r.kept, r.history = nil, nil
	r.unsaid = ""
	r.results.RemoveAll()
	r.turnBox.RemoveAll()
	clear(r.turnLabels)
	r.wave.Reset(sessions.SynthesisRate)
	r.metrics.SetText("Time to first audio: …")
	v.setStatus(status, widget.MediumImportance)
	r.play.Disable()
	r.stop.Enable()
}

// apply shows a batch of a synthesis's (or comparison's) events, in
// order.
func (v *voicesTab) apply(batch []sessions.Event) {
	r := &v.run
	for _, ev := range batch {
		switch e := ev.(type) {
		case *sessions.CompareSideEvent:
			r.side = e.Side
			r.wave.Reset(sessions.SynthesisRate)
			r.turnBox.RemoveAll()
			clear(r.turnLabels)
			v.setStatus(fmt.Sprintf("Voice %s: %s…", e.Side, e.Synthesis.Request().Voice), widget.MediumImportance)
		case *sessions.FirstAudioEvent:
			r.metrics.SetText(r.sidePrefix() + fmt.Sprintf("Time to first audio: %s", latencyWords(e.TimeToFirstAudio)))
		case *sessions.PlaybackStartedEvent:
			r.metrics.SetText(r.metrics.Text + fmt.Sprintf(" · playback started %s after the first audio", latencyWords(e.Latency)))
		case *sessions.SynthesisProgressEvent:
			r.wave.Append(e.Samples)
			r.wave.SetPlayhead(e.Played)
		case *sessions.SpeechTurnEvent:
			r.showTurn(e.Turn)
		case *sessions.SpeakWarningEvent:
			v.setStatus(fmt.Sprintf("The service warns: %s (%s)", e.Description, e.Code), widget.WarningImportance)
		case *sessions.TextSkippedEvent:
			r.unsaid = fmt.Sprintf("%s did not say %s.", e.Voice, e.Skipped)
			v.setStatus(fmt.Sprintf("%s does not say %s; it says the rest…", e.Voice, e.Skipped), widget.WarningImportance)
		case *sessions.SpeakRetryEvent:
			v.setStatus(fmt.Sprintf("The service asked to slow down: part %d of %d goes again in %.0f s.", e.Part, e.Parts, e.Wait.Seconds()), widget.WarningImportance)
		case *sessions.NoSpeakerEvent:
			v.setStatus(plainError(e.Err)+" The audio is being made and kept, to save.", widget.WarningImportance)
		case *sessions.SynthesisDoneEvent:
			if r.side != "" {
				v.keep(r.side+": "+e.Result.Request.Voice, e.Result)
			}
		case *sessions.SaveFailedEvent:
			v.showError("voices: not saved", e)
		case *sessions.HistoryEvent:
			if e.Final {
				r.history = e
			}
		}
	}
}

func (r *voicesRun) sidePrefix() string {
	if r.side == "" {
		return ""
	}
	return r.side + " · "
}

// showTurn shows a turn's state on its line.
func (r *voicesRun) showTurn(t sessions.SpeechTurn) {
	l := r.turnLabels[t.Index]
	if l == nil {
		l = widget.NewLabel("")
		l.Truncation = fyne.TextTruncateEllipsis
		r.turnLabels[t.Index] = l
		r.turnBox.Add(l)
	}
	line := fmt.Sprintf("Turn %d · %s · %s", t.Index+1, t.State, t.Text)
	switch t.State {
	case sessions.TurnInterrupted:
		how := ""
		if t.Estimated {
			how = " (from the playhead)"
		}
		line = fmt.Sprintf("Turn %d · interrupted%s · spoken: %q · left: %q", t.Index+1, how, strings.TrimSpace(t.Spoken), strings.TrimSpace(t.Remaining))
		l.Importance = widget.WarningImportance
	case sessions.TurnSpeaking:
		l.Importance = widget.HighImportance
	case sessions.TurnSpoken:
		l.Importance = widget.SuccessImportance
	default:
		l.Importance = widget.MediumImportance
	}
	l.SetText(line)
}

// finish shows a synthesis that ended.
func (v *voicesTab) finish(res sessions.SynthesisResult, err error) {
	v.updateControls()
	v.keep(res.Request.Voice, res)
	v.app.historyChanged(store.KindSynthesis)
	switch {
	case err != nil:
		v.showError("speak", err)
	case res.Unplayed != nil:
		v.app.log.Warn("play a synthesis", "err", res.Unplayed)
		words, _ := v.run.keptWords()
		v.setStatus(fmt.Sprintf("%s The %.1f s of audio with %s are ready to save (Save, below)%s",
			plainError(res.Unplayed), res.Duration().Seconds(), res.Request.Voice, words), widget.WarningImportance)
	case res.Stopped:
		v.setStatus(fmt.Sprintf("Stopped after %.1f s of audio.", res.Duration().Seconds()), widget.MediumImportance)
	default:
		words, imp := v.run.keptWords()
		v.setStatus(fmt.Sprintf("Spoke %.1f s with %s%s", res.Duration().Seconds(), res.Request.Voice, words), imp)
	}
	if v.run.unsaid != "" && err == nil {
		// What was left out stays said once the synthesis ended.
		v.setStatus(v.status.Text+" "+v.run.unsaid, widget.WarningImportance)
	}
	v.autoDone(err)
}

// keptWords ends the words of a synthesis that ended with what history
// holds of it: kept only when its final HistoryEvent says so.
func (r *voicesRun) keptWords() (string, widget.Importance) {
	switch h := r.history; {
	case h == nil:
		return ".", widget.SuccessImportance
	case h.Kept():
		return ", and kept in history.", widget.SuccessImportance
	case h.Written():
		return ", " + keptForSession + ".", widget.MediumImportance
	default:
		return ". " + plainError(h.Err), widget.WarningImportance
	}
}

// autoDone tells the App that the AutoSpeak synthesis is on screen.
func (v *voicesTab) autoDone(err error) {
	if v.run.autoing {
		v.run.autoing = false
		v.app.loaded(partAuto, err)
	}
}

// keep adds a synthesis to those that can be played again and saved.
func (v *voicesTab) keep(label string, res sessions.SynthesisResult) {
	if len(res.PCM) == 0 {
		return
	}
	r := &v.run
	k := keptAudio{label: label, pcm: res.PCM, rate: res.SampleRate, ttfa: res.TimeToFirstAudio}
	r.kept = append(r.kept, k)
	r.results.Add(container.NewHBox(
		widget.NewButtonWithIcon("Play "+label, theme.MediaPlayIcon(), func() { v.replay(k.pcm, k.rate) }),
		widget.NewButtonWithIcon("Save", theme.DocumentSaveIcon(), func() { v.chooseSaveFile(k.pcm, k.rate, label) }),
		widget.NewLabel(fmt.Sprintf("%.1f s · time to first audio %s", float64(len(k.pcm))/float64(k.rate), latencyWords(k.ttfa))),
	))
	v.updateControls()
}

// onStop stops what is speaking.
func (v *voicesTab) onStop() {
	syn, cmp, playing := v.run.syn, v.run.cmp, v.run.playing
	if syn == nil && cmp == nil && playing == nil {
		return
	}
	v.setStatus("Stopping…", widget.MediumImportance)
	v.run.stop.Disable()
	v.app.goAsync(func(context.Context) {
		switch {
		case cmp != nil:
			_ = cmp.Stop()
		case syn != nil:
			_ = syn.Stop()
		case playing != nil:
			_ = playing.Stop()
		}
	})
}

// replay plays kept audio again, with its playhead on the waveform.
func (v *voicesTab) replay(pcm []int16, rate int) {
	if v.busy() || v.voices == nil {
		return
	}
	r := &v.run
	r.wave.Reset(rate)
	r.wave.Append(pcm)
	voices := v.voices
	v.setStatus("Playing…", widget.MediumImportance)
	r.stop.Enable()
	r.play.Disable()
	v.app.goAsync(func(ctx context.Context) {
		p, err := voices.Play(ctx, pcm, rate)
		if err != nil {
			v.app.onUI(func() { v.updateControls(); v.showError("play", err) })
			return
		}
		v.app.onUI(func() { r.playing = p; v.updateControls() })
		v.app.followPlaying(ctx, p, r.wave.SetPlayhead, func(err error) {
			r.playing = nil
			r.wave.SetPlayhead(p.Duration())
			v.updateControls()
			if err != nil {
				v.showError("play", err)
				return
			}
			v.setStatus("Played.", widget.MediumImportance)
		})
	})
}
