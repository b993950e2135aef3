package audio

import (
	"errors"
	"io"
)

// pullStream adapts a pull-based decoder (one that reads an io.Reader, as the
// MP3 and FLAC libraries do) to push-based input. The decoder runs in a
// worker goroutine owned by the pullStream; close stops it and waits for it.
//
// The owner and the worker hand control back and forth so that exactly one of
// them runs at a time, which makes decoding deterministic and needs no
// locks: decode gives the worker a chunk and blocks until the worker has
// consumed all of it and asks for more (or has finished). Everything the
// worker decoded from that chunk is then in out. The channel operations
// order every access to the shared fields below.
type pullStream struct {
	in   chan []byte   // owner -> worker: the next chunk; closed at end of input
	need chan struct{} // worker -> owner: chunk consumed, waiting for the next
	done chan struct{} // closed when the worker has returned
	quit chan struct{} // closed by close to stop the worker

	ready   bool // owner side: the worker is waiting on in
	stopped bool // owner side: quit is closed

	// Handed between owner and worker by the protocol above.
	out     []float32
	info    Info
	hasInfo bool
	err     error

	// Worker side only.
	pending []byte
	eof     bool
}

// errStopped is what the worker's reads return once close was called.
var errStopped = errors.New("audio: stream decoder closed")

// pullFunc is a pull-based decoder: it reads its input from r and hands
// decoded audio to s.emit and the format to s.setInfo.
type pullFunc func(r io.Reader, s *pullStream) error

func newPullStream(run pullFunc) *pullStream {
	s := &pullStream{
		in:   make(chan []byte),
		need: make(chan struct{}),
		done: make(chan struct{}),
		quit: make(chan struct{}),
	}
	go s.work(run)
	return s
}

func (s *pullStream) work(run pullFunc) {
	defer close(s.done)
	defer recoverUndecodable("decoder", &s.err)
	err := run(s, s)
	if errors.Is(err, errStopped) {
		err = nil
	}
	s.err = err
}

// Read is the worker's view of the input: it returns the current chunk and,
// when that is used up, hands control back to the owner until the next one.
func (s *pullStream) Read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		if s.eof {
			return 0, io.EOF
		}
		select {
		case s.need <- struct{}{}:
		case <-s.quit:
			return 0, errStopped
		}
		select {
		case b, ok := <-s.in:
			if !ok {
				s.eof = true
			}
			s.pending = b
		case <-s.quit:
			return 0, errStopped
		}
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// emit appends decoded samples to the output of the current decode call.
func (s *pullStream) emit(samples []float32) error {
	if len(s.out)+len(samples) > chunkLimit {
		return errChunkTooLarge()
	}
	s.out = append(s.out, samples...)
	return nil
}

func (s *pullStream) setInfo(i Info) {
	s.info, s.hasInfo = i, true
}

// waitReady blocks until the worker waits for input (true) or has returned
// (false).
func (s *pullStream) waitReady() bool {
	if s.ready {
		return true
	}
	select {
	case <-s.need:
		s.ready = true
		return true
	case <-s.done:
		return false
	}
}

func (s *pullStream) decode(dst []float32, p []byte) ([]float32, error) {
	if len(p) == 0 {
		return dst, nil
	}
	if !s.waitReady() {
		return dst, s.err // finished: later input is ignored
	}
	s.out = dst
	s.in <- p
	s.ready = false
	finished := !s.waitReady()
	dst, s.out = s.out, nil
	if finished {
		return dst, s.err
	}
	return dst, nil
}

func (s *pullStream) flush(dst []float32) ([]float32, error) {
	if s.waitReady() {
		s.out = dst
		close(s.in)
		s.ready = false
		<-s.done
		dst, s.out = s.out, nil
	}
	if s.err == nil && !s.hasInfo {
		return dst, undecodable("stream ends before its audio header")
	}
	return dst, s.err
}

func (s *pullStream) Info() (Info, bool) {
	if s.ready {
		return s.info, s.hasInfo
	}
	select {
	case <-s.done:
		return s.info, s.hasInfo
	default:
		// The worker has not yet run (no input so far): nothing known.
		return Info{}, false
	}
}

func (s *pullStream) close() {
	if !s.stopped {
		s.stopped = true
		close(s.quit)
	}
	<-s.done
}

// recoverUndecodable turns a panic in a third-party decoder into an error
// matching ErrUndecodable. Deferred at every call into such a decoder.
func recoverUndecodable(codec string, err *error) {
	if r := recover(); r != nil {
		*err = undecodable("%s failed on corrupt data (%v)", codec, r)
	}
}
