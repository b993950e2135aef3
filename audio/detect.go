package audio

import (
	"bytes"
	"errors"
)

// detectLimit is how many leading bytes container detection may wait for.
// Only an Ogg stream needs more than a few dozen: its first pages (up to
// three begin-of-stream pages, e.g. a Skeleton track before the audio) must be
// seen to tell Vorbis from Opus.
const detectLimit = 3 * maxOggPage

// Detect reports the container of audio from its first bytes. It needs only
// a few bytes for most containers (12 for WAV, 7 for AAC in ADTS, the
// ftyp box for MP4, 4 for Matroska and WebM) and the first Ogg page for Ogg; with too few bytes, or bytes of no supported
// container, it returns ContainerUnknown. RIFX and RF64 files are reported as ContainerWAV, since
// they are WAV files, but decoding refuses them with a clear error. A file
// starting with an ID3 tag is reported as ContainerMP3 (what nearly every
// tagged file is); the decoders look past the tag.
func Detect(b []byte) Container {
	c, more, err := sniff(b, false)
	if more || err != nil {
		return ContainerUnknown
	}
	return c
}

// errNeedMore is never returned to users; sniff reports it through its
// needMore result.
var errNeedMore = errors.New("need more bytes")

// sniff examines the first bytes of a stream. needMore reports that b is a
// prefix of something that might be supported but is too short to decide.
// Otherwise it returns either a container or an error matching
// ErrUndecodable that names what the bytes are, when it can tell. atEOF says
// b is the whole stream, so an Ogg stream is judged on the pages it has.
func sniff(b []byte, atEOF bool) (c Container, needMore bool, err error) {
	if len(b) < 8 && mayBeBox(b) {
		return ContainerUnknown, true, nil
	}
	if len(b) < 4 {
		for _, sig := range [...]string{"RIFF", "RIFX", "RF64", "fLaC", "OggS", "ID3", ebmlMagic} {
			if bytes.HasPrefix([]byte(sig), b) {
				return ContainerUnknown, true, nil
			}
		}
		if len(b) >= 1 && b[0] == 0xFF && (len(b) < 2 || b[1]&0xE0 == 0xE0) {
			return ContainerUnknown, true, nil
		}
		if len(b) == 0 {
			return ContainerUnknown, true, nil
		}
	}
	switch {
	case hasPrefix(b, "RIFF"), hasPrefix(b, "RIFX"), hasPrefix(b, "RF64"):
		if len(b) < 12 {
			return ContainerUnknown, true, nil
		}
		if string(b[8:12]) != "WAVE" {
			return ContainerUnknown, false, undecodable("RIFF file of type %q is not WAVE audio", printable(b[8:12]))
		}
		return ContainerWAV, false, nil
	case hasPrefix(b, "fLaC"):
		return ContainerFLAC, false, nil
	case hasPrefix(b, "ID3"):
		return ContainerMP3, false, nil
	case hasPrefix(b, "OggS"):
		return sniffOgg(b, atEOF)
	case hasPrefix(b, ebmlMagic):
		return ContainerMatroska, false, nil
	case isADTSSync(b):
		return sniffADTS(b, atEOF)
	case len(b) >= 4 && b[0] == 0xFF && b[1]&0xE0 == 0xE0:
		if err := checkMPEGHeader(b); err != nil {
			return ContainerUnknown, false, err
		}
		return ContainerMP3, false, nil
	case len(b) >= 8 && isBox(b):
		return sniffMP4(b)
	}
	if name := knownUnsupported(b); name != "" {
		return ContainerUnknown, false, undecodable("%s is not supported (use WAV, MP3, FLAC, Ogg Vorbis, Ogg Opus, AAC, MP4 or WebM)", name)
	}
	return ContainerUnknown, false, undecodable("the bytes are not a known audio container (WAV, MP3, FLAC, Ogg Vorbis, Ogg Opus, AAC, MP4 or WebM)")
}

// sniffOgg walks the begin-of-stream pages at the start of an Ogg stream and
// reports the first Vorbis or Opus track.
func sniffOgg(b []byte, atEOF bool) (Container, bool, error) {
	var other string
	for off := 0; ; {
		h, err := parseOggHeader(b[off:])
		if errors.Is(err, errNeedMore) {
			if atEOF || len(b) >= detectLimit {
				break
			}
			return ContainerUnknown, true, nil
		}
		if err != nil {
			return ContainerUnknown, false, err
		}
		if h.flags&oggBOS == 0 {
			break // past the begin-of-stream pages
		}
		first := b[off+h.headerLen:]
		complete := len(first) >= h.bodyLen
		if complete {
			first = first[:h.bodyLen]
		}
		c, name, ok := oggCodec(first)
		switch {
		case ok && c != ContainerUnknown:
			return c, false, nil
		case ok && other == "":
			other = name
		}
		if !ok || !complete {
			if atEOF || len(b) >= detectLimit {
				break
			}
			return ContainerUnknown, true, nil
		}
		off += h.headerLen + h.bodyLen
	}
	if other != "" && other != "Ogg Skeleton" {
		return ContainerUnknown, false, undecodable("Ogg stream holds %s, not Vorbis or Opus", other)
	}
	return ContainerUnknown, false, undecodable("Ogg stream holds no Vorbis or Opus track")
}

// oggCodec identifies a logical Ogg stream by the start of its first packet.
// ok is false when p is too short to tell.
func oggCodec(p []byte) (c Container, name string, ok bool) {
	known := []struct {
		magic string
		c     Container
		name  string
	}{
		{"OpusHead", ContainerOggOpus, "Opus"},
		{"\x01vorbis", ContainerOggVorbis, "Vorbis"},
		{"fishead\x00", ContainerUnknown, "Ogg Skeleton"},
		{"Speex   ", ContainerUnknown, "Speex"},
		{"\x7fFLAC", ContainerUnknown, "FLAC-in-Ogg"},
		{"\x80theora", ContainerUnknown, "Theora video"},
	}
	for _, k := range known {
		if hasPrefix(p, k.magic) {
			return k.c, k.name, true
		}
		if len(p) < len(k.magic) && hasPrefix([]byte(k.magic), string(p)) {
			return ContainerUnknown, "", false
		}
	}
	return ContainerUnknown, "an unknown codec", true
}

// checkMPEGHeader tells MP3 (MPEG-1, 2 or 2.5 layer III) from the other formats that
// share the 11-bit frame sync, so the error can name them.
func checkMPEGHeader(b []byte) error {
	version := (b[1] >> 3) & 3 // 0: MPEG 2.5, 1: reserved, 2: MPEG-2, 3: MPEG-1
	layer := (b[1] >> 1) & 3   // 1: III, 2: II, 3: I, 0: reserved (ADTS AAC uses it)
	bitrate := b[2] >> 4
	rate := (b[2] >> 2) & 3
	switch {
	case b[1]&0xF6 == 0xF0:
		return undecodable("AAC (ADTS) audio behind an ID3 tag is not supported")
	case version == 1 || layer == 0 || bitrate == 15 || rate == 3:
		return undecodable("the bytes start with an invalid MPEG audio frame header")
	case layer != 1:
		return undecodable("MPEG layer %s audio is not supported, only layer III (MP3)", map[byte]string{2: "II", 3: "I"}[layer])
	case bitrate == 0:
		return undecodable("free-format MP3 is not supported")
	}
	return nil
}

func knownUnsupported(b []byte) string {
	switch {
	case hasPrefix(b, "FORM"):
		return "AIFF audio"
	case hasPrefix(b, "#!AMR"):
		return "AMR audio"
	case hasPrefix(b, "caff"):
		return "CAF audio"
	case hasPrefix(b, ".snd"):
		return "Sun/NeXT AU audio"
	case hasPrefix(b, "MThd"):
		return "MIDI"
	}
	return ""
}

func hasPrefix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[:len(s)]) == s
}

// printable quotes short binary fields readably in error messages.
func printable(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if c < 0x20 || c > 0x7E {
			c = '?'
		}
		out[i] = c
	}
	return string(out)
}
