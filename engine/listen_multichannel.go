package engine

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
)

// maxStreamChannels is the most channels a multichannel stream may have.
// Each channel holds a recogniser of its own (a pocketsphinx decoder and
// its memory) for the life of the stream, and the engine's default
// concurrency allowance is as many recognisers; the service takes up to
// 20 channels.
const maxStreamChannels = 8

// streamChannels is how many channels a stream recognises apart, as the
// handshake tells: with multichannel=true the channels of raw audio, 1
// otherwise. The channels of containerized audio are known from its
// header only (the service reads channels for raw audio only); such a
// stream starts with one and gets the others then (addChannels).
func streamChannels(plan *listenPlan) int {
	if plan.opts.Multichannel && plan.format.Encoding != audio.EncodingNone {
		return max(plan.format.Channels, 1)
	}
	return 1
}

// streamWeight is what a stream recognising n channels takes of the
// concurrency allowance, its connection included: each channel costs what
// a stream of one does, a recogniser and the heavy features it serves
// (diarization).
func streamWeight(plan *listenPlan, n int) int {
	return n * (weightRequest + plan.weight)
}

// checkStreamChannels refuses, at the handshake, a multichannel stream of
// more channels than a stream may have, or than the whole concurrency
// allowance holds (a stream that fits the allowance but not what is left
// of it is answered 429, as any other).
func (e *Engine) checkStreamChannels(plan *listenPlan, n int) error {
	var reason string
	switch w := streamWeight(plan, n); {
	case n <= 1:
		return nil
	case n > maxStreamChannels:
		reason = fmt.Sprintf("A multichannel stream of %d channels is refused: the local engine recognises at most %d channels of a stream, each with a recogniser of its own.",
			n, maxStreamChannels)
	case w > e.limit.max:
		reason = fmt.Sprintf("A multichannel stream of %d channels is refused: it takes %d of the local engine's concurrency allowance of %d (a recogniser per channel, and what its features take).",
			n, w, e.limit.max)
	default:
		return nil
	}
	return &api.OptionError{Param: "channels", Reason: reason, Status: http.StatusBadRequest, Code: api.CodeBadRequest}
}

// addChannels gives a multichannel stream of containerized audio a
// recogniser for each channel its header announced, beyond the one it
// started with. It takes their weight of the allowance without waiting:
// when the allowance or the recogniser cannot give them, the stream is
// closed with the reason. All or none are added.
func (s *listenSession) addChannels(n int) error {
	// A close reason holds 123 bytes: these are shorter than the
	// handshake's.
	switch w := streamWeight(s.plan, n); {
	case n > maxStreamChannels:
		return &closeError{code: websocket.StatusPolicyViolation,
			reason: fmt.Sprintf("the audio has %d channels; the local engine recognises at most %d of a multichannel stream", n, maxStreamChannels)}
	case w > s.e.limit.max:
		return &closeError{code: websocket.StatusPolicyViolation,
			reason: fmt.Sprintf("the audio's %d channels take %d of the local engine's concurrency allowance of %d", n, w, s.e.limit.max)}
	}
	have := len(s.chans)
	extra := streamWeight(s.plan, n) - streamWeight(s.plan, have)
	if !s.e.limit.acquire(extra) {
		return &closeError{code: websocket.StatusTryAgainLater,
			reason: fmt.Sprintf("TOO_MANY_REQUESTS: the %d channels of the audio need %d more of the concurrency allowance", n, extra)}
	}
	var added []*listenChannel
	for c := have; c < n; c++ {
		ch, msg, err := s.e.openChannel(s.ctx, s.plan, c)
		if err != nil {
			for _, a := range added {
				a.stream.Close()
				a.giveBack()
			}
			s.e.limit.release(extra)
			return &closeError{code: websocket.StatusInternalError, reason: "NET-0000: " + msg + err.Error()}
		}
		added = append(added, ch)
	}
	s.chans = append(s.chans, added...)
	s.weight += extra
	return nil
}

// channelSplitter turns the interleaved float32 audio a StreamDecoder
// returns into 16 kHz mono int16 for each channel recognised: the
// channels apart (multichannel), or their mix. It is not safe for
// concurrent use.
type channelSplitter struct {
	convs   []*audio.Converter16kMono
	stride  int // interleaved channels of the input, when apart
	scratch []float32
	out     [][]int16
}

// newChannelSplitter returns a splitter for audio of info; apart splits
// its channels, otherwise they are mixed to one.
func newChannelSplitter(info audio.Info, apart bool) (*channelSplitter, error) {
	n, ch := 1, info.Channels
	if apart {
		n, ch = info.Channels, 1
	}
	sp := &channelSplitter{stride: info.Channels, out: make([][]int16, n)}
	for range n {
		c, err := audio.NewConverter16kMono(info.SampleRate, ch)
		if err != nil {
			return nil, err
		}
		sp.convs = append(sp.convs, c)
	}
	return sp, nil
}

// split returns each channel's samples made available by samples, which
// hold whole frames. The slices are reused by the next call.
func (sp *channelSplitter) split(samples []float32) [][]int16 {
	if len(sp.convs) == 1 {
		sp.out[0] = sp.convs[0].Convert(samples)
		return sp.out
	}
	for c, conv := range sp.convs {
		sp.scratch = sp.scratch[:0]
		for i := c; i < len(samples); i += sp.stride {
			sp.scratch = append(sp.scratch, samples[i])
		}
		sp.out[c] = conv.Convert(sp.scratch)
	}
	return sp.out
}

// flush returns each channel's last samples: those of samples, the end of
// the stream, and what the converters still hold.
func (sp *channelSplitter) flush(samples []float32) [][]int16 {
	out := sp.split(samples)
	for c, conv := range sp.convs {
		// Convert and Flush share the converter's buffer.
		out[c] = append(slices.Clone(out[c]), conv.Flush()...)
	}
	return out
}
