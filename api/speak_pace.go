package api

import "time"

// Pacing of a /v1/speak WebSocket.
const (
	// MinSpeakCharRate is the lowest rate, in characters per second, a
	// SpeakPace slows down to.
	MinSpeakCharRate = 10
	// FlushWindow is the span over which the service counts Flushes
	// (MaxFlushesPerMinute of them).
	FlushWindow = time.Minute
	// paceWindow is the span over which the rate before a DATA-0001 is
	// measured.
	paceWindow = 2 * time.Second
	// paceBurst is how many seconds of characters may leave at once after
	// a pause.
	paceBurst = 1.0
	// flushMargin is added to the flush window: the service counts a
	// Flush when it arrives, which is later than when it left.
	flushMargin = time.Second
)

// SpeakPace paces what a client sends on a /v1/speak WebSocket by the
// limits of the service:
//
//   - Flushes: at most MaxFlushesPerMinute in any FlushWindow (the service
//     answers more with EXCESSIVE_FLUSH and does not flush). A refused
//     Flush (FlushRefused) holds the next for a whole window.
//   - Characters: the service publishes no rate, and refuses a Speak sent
//     too fast with DATA-0001, asking the client to "reduce submission
//     rate rather than retrying at once". So characters leave without
//     limit until the first refusal (Refused); from then on at no more
//     than half the rate measured over the seconds before it, and every
//     further refusal halves the limit again, never below
//     MinSpeakCharRate. The limit holds for the life of the pace.
//
// Under a limit, a message waits until the characters sent before it
// have drained at the rate, and for its own characters beyond a second's
// worth: a Speak refused for rate and sent again waits for itself.
// The size of one message is the caller's to bound (MaxSpeakChars).
//
// A SpeakPace keeps no clock: every method takes the time, so the
// caller's own clock (an injected one in tests) drives it. Delay is a
// reservation: a caller that waited the delay it was given sends then
// without asking again. It is not safe for concurrent use.
type SpeakPace struct {
	rate float64 // characters per second; 0 is no limit
	// free is when the characters sent so far have drained at rate.
	free    time.Time
	recent  []charMark  // sends within paceWindow, to measure the rate
	flushes []time.Time // Flushes sent within the flush window
	// heldUntil is when Flushes may go again after a refused one.
	heldUntil time.Time
}

// charMark is a send of n characters at a time.
type charMark struct {
	at time.Time
	n  int
}

// NewSpeakPace returns a pace with no limit on characters yet.
func NewSpeakPace() *SpeakPace { return &SpeakPace{} }

// CharRate returns the characters per second the pace holds to, 0 while
// the service has not refused a Speak for rate.
func (p *SpeakPace) CharRate() float64 { return p.rate }

// seconds returns how long n characters take to drain at the rate.
func (p *SpeakPace) seconds(n int) time.Duration {
	return time.Duration(float64(n) / p.rate * float64(time.Second))
}

// Delay returns how long after now a Speak of chars characters (0 for
// none), followed by a Flush when flush is set, may leave.
func (p *SpeakPace) Delay(now time.Time, chars int, flush bool) time.Duration {
	var d time.Duration
	if p.rate > 0 && chars > 0 {
		burst := time.Duration(paceBurst * float64(time.Second))
		d = laterOf(p.free, now).Add(p.seconds(chars) - burst).Sub(now)
	}
	if flush {
		d = max(d, p.heldUntil.Sub(now))
		if n := len(p.inWindow(now)); n >= MaxFlushesPerMinute {
			oldest := p.flushes[len(p.flushes)-n]
			d = max(d, oldest.Add(FlushWindow+flushMargin).Sub(now))
		}
	}
	return max(d, 0)
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// inWindow returns the Flushes sent within the flush window before now.
func (p *SpeakPace) inWindow(now time.Time) []time.Time {
	cut := 0
	for cut < len(p.flushes) && now.Sub(p.flushes[cut]) >= FlushWindow+flushMargin {
		cut++
	}
	p.flushes = p.flushes[cut:]
	return p.flushes
}

// Sent records a Speak of chars characters (0 for none) and, when flush
// is set, a Flush, sent at now.
func (p *SpeakPace) Sent(now time.Time, chars int, flush bool) {
	if chars > 0 {
		if p.rate > 0 {
			p.free = laterOf(p.free, now).Add(p.seconds(chars))
		}
		cut := 0
		for cut < len(p.recent) && now.Sub(p.recent[cut].at) > paceWindow {
			cut++
		}
		p.recent = append(p.recent[cut:], charMark{at: now, n: chars})
	}
	if flush {
		p.flushes = append(p.inWindow(now), now)
	}
}

// Refused records that the service refused a Speak for rate (DATA-0001)
// at now: the limit halves, and nothing leaves at once.
func (p *SpeakPace) Refused(now time.Time) {
	if p.rate == 0 {
		sent := 0
		for _, m := range p.recent {
			if now.Sub(m.at) <= paceWindow {
				sent += m.n
			}
		}
		p.rate = float64(sent) / paceWindow.Seconds() / 2
	} else {
		p.rate /= 2
	}
	p.rate = max(p.rate, MinSpeakCharRate)
	p.free = laterOf(p.free, now.Add(time.Duration(paceBurst*float64(time.Second))))
}

// FlushRefused records that the service refused a Flush (EXCESSIVE_FLUSH)
// at now: it counts more Flushes than this pace saw, so none goes for a
// whole window.
func (p *SpeakPace) FlushRefused(now time.Time) {
	p.heldUntil = now.Add(FlushWindow + flushMargin)
}
