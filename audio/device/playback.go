package device

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gen2brain/malgo"

	"github.com/earshot-app/earshot/audio"
)

// Errors from opening and running a playback device, in plain words, matched
// with errors.Is. ErrNoAudioBackend is shared with capture.
var (
	// ErrNoOutputDevice means there is no speaker or headphones, or the
	// configured one is not connected.
	ErrNoOutputDevice = errors.New("no speaker or headphones were found")
	// ErrOutputUnavailable means the output device exists but could not be
	// opened or refused to play.
	ErrOutputUnavailable = errors.New("the speaker is busy or could not be opened")
	// ErrOutputStopped is returned by Write and Drain when the output
	// device stopped on its own, for instance because it was unplugged.
	ErrOutputStopped = errors.New("the speaker stopped playing audio")
	// ErrInterrupted is returned by a Write or Drain that Stop cut short:
	// the audio it was queuing or waiting for was discarded.
	ErrInterrupted = errors.New("playback was interrupted")
	// ErrPlaybackClosed is returned by Write and Drain once Close was
	// called.
	ErrPlaybackClosed = errors.New("playback is closed")
)

// speaker is the kind of device Playback opens.
var speaker = deviceKind{
	typ:         malgo.Playback,
	noun:        "speaker",
	noDevice:    ErrNoOutputDevice,
	unavailable: ErrOutputUnavailable,
	denied:      ErrOutputUnavailable,
}

// Defaults of PlaybackConfig. With a writer that delivers audio faster
// than real time, as synthesized speech does, the device starts consuming
// a stream at most one period after its first Write: the jitter buffer
// fills at once. A writer delivering in real time waits for the jitter
// buffer too, 20 + 10 ms at most, within a 30 ms budget.
const (
	// DefaultJitterBuffer is how much audio a stream queues before it
	// starts playing, unless the writer ends it sooner.
	DefaultJitterBuffer = 20 * time.Millisecond
	// DefaultPeriod is the device's period: how much audio each device
	// callback takes, and so how often it checks for new audio.
	DefaultPeriod = 10 * time.Millisecond
	// DefaultMaxQueued bounds the audio queued ahead of the device; a
	// writer further ahead waits. Whole utterances fit many times over.
	DefaultMaxQueued = 10 * time.Minute
)

// PlaybackConfig configures OpenPlayback. The zero value plays 16 kHz mono
// on the default output device with the defaults above.
type PlaybackConfig struct {
	// Backends are the audio backends to try, in order; nil means the
	// platform's real backends, never the null backend unless named (use
	// NullBackend, which plays into nothing in real time), as for
	// CaptureConfig.
	Backends []malgo.Backend
	// DeviceID is a Device.ID from OutputDevices; "" is the system's
	// default output.
	DeviceID string
	// SampleRate of the audio written, in Hz; 0 means 16000. Write audio
	// at its own rate: miniaudio resamples to the device's rate.
	SampleRate int
	// Channels of the audio written, interleaved; 0 means 1. miniaudio
	// maps them to the device's channels (mono plays on both speakers).
	Channels int
	// JitterBuffer is how much audio a stream queues before the device
	// starts playing it, 0 to 2 s; 0 means DefaultJitterBuffer. End starts
	// a shorter stream at once. Use a negative value for no jitter buffer:
	// playback starts with the first sample.
	JitterBuffer time.Duration
	// Period is the device's period, 1 to 100 ms; 0 means DefaultPeriod.
	// Shorter periods start and stop playback sooner and cost more
	// wakeups.
	Period time.Duration
	// MaxQueued bounds the audio queued ahead of the device, from 1 s;
	// 0 means DefaultMaxQueued. Memory grows with what is queued, not
	// with the bound.
	MaxQueued time.Duration
}

// Playback is an output device opened by OpenPlayback, playing the audio
// written to it.
//
// Audio is played in streams, typically one synthesized utterance each. A
// stream begins with the first Write after the previous stream finished
// (or was stopped) and is queued until JitterBuffer of it is waiting or End
// marks it complete; then the device plays it. A Write after End continues
// the same stream. If the queue runs dry before End, the device plays
// silence, counts an underrun and waits for the jitter buffer to fill
// again. Once the stream has been played to its End, it is finished.
//
// miniaudio's device thread takes audio from a queue of linked blocks
// without blocking, locking or allocating, playing silence when there is
// nothing to play. Every method is safe for concurrent use; concurrent
// Writes are queued one after the other, in no set order.
type Playback struct {
	format    audio.Format
	threshold uint64 // samples queued before a stream starts
	capacity  uint64 // most samples queued
	epoch     time.Time

	q *playQueue

	mctx *malgo.AllocatedContext
	dev  *malgo.Device

	writeMu sync.Mutex // held by a Write throughout: one writer at a time
	mu      sync.Mutex // guards the producer's side of q and the stream's bookkeeping
	open    bool       // a stream has begun and not been stopped (guarded by mu)

	// Shared with the device callback.
	endPos      atomic.Int64  // the stream ends at this position; -1 if End was not called
	streamStart atomic.Uint64 // position of the current stream's first sample
	firstWrite  atomic.Int64  // nanoseconds after epoch of the stream's first Write
	startedFor  atomic.Uint64 // streamStart+1 of the stream started refers to; 0 none
	started     atomic.Int64  // nanoseconds after epoch the stream was first consumed
	playedPos   atomic.Uint64 // position after the last sample played
	underruns   atomic.Int64
	stops       atomic.Uint64 // Stop calls
	paused      atomic.Bool

	// The device callback's own state.
	playing   bool
	curStream uint64

	// The callback kicks the notifier, which wakes every waiter.
	kick    chan struct{}
	cmu     sync.Mutex
	changed chan struct{} // closed and replaced on every change (guarded by cmu)

	done      chan struct{} // closed by Close
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	stopped   atomic.Bool
	stoppedCh chan struct{} // closed when the device stopped on its own
}

// OutputDevices lists the audio output devices of the first audio backend
// that starts, by default the platform's own (see PlaybackConfig.Backends).
// The backend is asked afresh on every call. ctx is checked before the
// backend is asked; the query itself cannot be interrupted.
func OutputDevices(ctx context.Context, backends ...malgo.Backend) ([]Device, error) {
	devs, err := listDevices(ctx, speaker, backends)
	return distinctNames(devs), err
}

// OpenPlayback opens and starts an output device. It plays silence until
// audio is written. Close the Playback when done.
//
// ctx is checked before and after opening; opening itself cannot be
// interrupted (it takes milliseconds). Errors match ErrNoAudioBackend,
// ErrNoOutputDevice or ErrOutputUnavailable when the cause is one of those.
func OpenPlayback(ctx context.Context, cfg PlaybackConfig) (*Playback, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cfg.SampleRate == 0 {
		cfg.SampleRate = audio.SpeechRate
	}
	if cfg.Channels == 0 {
		cfg.Channels = 1
	}
	if cfg.JitterBuffer == 0 {
		cfg.JitterBuffer = DefaultJitterBuffer
	}
	if cfg.Period == 0 {
		cfg.Period = DefaultPeriod
	}
	if cfg.MaxQueued == 0 {
		cfg.MaxQueued = DefaultMaxQueued
	}
	f := audio.Format{Encoding: audio.EncodingLinear16, SampleRate: cfg.SampleRate, Channels: cfg.Channels}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("audio: open speaker: %w", err)
	}
	switch {
	case cfg.JitterBuffer > 2*time.Second:
		return nil, fmt.Errorf("audio: open speaker: jitter buffer %v is over 2s", cfg.JitterBuffer)
	case cfg.Period < time.Millisecond || cfg.Period > 100*time.Millisecond:
		return nil, fmt.Errorf("audio: open speaker: period %v is outside 1ms..100ms", cfg.Period)
	case cfg.MaxQueued < time.Second || cfg.MaxQueued > 24*time.Hour:
		return nil, fmt.Errorf("audio: open speaker: queue bound %v is outside 1s..24h", cfg.MaxQueued)
	case cfg.MaxQueued <= cfg.JitterBuffer:
		return nil, fmt.Errorf("audio: open speaker: queue bound %v does not exceed the jitter buffer %v", cfg.MaxQueued, cfg.JitterBuffer)
	}
	id, err := parseConfiguredID(cfg.DeviceID)
	if err != nil {
		return nil, fmt.Errorf("audio: open speaker: %w", err)
	}

	samples := func(d time.Duration) uint64 {
		return uint64(max(int64(d)*int64(f.SampleRate)/int64(time.Second), 0)) * uint64(f.Channels)
	}
	p := &Playback{
		format:    f,
		threshold: max(samples(cfg.JitterBuffer), 1),
		capacity:  samples(cfg.MaxQueued),
		epoch:     time.Now(),
		q:         newPlayQueue(),
		kick:      make(chan struct{}, 1),
		changed:   make(chan struct{}),
		done:      make(chan struct{}),
		stoppedCh: make(chan struct{}),
	}
	p.endPos.Store(-1)

	dcfg := malgo.DefaultDeviceConfig(malgo.Playback)
	dcfg.Playback.Format = malgo.FormatS16
	dcfg.Playback.Channels = uint32(f.Channels)
	dcfg.SampleRate = uint32(f.SampleRate)
	dcfg.PeriodSizeInFrames = uint32(max(int64(cfg.Period)*int64(f.SampleRate)/int64(time.Second), 1))
	dcfg.NoPreSilencedOutputBuffer = 1 // onData writes every byte
	var log backendLog
	mctx, dev, err := speaker.initDevice(cfg.Backends, id, cfg.DeviceID, dcfg, malgo.DeviceCallbacks{
		Data: p.onData,
		Stop: p.onStop,
	}, &log)
	if err != nil {
		return nil, fmt.Errorf("audio: open speaker: %w", err)
	}
	p.mctx, p.dev = mctx, dev
	p.wg.Go(p.notifier)
	// miniaudio converts from the format asked for; check it took it.
	if got := dev.PlaybackFormat(); got != malgo.FormatS16 || dev.PlaybackChannels() != uint32(f.Channels) || dev.SampleRate() != uint32(f.SampleRate) {
		p.Close()
		return nil, fmt.Errorf("audio: open speaker: %w: the device takes format %d, %d channels, %d Hz instead of 16-bit, %d channels, %d Hz",
			ErrOutputUnavailable, got, dev.PlaybackChannels(), dev.SampleRate(), f.Channels, f.SampleRate)
	}
	if err := speaker.start(dev, &log); err != nil {
		p.Close()
		return nil, err
	}
	mctx.SetLogProc(nil)
	if err := ctx.Err(); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// onData is miniaudio's data callback, on the device thread: fill out with
// queued audio or silence. It must never block, lock, log or allocate.
func (p *Playback) onData(out, _ []byte, _ uint32) {
	changed := p.q.skipDiscarded()
	if changed {
		p.playing = false // Stop: the next stream fills its jitter buffer
	}
	if sp := p.streamStart.Load(); sp != p.curStream {
		p.curStream, p.playing = sp, false
	}
	n := 0
	if !p.paused.Load() {
		was := p.playing
		n = p.play(out)
		changed = changed || n > 0 || p.playing != was
	}
	clear(out[2*n:])
	if changed {
		select {
		case p.kick <- struct{}{}:
		default:
		}
	}
}

// play fills the start of out with queued audio by the stream rules (see
// Playback) and returns how many samples it filled.
func (p *Playback) play(out []byte) int {
	r := p.q.r.Load()
	w := p.q.w.Load()
	end := p.endPos.Load()
	ended := end >= 0 && uint64(end) == w
	avail := w - r
	if !p.playing {
		if avail == 0 || (avail < p.threshold && !ended) {
			return 0
		}
		p.playing = true
	}
	n := p.q.popBytes(out)
	if n > 0 {
		pos := r + uint64(n)
		p.playedPos.Store(pos)
		if sp := p.curStream; pos > sp && p.startedFor.Load() != sp+1 {
			p.started.Store(int64(time.Since(p.epoch)))
			p.startedFor.Store(sp + 1)
		}
	}
	if 2*n < len(out) {
		// Ran dry: the stream is finished, or the writer fell behind.
		if !ended {
			p.underruns.Add(1)
		}
		p.playing = false
	}
	return n
}

// onStop is miniaudio's stop callback: the device stopped on its own.
func (p *Playback) onStop() {
	if p.stopped.CompareAndSwap(false, true) {
		close(p.stoppedCh)
	}
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// notifier turns the device callback's kicks into wakeups of every waiter.
func (p *Playback) notifier() {
	for {
		select {
		case <-p.done:
			return
		case <-p.kick:
			p.broadcast()
		}
	}
}

// broadcast wakes every goroutine waiting on the channel from changes.
func (p *Playback) broadcast() {
	p.cmu.Lock()
	close(p.changed)
	p.changed = make(chan struct{})
	p.cmu.Unlock()
}

// changes returns a channel closed at the next change of the playback's
// state; take it before checking the state.
func (p *Playback) changes() <-chan struct{} {
	p.cmu.Lock()
	defer p.cmu.Unlock()
	return p.changed
}

// wait blocks until the next change, ctx ends, Close or the device stops.
func (p *Playback) wait(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-p.done:
		return ErrPlaybackClosed
	case <-p.stoppedCh:
		return ErrOutputStopped
	}
}

// check reports Close, the device stopping and Stop since stops was read.
func (p *Playback) check(stops uint64) error {
	select {
	case <-p.done:
		return ErrPlaybackClosed
	default:
	}
	if p.stopped.Load() {
		return ErrOutputStopped
	}
	if p.stops.Load() != stops {
		return ErrInterrupted
	}
	return nil
}

// Format returns the format Write takes: 16-bit samples at the configured
// rate and channels.
func (p *Playback) Format() audio.Format { return p.format }

// writeChunk bounds the audio one Write copies under the lock that Stop
// and End also take.
const writeChunk = 8 * segmentSamples

// Write queues interleaved samples to play, copying them; a Write after the
// previous stream finished begins a new stream. It returns once all of pcm
// is queued, waiting while the queue holds MaxQueued. pcm must hold whole
// frames (a multiple of Channels samples).
//
// If ctx ends, Stop is called (ErrInterrupted), the device stops
// (ErrOutputStopped) or the playback is closed (ErrPlaybackClosed) before
// all of pcm is queued, Write returns the error; what it had queued stays
// queued unless Stop discarded it.
func (p *Playback) Write(ctx context.Context, pcm []int16) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(pcm)%p.format.Channels != 0 {
		return fmt.Errorf("audio: play: %d samples are not whole frames of %d channels", len(pcm), p.format.Channels)
	}
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	stops := p.stops.Load()
	first := true
	for len(pcm) > 0 {
		ch := p.changes()
		p.mu.Lock()
		if err := p.check(stops); err != nil {
			p.mu.Unlock()
			return fmt.Errorf("audio: play: %w", err)
		}
		room := p.capacity - min(p.q.queued(), p.capacity)
		room -= room % uint64(p.format.Channels)
		if room > 0 {
			if first {
				p.beginOrContinue()
				first = false
			}
			n := min(uint64(len(pcm)), room, writeChunk)
			n -= n % uint64(p.format.Channels)
			p.q.push(pcm[:n])
			pcm = pcm[n:]
		}
		p.mu.Unlock()
		if room > 0 {
			continue
		}
		if err := p.wait(ctx, ch); err != nil {
			return fmt.Errorf("audio: play: %w", err)
		}
	}
	return nil
}

// beginOrContinue begins a new stream at the end of the queue if none is
// under way, or continues the current one, which a previous End may have
// marked complete. p.mu is held.
func (p *Playback) beginOrContinue() {
	end := p.endPos.Load()
	finished := end >= 0 && p.q.r.Load() >= uint64(end)
	if p.open && !finished {
		p.endPos.Store(-1)
		return
	}
	p.open = true
	p.endPos.Store(-1)
	p.firstWrite.Store(int64(time.Since(p.epoch)))
	p.streamStart.Store(p.q.written()) // before the stream's samples are published
}

// End marks the stream complete: what is queued plays even if it is less
// than the jitter buffer, and running out of it is the end of the stream
// rather than an underrun. A Write after End continues the stream; call
// End again after it.
func (p *Playback) End() {
	p.mu.Lock()
	if p.open {
		p.endPos.Store(int64(p.q.written()))
	}
	p.mu.Unlock()
	p.broadcast()
}

// Drain ends the stream as End does and waits until the device has taken
// every sample queued before the call. It returns early with ctx's error,
// or with an error matching ErrInterrupted if Stop discarded the audio,
// ErrOutputStopped or ErrPlaybackClosed. While paused, Drain waits for
// Resume.
func (p *Playback) Drain(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	stops := p.stops.Load()
	target := p.q.written()
	if p.open {
		p.endPos.Store(int64(target))
	}
	p.mu.Unlock()
	p.broadcast()
	for {
		ch := p.changes()
		if err := p.check(stops); err != nil {
			return fmt.Errorf("audio: drain speaker: %w", err)
		}
		if p.q.r.Load() >= target {
			return nil
		}
		if err := p.wait(ctx, ch); err != nil {
			return fmt.Errorf("audio: drain speaker: %w", err)
		}
	}
}

// Stop silences the output and discards everything queued, for barge-in:
// the queue is empty when Stop returns and the device plays silence from
// its next period on (the device's own buffer, a few periods, still
// sounds). A Write or Drain under way returns ErrInterrupted; the next
// Write begins a new stream. Stop is not a pause: Resume does not bring the
// audio back.
func (p *Playback) Stop() {
	p.mu.Lock()
	p.stops.Add(1)
	p.q.discard()
	p.open = false
	p.endPos.Store(-1)
	p.mu.Unlock()
	p.broadcast()
}

// Pause holds playback: the device plays silence, and the queue and the
// stream's position are kept until Resume. Underruns are not counted while
// paused.
func (p *Playback) Pause() { p.paused.Store(true) }

// Resume continues playback after Pause.
func (p *Playback) Resume() {
	p.paused.Store(false)
	p.broadcast()
}

// Paused reports whether playback is paused.
func (p *Playback) Paused() bool { return p.paused.Load() }

// Played returns how much of the current stream (or the last one, if none
// is under way) the device has taken: a playhead. It leads what is audible
// by the device's own buffer, a few periods.
func (p *Playback) Played() time.Duration {
	sp := p.streamStart.Load()
	pos := p.playedPos.Load()
	if pos <= sp {
		return 0
	}
	return p.duration(pos - sp)
}

// Queued returns how much audio is waiting to be played.
func (p *Playback) Queued() time.Duration { return p.duration(p.q.queued()) }

// Underruns returns how many times in all a stream ran out of audio before
// its End, so that silence played where audio was due.
func (p *Playback) Underruns() int64 { return p.underruns.Load() }

// FirstWrite returns when the current (or last) stream's first Write
// queued its audio; the zero Time if nothing was ever written.
func (p *Playback) FirstWrite() time.Time {
	if p.streamStart.Load() == 0 && p.q.written() == 0 {
		return time.Time{}
	}
	return p.epoch.Add(time.Duration(p.firstWrite.Load()))
}

// Started returns when the device first took audio of the current (or
// last) stream; the zero Time if it has not yet. Started minus FirstWrite
// is the latency from the first audio frame to playback.
func (p *Playback) Started() time.Time {
	sp := p.streamStart.Load()
	if p.startedFor.Load() != sp+1 {
		return time.Time{}
	}
	return p.epoch.Add(time.Duration(p.started.Load()))
}

func (p *Playback) duration(samples uint64) time.Duration {
	return audio.FramesDuration(int64(samples/uint64(p.format.Channels)), p.format.SampleRate)
}

// Close stops the device, waits for its thread to finish, discards what is
// queued and releases the audio backend. Blocked Writes and Drains return
// ErrPlaybackClosed at once. Close is idempotent.
func (p *Playback) Close() error {
	p.closeOnce.Do(func() {
		close(p.done)
		if p.dev != nil {
			p.dev.Uninit() // stops the device; no callback runs after it returns
		}
		p.wg.Wait()
		if p.mctx != nil {
			if err := p.mctx.Uninit(); err != nil {
				p.closeErr = fmt.Errorf("audio: close speaker: %w", err)
			}
			p.mctx.Free()
		}
	})
	return p.closeErr
}
