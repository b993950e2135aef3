package audio

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"io"
	"math"
	"testing"
)

func TestSeekBuffer(t *testing.T) {
	var s SeekBuffer
	s.Write([]byte("hello world"))
	if _, err := s.Seek(6, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	s.Write([]byte("there"))
	if at, _ := s.Seek(0, io.SeekCurrent); at != 11 {
		t.Errorf("offset after overwriting %d, want 11", at)
	}
	s.Seek(2, io.SeekEnd)
	s.Write([]byte("!"))
	if got := string(s.Bytes()); got != "hello there\x00\x00!" {
		t.Errorf("contents %q", got)
	}
	if _, err := s.Seek(-1, io.SeekStart); err == nil {
		t.Error("a negative offset was accepted")
	}
	if _, err := s.Seek(0, 7); err == nil {
		t.Error("an unknown whence was accepted")
	}
}

// TestFLACStreamInfoPatched: FLAC written to a destination that can seek
// gets the real sample count and the MD5 of its samples in STREAMINFO; to
// one that cannot, "unknown" (0) as a stream has.
func TestFLACStreamInfoPatched(t *testing.T) {
	pcm := make([]int16, 48000+1234)
	for i := range pcm {
		pcm[i] = int16(6000 * math.Sin(2*math.Pi*440*float64(i)/48000))
	}
	encode := func(w io.Writer) {
		t.Helper()
		e, err := NewEncoder(t.Context(), w, EncodeSpec{Encoding: "flac", SampleRate: 48000})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Write(pcm[:1000]); err != nil {
			t.Fatal(err)
		}
		if err := e.Write(pcm[1000:]); err != nil {
			t.Fatal(err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var file SeekBuffer
	file.Write([]byte("prefix")) // the stream need not start at offset 0
	encode(&file)
	b := file.Bytes()[len("prefix"):]
	v := binary.BigEndian.Uint64(b[18:26])
	if n := v & (1<<36 - 1); n != uint64(len(pcm)) {
		t.Errorf("sample count %d, want %d", n, len(pcm))
	}
	if rate := v >> 44; rate != 48000 {
		t.Errorf("sample rate %d, want 48000 (the patch must keep it)", rate)
	}
	dec, err := Decode(t.Context(), bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	got := Float32ToInt16(nil, dec.Samples)
	want := md5.Sum(Int16ToBytes(nil, got))
	if !bytes.Equal(b[26:42], want[:]) {
		t.Errorf("STREAMINFO MD5 %x, want %x (of the %d decoded samples)", b[26:42], want, len(got))
	}

	var stream bytes.Buffer
	encode(&stream)
	if n := binary.BigEndian.Uint64(stream.Bytes()[18:26]) & (1<<36 - 1); n != 0 {
		t.Errorf("a stream's sample count %d, want 0 (unknown)", n)
	}
}
