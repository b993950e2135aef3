package sessions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/earshot-app/earshot/api"
)

// maxPartRefusals is how many times in a row the service may refuse one
// part for rate before the synthesis gives up on the rest of its text.
// Each refusal halves the pace (api.SpeakPace), so the last waits are
// long: six halvings take a stream from the engine's 500 characters a
// second to under 10.
const maxPartRefusals = 6

// synthPart is a piece of a turn sent as one Speak and one Flush: the
// turn's text cut at sentence boundaries (textseg) into pieces no longer
// than the endpoint takes in one message. The service acknowledges each
// (Flushed on /v1/speak, SpeechMetadata on /v2/speak) before the next is
// sent, so a refusal is known to be of the part in flight.
type synthPart struct {
	index int
	turn  *synthTurn
	text  string
	chars int
	last  bool // the turn's last part

	sent     bool // its Flush left, and was not refused
	spoke    bool // its Speak left, and was not refused
	refused  bool // its Speak was refused for rate (DATA-0001): it goes again
	refusals int  // refusals in a row
	acked    bool // the service sent all its audio
	gotAudio bool
	// start and end are its audio in the synthesis's samples; end is set
	// once acknowledged.
	start, end int
}

// SynthesisPart is a part of a synthesis as it ended: a piece of one
// turn's text sent in one message, and its audio.
type SynthesisPart struct {
	// Turn is the index of the turn it is a part of.
	Turn int
	Text string
	// Spoken is set once the service sent all its audio.
	Spoken bool
	// Refusals counts the times the service refused it for rate.
	Refusals int
	// Start and End are its audio in the synthesis's samples (End is -1
	// while not spoken).
	Start, End int
}

// SpeakRetryEvent reports that the service refused a part of the text
// for rate (DATA-0001): it is sent again after Wait, at a slower pace.
// Part counts from 1.
type SpeakRetryEvent struct {
	Part, Parts int
	Wait        time.Duration
}

func (*SpeakRetryEvent) isEvent() {}

// PartialSynthesisError is a synthesis that ended with part of its text
// never spoken, though nobody stopped it: the service refused a part too
// often, or the stream ended first. It says how much was spoken and where
// it stopped; the audio of what was spoken is kept, and history marks the
// entry partial.
type PartialSynthesisError struct {
	// SpokenWords of Words were spoken, in Audio of audio.
	SpokenWords, Words int
	Audio              time.Duration
	// Unspoken is the text not spoken, from where it stopped.
	Unspoken string
	// Err is why it stopped.
	Err error
}

func (e *PartialSynthesisError) Error() string {
	return strings.TrimSuffix(e.Summary(), ".") + ", because " + strings.TrimSuffix(e.Err.Error(), ".") + "."
}

// Summary says how much was spoken and where it stopped, without why.
func (e *PartialSynthesisError) Summary() string {
	return fmt.Sprintf("Only %d of the %d words were spoken (%.1f s of audio): it stopped at “%s”.",
		e.SpokenWords, e.Words, e.Audio.Seconds(), leadingWords(e.Unspoken, 8))
}

// Unwrap returns why it stopped.
func (e *PartialSynthesisError) Unwrap() error { return e.Err }

// leadingWords returns the first n words of text, with "…" when there are
// more.
func leadingWords(text string, n int) string {
	w := strings.Fields(text)
	if len(w) <= n {
		return strings.Join(w, " ")
	}
	return strings.Join(w[:n], " ") + "…"
}

// partLimit is the longest text, in characters, one Speak carries: the
// per-request limit of the voice on /v1/speak; on /v2/speak, which
// publishes none, that of the aura voices.
func (r *synthRun) partLimit() int {
	if r.s.req.Family() == FamilyGeneral {
		return api.MaxSpeakChars(r.s.req.Voice)
	}
	return api.MaxSpeakV2Chars
}

// cutParts cuts every turn into its parts.
func (r *synthRun) cutParts() {
	limit := r.partLimit()
	for _, t := range r.turns {
		pieces := chunkText(t.Text, limit)
		for i, c := range pieces {
			r.parts = append(r.parts, &synthPart{index: len(r.parts), turn: t, text: c, chars: utf8.RuneCountInString(c), last: i == len(pieces)-1})
		}
	}
}

// inFlight returns the part sent and not yet acknowledged, if any.
func (r *synthRun) inFlight() *synthPart {
	if r.next == 0 {
		return nil
	}
	if p := r.parts[r.next-1]; p.sent && !p.acked {
		return p
	}
	return nil
}

// speakRefused takes a DATA-0001: the Speak of the part in flight was
// not taken. The pace slows down, and the part goes again once its Flush
// is answered; after maxPartRefusals in a row the synthesis gives up on
// the rest of its text.
func (r *synthRun) speakRefused() {
	p := r.inFlight()
	if p == nil || r.phase != phaseSpeaking || r.gaveUp != nil {
		return
	}
	if r.pace != nil {
		r.pace.Refused(r.clock.Now())
	}
	p.spoke, p.refused = false, true
	p.refusals++
	if p.refusals > maxPartRefusals {
		r.gaveUp = fmt.Errorf("the service refused part %d of %d for rate %d times in a row", p.index+1, len(r.parts), p.refusals)
	}
}

// flushRefused takes an EXCESSIVE_FLUSH: the Flush of the part in flight
// was not done, and no Flushed will come for it. The part goes again
// (its Speak too, if that was refused) when the pace allows.
func (r *synthRun) flushRefused(ctx context.Context) error {
	p := r.inFlight()
	if p == nil || r.phase != phaseSpeaking {
		return nil
	}
	if r.pace != nil {
		r.pace.FlushRefused(r.clock.Now())
	}
	return r.resend(ctx, p)
}

// resend sends the part in flight again, once the pace allows.
func (r *synthRun) resend(ctx context.Context, p *synthPart) error {
	p.sent = false
	r.next = p.index
	var wait time.Duration
	if r.pace != nil {
		chars := 0
		if !p.spoke {
			chars = p.chars
		}
		wait = r.pace.Delay(r.clock.Now(), chars, true)
	}
	r.s.emit(&SpeakRetryEvent{Part: p.index + 1, Parts: len(r.parts), Wait: wait})
	return r.sendNext(ctx)
}

// sendNext sends the next part: its text, then Flush, or, when the pace
// asks, waits for it with a timer. A part whose Speak was taken but
// whose Flush was refused sends its Flush only.
func (r *synthRun) sendNext(ctx context.Context) error {
	if r.next >= len(r.parts) || r.wait != nil {
		return nil
	}
	p := r.parts[r.next]
	chars := 0
	if !p.spoke {
		chars = p.chars
	}
	now := r.clock.Now()
	if r.pace != nil && !r.waited {
		if d := r.pace.Delay(now, chars, true); d > 0 {
			r.wait = r.clock.NewTimer(d)
			return nil
		}
	}
	r.waited = false
	r.next++
	if t := p.turn; t.sent.IsZero() {
		t.sent = now
	}
	if !p.spoke {
		if err := r.st.speak(ctx, p.text); err != nil {
			return fmt.Errorf("send Speak: %w", err)
		}
	}
	if err := r.st.flush(ctx); err != nil {
		return fmt.Errorf("send Flush: %w", err)
	}
	if r.pace != nil {
		r.pace.Sent(now, chars, true)
	}
	p.sent, p.spoke, p.refused = true, true, false
	return nil
}

// partDone takes the service's acknowledgement of the part in flight:
// all its audio was sent, or, after a refusal, nothing was to be.
func (r *synthRun) partDone(ctx context.Context) error {
	p := r.inFlight()
	if p == nil {
		return nil
	}
	if p.refused {
		if r.gaveUp != nil || r.phase != phaseSpeaking {
			return nil
		}
		return r.resend(ctx, p)
	}
	p.acked = true
	p.end = len(r.pcm)
	if !p.gotAudio {
		p.start = p.end
	}
	if p.last {
		r.turnComplete()
	}
	if r.phase.stopped() {
		return nil
	}
	return r.maybeSendNext(ctx)
}

// splitTurnAt returns the texts of t's parts before p (all of them when
// p is nil) and those after p.
func (r *synthRun) splitTurnAt(t *synthTurn, p *synthPart) (before, from []string) {
	for _, q := range r.parts {
		if q.turn != t {
			continue
		}
		if p == nil || q.index < p.index {
			before = append(before, q.text)
		} else if q != p {
			from = append(from, q.text)
		}
	}
	return before, from
}

// incomplete turns the end of a run that left text unspoken, though
// nobody stopped it, into a *PartialSynthesisError, which wraps runErr
// (or the reason it gave up). A run that spoke nothing fails as it did.
func (r *synthRun) incomplete(runErr error) error {
	if r.phase.stopped() {
		return runErr
	}
	first := -1
	for i, p := range r.parts {
		if !p.acked {
			first = i
			break
		}
	}
	if first < 0 {
		return runErr
	}
	why := runErr
	if why == nil {
		why = r.gaveUp
	}
	if why == nil {
		why = errors.New("the service did not speak the rest")
	}
	if first == 0 && runErr != nil {
		return runErr
	}
	var spoken, unspoken []string
	for _, p := range r.parts {
		if p.acked {
			spoken = append(spoken, p.text)
		} else {
			unspoken = append(unspoken, p.text)
		}
	}
	sw := len(strings.Fields(strings.Join(spoken, " ")))
	un := strings.Join(unspoken, " ")
	return &PartialSynthesisError{SpokenWords: sw, Words: sw + len(strings.Fields(un)), Audio: durationOf(len(r.pcm)), Unspoken: un, Err: why}
}

// durationOf returns the length of n samples at SynthesisRate.
func durationOf(n int) time.Duration {
	return time.Duration(int64(n) * int64(time.Second) / SynthesisRate)
}
