//go:build !noengine

package audio

// #cgo LDFLAGS: -lmp3lame
// #include <stdlib.h>
// #include <lame/lame.h>
import "C"

import (
	"fmt"
	"io"
	"unsafe"
)

// mp3Quality is LAME's algorithm quality, 0 (best, slowest) to 9: 5 is
// LAME's "good quality, fast", ample for speech at 32-48 kbit/s.
const mp3Quality = 5

// mp3Chunk is how many samples go to LAME per call; the output buffer is
// sized for it by LAME's worst case (1.25 * samples + 7200 bytes).
const mp3Chunk = 4096

// mp3Encoder encodes mono MP3 (MPEG-2 layer III at 22.05 kHz, constant bit
// rate) with libmp3lame. The bit reservoir is off, so every frame decodes on
// its own: a client may start or cut the stream at any frame, and decoders
// that mishandle the reservoir of low-rate MPEG-2 streams (go-mp3 garbles
// 22.05 kHz 32 kbit/s audio that borrows from more than the previous frame;
// this package decodes MPEG-2 through ffmpeg for that reason) play it
// correctly. No Xing/LAME tag is written: it belongs in the first frame but
// holds totals known only at the end, so a streamed file cannot carry it. Decoders therefore play LAME's encoder delay (576
// samples plus the decoder's 529) as leading silence, as with any streamed
// MP3.
type mp3Encoder struct {
	w   io.Writer
	gfp *C.lame_global_flags
	out []byte
}

func newMP3Encoder(w io.Writer, spec EncodeSpec) (*mp3Encoder, error) {
	gfp := C.lame_init()
	if gfp == nil {
		return nil, fmt.Errorf("lame_init failed")
	}
	ok := C.lame_set_num_channels(gfp, 1) == 0 &&
		C.lame_set_in_samplerate(gfp, C.int(spec.SampleRate)) == 0 &&
		C.lame_set_out_samplerate(gfp, C.int(spec.SampleRate)) == 0 &&
		C.lame_set_mode(gfp, C.MONO) == 0 &&
		C.lame_set_VBR(gfp, C.vbr_off) == 0 &&
		C.lame_set_brate(gfp, C.int(spec.BitRate/1000)) == 0 &&
		C.lame_set_quality(gfp, mp3Quality) == 0 &&
		C.lame_set_bWriteVbrTag(gfp, 0) == 0 &&
		C.lame_set_disable_reservoir(gfp, 1) == 0 &&
		C.lame_init_params(gfp) >= 0
	if !ok {
		C.lame_close(gfp)
		return nil, fmt.Errorf("libmp3lame refused %d Hz at %d bit/s", spec.SampleRate, spec.BitRate)
	}
	return &mp3Encoder{w: w, gfp: gfp, out: make([]byte, mp3Chunk*5/4+7200)}, nil
}

func (m *mp3Encoder) write(pcm []int16) error {
	for len(pcm) > 0 {
		n := min(len(pcm), mp3Chunk)
		p := (*C.short)(unsafe.Pointer(&pcm[0]))
		// Mono: LAME reads only the left buffer.
		got := C.lame_encode_buffer(m.gfp, p, p, C.int(n),
			(*C.uchar)(unsafe.Pointer(&m.out[0])), C.int(len(m.out)))
		if got < 0 {
			return fmt.Errorf("lame_encode_buffer failed (%d)", int(got))
		}
		if got > 0 {
			if _, err := m.w.Write(m.out[:got]); err != nil {
				return err
			}
		}
		pcm = pcm[n:]
	}
	return nil
}

func (m *mp3Encoder) finish() error {
	got := C.lame_encode_flush(m.gfp, (*C.uchar)(unsafe.Pointer(&m.out[0])), C.int(len(m.out)))
	m.abort()
	if got < 0 {
		return fmt.Errorf("lame_encode_flush failed (%d)", int(got))
	}
	if _, err := m.w.Write(m.out[:got]); err != nil {
		return err
	}
	return nil
}

func (m *mp3Encoder) abort() {
	if m.gfp != nil {
		C.lame_close(m.gfp)
		m.gfp = nil
	}
}
