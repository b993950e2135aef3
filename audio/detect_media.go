package audio

import (
	"encoding/binary"
	"math/bits"
	"strings"
)

// Detection of the containers of video and meeting recordings: the ISO
// base media file format (MP4, M4A, MOV, 3GP), which starts with a box,
// and Matroska (MKV, WebM), which starts with an EBML header.

// ebmlMagic is the ID of the EBML header, the first bytes of every
// Matroska and WebM file.
const ebmlMagic = "\x1a\x45\xdf\xa3"

// maxFtypBox bounds the ftyp box: a major brand, a version and a list of
// compatible brands, a few dozen bytes in files that tools write.
const maxFtypBox = 4096

// firstBoxTypes are the types a file of the ISO family may start with:
// ftyp in every file written since MP4 exists; moov, mdat or wide in
// QuickTime movies older than it, which FFmpeg reads too.
var firstBoxTypes = [...]string{"ftyp", "moov", "mdat", "wide"}

// mayBeBox reports whether b, shorter than a box header (8 bytes), can
// still become the first box of an MP4 file: a size small enough for the
// box types above (its first two bytes zero), then a prefix of a type.
func mayBeBox(b []byte) bool {
	for i := range min(len(b), 2) {
		if b[i] != 0 {
			return false
		}
	}
	if len(b) <= 4 {
		return true
	}
	for _, t := range firstBoxTypes {
		if strings.HasPrefix(t, string(b[4:])) {
			return true
		}
	}
	return false
}

// isBox reports whether b (8 bytes or more) starts with the header of one
// of the boxes an MP4 file starts with.
func isBox(b []byte) bool {
	size := binary.BigEndian.Uint32(b)
	typ := string(b[4:8])
	switch {
	case typ == "ftyp":
		// A major brand and a minor version at least, then brands of
		// 4 bytes each.
		return size >= 16 && size <= maxFtypBox && size%4 == 0
	case typ == "wide":
		return size == 8 || size == 0
	}
	// moov and mdat: any size (1 is a 64-bit size that follows; 0 runs
	// to the end of the file).
	return typ == "moov" || typ == "mdat"
}

// sniffMP4 decides on bytes that start with an MP4 box: audio or video
// of the ISO family, or an image of it (HEIF, AVIF), which holds no sound.
func sniffMP4(b []byte) (Container, bool, error) {
	if string(b[4:8]) == "ftyp" && len(b) >= 12 {
		switch string(b[8:12]) {
		case "heic", "heix", "heim", "heis", "mif1", "msf1", "avif", "avis":
			return ContainerUnknown, false, undecodable("the file is a HEIF or AVIF image, not audio")
		}
	}
	return ContainerMP4, false, nil
}

// MediaKind names the kind of file whose first bytes are b, for messages:
// "M4A", "QuickTime movie", "3GP", "MP4", "WebM" or "Matroska", or "" for
// other files. For Matroska it reads the header's DocType; the brand of
// the ftyp box for MP4.
func MediaKind(b []byte) string {
	switch c, more, err := sniff(b, true); {
	case more || err != nil:
		return ""
	case c == ContainerMatroska:
		if strings.EqualFold(ebmlDocType(b), "webm") {
			return "WebM"
		}
		return "Matroska"
	case c != ContainerMP4:
		return ""
	}
	if string(b[4:8]) != "ftyp" {
		return "QuickTime movie"
	}
	if len(b) < 12 {
		return "MP4"
	}
	brand := string(b[8:12])
	switch {
	case brand == "M4A " || brand == "M4B " || brand == "M4P ":
		return "M4A"
	case brand == "qt  ":
		return "QuickTime movie"
	case strings.HasPrefix(brand, "3gp"), strings.HasPrefix(brand, "3g2"):
		return "3GP"
	}
	return "MP4"
}

// EBML element IDs of the header read here.
const (
	ebmlIDDocType = 0x4282
)

// ebmlDocType returns the DocType of the EBML header at the start of b
// ("webm", "matroska"), or "" when b does not hold it.
func ebmlDocType(b []byte) string {
	if !hasPrefix(b, ebmlMagic) {
		return ""
	}
	size, n := ebmlVint(b[4:], true)
	if n == 0 {
		return ""
	}
	body := b[4+n:]
	if size >= 0 && size < int64(len(body)) {
		body = body[:size]
	}
	for len(body) > 0 {
		id, n := ebmlID(body)
		if n == 0 {
			return ""
		}
		body = body[n:]
		size, m := ebmlVint(body, true)
		if m == 0 || size < 0 || size > int64(len(body)-m) {
			return ""
		}
		value := body[m : m+int(size)]
		body = body[m+int(size):]
		if id == ebmlIDDocType {
			return strings.TrimRight(string(value), "\x00")
		}
	}
	return ""
}

// ebmlID reads an element ID (its length marker kept, as IDs are written)
// and returns it with its length in bytes, or n 0 when b does not hold one.
func ebmlID(b []byte) (id uint32, n int) {
	if len(b) == 0 || b[0] == 0 {
		return 0, 0
	}
	n = 1 + bits.LeadingZeros8(b[0])
	if n > 4 || len(b) < n {
		return 0, 0
	}
	for _, c := range b[:n] {
		id = id<<8 | uint32(c)
	}
	return id, n
}

// ebmlVint reads a variable-length integer: its value (the length marker
// removed) and its length in bytes, or n 0 when b does not hold one. A
// size of all ones is "unknown" and reads as -1 when sized is set.
func ebmlVint(b []byte, sized bool) (v int64, n int) {
	if len(b) == 0 || b[0] == 0 {
		return 0, 0
	}
	n = 1 + bits.LeadingZeros8(b[0])
	if len(b) < n {
		return 0, 0
	}
	v = int64(b[0]) & (0xFF >> n)
	all := v == 0xFF>>n
	for _, c := range b[1:n] {
		v = v<<8 | int64(c)
		all = all && c == 0xFF
	}
	if sized && all {
		return -1, n
	}
	return v, n
}
