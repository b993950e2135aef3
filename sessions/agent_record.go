package sessions

import (
	"bytes"
	"time"

	"github.com/earshot-app/earshot/audio"
)

// What history keeps of a conversation's sound: both sides on one
// timeline, the person on the left channel (the microphone as the agent
// heard it, less the agent's echo; silence while muted), the agent on
// the right (its voice as played, cut where the person interrupted).

// recordRate is the rate a conversation is kept at: speech needs no more.
const recordRate = 16000

// maxRecording bounds what is kept of a conversation's sound: 30 minutes
// of each side is 115 MB in memory while the conversation lasts, and
// about 11 MB of Ogg Opus in history.
const maxRecording = 30 * time.Minute

// agentRecording is a conversation's sound being kept. Only the session's
// loop uses it.
type agentRecording struct {
	person, agent   []int16
	fromMic, fromAI *audio.Resampler
	in, out         []float32
	max             int
	full            bool // maxRecording was reached: nothing more is kept
}

func newAgentRecording(micRate int) (*agentRecording, error) {
	fromAI, err := audio.NewResampler(agentOutputRate, recordRate, 1)
	if err != nil {
		return nil, err
	}
	r := &agentRecording{fromAI: fromAI, max: int(maxRecording / time.Second * recordRate)}
	if micRate > 0 {
		if r.fromMic, err = audio.NewResampler(micRate, recordRate, 1); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// resample converts pcm with rs, into a slice that is the recording's
// until the next call.
func (r *agentRecording) resample(rs *audio.Resampler, pcm []int16) []int16 {
	r.in = audio.Int16ToFloat32(r.in[:0], pcm)
	r.out = rs.Process(r.out[:0], r.in)
	return audio.Float32ToInt16(nil, r.out)
}

// heard adds a frame of the microphone to the person's side; silent
// keeps its length but not its sound.
func (r *agentRecording) heard(pcm []int16, silent bool) {
	if r.full || r.fromMic == nil {
		return
	}
	frames := r.resample(r.fromMic, pcm)
	if silent {
		clear(frames)
	}
	r.person = append(r.person, frames...)
	r.checkFull()
}

// spoke adds the agent's audio, played from at (since the conversation
// began) or after what it said before, whichever is later.
func (r *agentRecording) spoke(pcm []int16, at time.Duration) {
	if r.full {
		return
	}
	frames := r.resample(r.fromAI, pcm)
	if pos := durationFrames(at); pos > len(r.agent) {
		r.agent = append(r.agent, make([]int16, pos-len(r.agent))...)
	}
	r.agent = append(r.agent, frames...)
	r.checkFull()
}

// cut drops the agent's audio after at: the person interrupted it, and
// the rest was never played.
func (r *agentRecording) cut(at time.Duration) {
	if pos := durationFrames(at); pos < len(r.agent) {
		r.agent = r.agent[:pos]
	}
	r.fromAI.Reset()
}

func (r *agentRecording) checkFull() {
	if len(r.person) >= r.max || len(r.agent) >= r.max {
		r.person, r.agent = r.person[:min(len(r.person), r.max)], r.agent[:min(len(r.agent), r.max)]
		r.full = true
	}
}

func durationFrames(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(d * recordRate / time.Second)
}

// ogg is the recording as stereo Ogg Opus, at the bit rate kept audio has
// for each channel (about 11 MB for the longest conversation kept, where
// WAV took 115 MB), or nil when nothing was kept.
func (r *agentRecording) ogg() ([]byte, error) {
	n := max(len(r.person), len(r.agent))
	if n == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	w, err := audio.NewOggOpusWriter(&b, recordRate, 2, 2*keptBitRate)
	if err != nil {
		return nil, err
	}
	// A second at a time: the stereo frames are made as they are encoded.
	pcm := make([]int16, 2*recordRate)
	for at := 0; at < n; at += recordRate {
		frames := min(recordRate, n-at)
		for i := range frames {
			pcm[2*i], pcm[2*i+1] = sampleAt(r.person, at+i), sampleAt(r.agent, at+i)
		}
		if err := w.Write(pcm[:2*frames]); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// sampleAt is s[i], or silence past its end.
func sampleAt(s []int16, i int) int16 {
	if i < len(s) {
		return s[i]
	}
	return 0
}
