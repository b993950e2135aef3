package audio

import (
	"encoding/binary"
	"errors"
	"time"
)

// OggOpusIndex finds the pages of an Ogg Opus stream held in memory by
// their granule positions, without decoding, so that it can be played
// from any point: decoding a two-hour recording to reach its end takes
// seconds, and holding it decoded takes 230 MB at 16 kHz, where the
// stream itself takes 22 MB. Only the first logical stream is indexed.
// An OggOpusIndex is read-only once made, and safe for concurrent use.
type OggOpusIndex struct {
	data     []byte
	header   int // bytes before the first audio page
	marks    []oggMark
	channels int
	preSkip  int64
	frames   int64 // 48 kHz frames of audio in all
}

// oggMark is an audio page a decoder may start at: no packet continues
// into it from the page before, so its first packet starts at start, in
// granule positions.
type oggMark struct {
	off   int
	start int64
}

// opusPreRoll is the audio decoded before a seek point and dropped: the
// decoder's state converges within it (RFC 7845, 4.6).
const opusPreRoll = 80 * opusRate / 1000

// IndexOggOpus indexes data, a whole Ogg Opus stream. Data that is not
// Ogg Opus, or whose pages are damaged, matches ErrUndecodable.
func IndexOggOpus(data []byte) (*OggOpusIndex, error) {
	x := &OggOpusIndex{data: data, header: -1}
	var (
		serial  uint32
		started bool
		last    int64 = -1 // the last granule position given
		packets int        // header packets seen
	)
	for off := 0; off < len(data); {
		h, err := parseOggHeader(data[off:])
		if errors.Is(err, errNeedMore) || err == nil && off+h.headerLen+h.bodyLen > len(data) {
			return nil, undecodable("Ogg stream ends inside a page")
		}
		if err != nil {
			return nil, err
		}
		body := data[off+h.headerLen : off+h.headerLen+h.bodyLen]
		switch {
		case !started:
			if h.flags&oggBOS == 0 || !hasPrefix(body, "OpusHead") || len(body) < 19 {
				return nil, undecodable("the stream is not Ogg Opus")
			}
			started, serial = true, h.serial
			x.channels = int(body[9])
			x.preSkip = int64(binary.LittleEndian.Uint16(body[10:]))
			if x.channels < 1 || x.channels > 2 {
				return nil, undecodable("Opus with %d channels", x.channels)
			}
			packets = 1
		case h.serial != serial:
			// another logical stream: not ours
		case packets < 2:
			// the comment header, which may span pages
			for _, l := range h.lacing {
				if l < 255 {
					packets++
				}
			}
		default:
			if x.header < 0 {
				x.header = off
			}
			if h.flags&oggContinued == 0 && last >= 0 {
				x.marks = append(x.marks, oggMark{off: off, start: last})
			} else if len(x.marks) == 0 && h.flags&oggContinued == 0 {
				x.marks = append(x.marks, oggMark{off: off, start: 0})
			}
			if h.granule >= 0 {
				last = h.granule
			}
		}
		off += h.headerLen + h.bodyLen
	}
	if x.header < 0 || len(x.marks) == 0 {
		return nil, undecodable("the Ogg Opus stream holds no audio")
	}
	x.frames = max(last-x.preSkip, 0)
	return x, nil
}

// Duration is the stream's length.
func (x *OggOpusIndex) Duration() time.Duration { return FramesDuration(x.frames, opusRate) }

// SpeechFrom returns a SpeechDecoder primed with the stream's headers
// and the bytes to feed it, which give the audio from at on, as 16 kHz
// mono: decoding starts at a page shortly before at, and what comes
// before at is dropped.
func (x *OggOpusIndex) SpeechFrom(at time.Duration) (*SpeechDecoder, []byte, error) {
	target := min(int64(at)*opusRate/int64(time.Second), x.frames)
	d, err := NewSpeechDecoder(Format{})
	if err != nil {
		return nil, nil, err
	}
	// The first page on or before the pre-roll before target.
	k := 0
	for i, m := range x.marks {
		if m.start-x.preSkip > target-opusPreRoll {
			break
		}
		k = i
	}
	m := x.marks[k]
	if k == 0 || m.start < x.preSkip {
		// From the start: the decoder drops the pre-skip itself.
		d.skip = int(target * SpeechRate / opusRate)
		return d, x.data, nil
	}
	if _, err := d.Decode(x.data[:x.header]); err != nil {
		d.Close()
		return nil, nil, err
	}
	st, ok := d.dec.impl.(*oggStream)
	if !ok {
		d.Close()
		return nil, nil, undecodable("the stream is not Ogg Opus")
	}
	pos := m.start - x.preSkip // the output frame the page's first packet starts at
	st.resume(pos)
	d.skip = int((target - pos) * SpeechRate / opusRate)
	return d, x.data[m.off:], nil
}

// resume prepares a stream whose headers were decoded to take pages from
// the middle of the stream: the first packet fed starts at output frame
// pos, so there is no pre-skip to drop, and the last page's length
// counts from there.
func (s *oggStream) resume(pos int64) {
	s.skip = 0
	s.emitted = pos
}
