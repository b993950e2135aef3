package sphinx

/*
#cgo pkg-config: pocketsphinx sphinxbase
#include <stdlib.h>
#include <string.h>
#include <pocketsphinx.h>
#include <sphinxbase/err.h>
#include <sphinxbase/cmd_ln.h>
#include <sphinxbase/ckd_alloc.h>
#include <sphinxbase/fe.h>
#include <sphinxbase/feat.h>
#include <sphinxbase/cmn.h>
#include <sphinxbase/logmath.h>

// sx_new parses argv exactly like a command line (argv[0] is a program name)
// and builds a decoder. The decoder keeps its own reference to the config.
static ps_decoder_t *sx_new(int argc, char **argv) {
	cmd_ln_t *config = cmd_ln_parse_r(NULL, ps_args(), argc, argv, FALSE);
	if (config == NULL)
		return NULL;
	ps_decoder_t *ps = ps_init(config);
	cmd_ln_free_r(config);
	return ps;
}

// sx_cmn is a copy of the live cepstral-mean state taken right after
// ps_init, so that a reused decoder can start every stream from exactly the
// state a fresh one has.
typedef struct {
	int veclen;
	cmn_type_t type;
	int32 nframe;
	mfcc_t *mean;
	mfcc_t *var;
	mfcc_t *sum;
} sx_cmn;

static mfcc_t *sx_dup(const mfcc_t *src, int n) {
	if (src == NULL)
		return NULL;
	mfcc_t *dst = malloc(n * sizeof(mfcc_t));
	if (dst != NULL)
		memcpy(dst, src, n * sizeof(mfcc_t));
	return dst;
}

static void sx_cmn_free(sx_cmn *s) {
	if (s == NULL)
		return;
	free(s->mean);
	free(s->var);
	free(s->sum);
	free(s);
}

static sx_cmn *sx_cmn_save(ps_decoder_t *ps) {
	feat_t *f = ps_get_feat(ps);
	sx_cmn *s = calloc(1, sizeof(*s));
	if (s == NULL || f == NULL)
		return s;
	s->type = f->cmn;
	cmn_t *c = f->cmn_struct;
	if (c == NULL)
		return s;
	s->veclen = c->veclen;
	s->nframe = c->nframe;
	s->mean = sx_dup(c->cmn_mean, c->veclen);
	s->var = sx_dup(c->cmn_var, c->veclen);
	s->sum = sx_dup(c->sum, c->veclen);
	if ((c->cmn_mean && !s->mean) || (c->cmn_var && !s->var) || (c->sum && !s->sum)) {
		sx_cmn_free(s);
		return NULL;
	}
	return s;
}

static void sx_cmn_restore(ps_decoder_t *ps, const sx_cmn *s) {
	feat_t *f = ps_get_feat(ps);
	if (f == NULL || s == NULL)
		return;
	f->cmn = s->type;
	cmn_t *c = f->cmn_struct;
	if (c == NULL || c->veclen != s->veclen)
		return;
	c->nframe = s->nframe;
	if (s->mean)
		memcpy(c->cmn_mean, s->mean, s->veclen * sizeof(mfcc_t));
	if (s->var)
		memcpy(c->cmn_var, s->var, s->veclen * sizeof(mfcc_t));
	if (s->sum)
		memcpy(c->sum, s->sum, s->veclen * sizeof(mfcc_t));
}

// sx_track is a second front end built from the decoder's configuration. It
// receives the same samples and the same utterance starts and ends as the
// decoder's own front end, so its voice activity decisions are identical; but
// it is fed one frame at a time, which reveals which frames the detector kept.
// The decoder's word segments count kept frames only, so this is what maps
// them back to positions in the stream.
typedef struct {
	fe_t *fe;
	mfcc_t **cep;
	int rows;
	int frame_size;
	int frame_shift;
	long fed;  // samples fed since the utterance started
	long next; // utterance-relative index of the next frame to complete
} sx_track;

static void sx_track_free(sx_track *t) {
	if (t == NULL)
		return;
	if (t->cep != NULL)
		ckd_free_2d(t->cep);
	if (t->fe != NULL)
		fe_free(t->fe);
	free(t);
}

static sx_track *sx_track_new(ps_decoder_t *ps, int rows) {
	sx_track *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->fe = fe_init_auto_r(ps_get_config(ps));
	if (t->fe == NULL) {
		free(t);
		return NULL;
	}
	t->rows = rows;
	t->cep = (mfcc_t **)ckd_calloc_2d(rows, fe_get_output_size(t->fe), sizeof(mfcc_t));
	fe_get_input_size(t->fe, &t->frame_shift, &t->frame_size);
	return t;
}

static void sx_track_start_stream(sx_track *t) {
	fe_start_stream(t->fe);
}

static void sx_track_start_utt(sx_track *t) {
	fe_start_utt(t->fe);
	t->fed = 0;
	t->next = 0;
}

// sx_track_feed feeds n samples, cutting them exactly where frames complete,
// and writes to out the utterance-relative indices of the frames the front
// end kept. It returns how many it wrote, or -1 if the front end did
// something a frame-by-frame feed cannot explain.
static int sx_track_feed(sx_track *t, const int16 *data, int n, int *out, int outcap) {
	int nout = 0;
	while (n > 0) {
		long need = (long)t->frame_size + t->next * t->frame_shift - t->fed;
		int take = need < n ? (int)need : n;
		const int16 *p = data;
		size_t ns = take;
		int32 nfr = t->rows;
		if (fe_process_frames(t->fe, &p, &ns, t->cep, &nfr, NULL) < 0 || ns != 0)
			return -1;
		data += take;
		n -= take;
		t->fed += take;
		if (take == need) {
			// Frame t->next completed; anything that came out ends with it
			// (one frame in speech, the pre-speech buffer at a trigger).
			if (nfr > t->next + 1 || nout + nfr > outcap)
				return -1;
			for (int k = nfr - 1; k >= 0; k--)
				out[nout++] = (int)(t->next - k);
			t->next++;
		} else if (nfr != 0) {
			return -1;
		}
	}
	return nout;
}

// sx_track_end mirrors ps_end_utt: the front end turns the samples left over
// into one last frame, kept only in speech. It returns the number of frames
// kept (0 or 1); that frame's index is t->next.
static int sx_track_end(sx_track *t) {
	int32 nfr = 0;
	if (fe_end_utt(t->fe, t->cep[0], &nfr) < 0)
		return -1;
	return nfr;
}

// sx_seg is one word segment of a hypothesis.
typedef struct {
	const char *word;
	int sf, ef;
	double conf;
} sx_seg;

// sx_segments walks the current hypothesis' segmentation and fills up to cap
// entries; it returns the total number of segments.
static int sx_segments(ps_decoder_t *ps, sx_seg *out, int cap) {
	logmath_t *lmath = ps_get_logmath(ps);
	int n = 0;
	for (ps_seg_t *it = ps_seg_iter(ps); it != NULL; it = ps_seg_next(it)) {
		if (n < cap) {
			int sf = 0, ef = 0;
			ps_seg_frames(it, &sf, &ef);
			out[n].word = ps_seg_word(it);
			out[n].sf = sf;
			out[n].ef = ef;
			out[n].conf = logmath_exp(lmath, ps_seg_prob(it, NULL, NULL, NULL));
		}
		n++;
	}
	return n;
}

static void sx_silence(void) {
	err_set_logfp(NULL);
}
*/
import "C"

import (
	"fmt"
	"strconv"
	"sync"
	"unsafe"
)

var silenceOnce sync.Once

// silenceLibrary switches the library's global log sink off.
func silenceLibrary() {
	silenceOnce.Do(func() { C.sx_silence() })
}

// handle owns every C resource of one Decoder. It holds no Go pointers and is
// never referenced from C.
type handle struct {
	ps    *C.ps_decoder_t
	cmn   *C.sx_cmn
	track *C.sx_track
	buf   *C.int16 // BlockSamples samples, the copy of one block for C
	kept  *C.int   // keptCap frame indices written by sx_track_feed
	segs  *C.sx_seg
	nsegs int

	frameSize, frameShift int
	keptCap               int
}

// newHandle builds the decoder and its companions; on failure everything
// allocated so far is released.
func newHandle(cfg Config) (*handle, error) {
	silenceLibrary()
	args := []string{
		"earshot",
		"-hmm", cfg.HMM,
		"-lm", cfg.LM,
		"-dict", cfg.Dict,
		"-samprate", strconv.Itoa(cfg.SampleRate),
		"-vad_prespeech", strconv.Itoa(cfg.VADPreSpeech),
		"-vad_startspeech", strconv.Itoa(cfg.VADStartSpeech),
		"-vad_postspeech", strconv.Itoa(cfg.VADPostSpeech),
		"-vad_threshold", strconv.FormatFloat(cfg.VADThreshold, 'g', -1, 64),
	}
	args = append(args, cfg.Search.args()...)
	argv := C.malloc(C.size_t(len(args)) * C.size_t(unsafe.Sizeof((*C.char)(nil))))
	if argv == nil {
		return nil, fmt.Errorf("%w: out of memory", ErrInit)
	}
	defer C.free(argv)
	cargs := unsafe.Slice((**C.char)(argv), len(args))
	for i, a := range args {
		cargs[i] = C.CString(a)
	}
	defer func() {
		for _, p := range cargs {
			C.free(unsafe.Pointer(p))
		}
	}()

	h := &handle{}
	h.ps = C.sx_new(C.int(len(args)), (**C.char)(argv))
	if h.ps == nil {
		return nil, ErrInit
	}
	if h.cmn = C.sx_cmn_save(h.ps); h.cmn == nil {
		h.free()
		return nil, fmt.Errorf("%w: saving feature state", ErrInit)
	}
	rows := cfg.VADPreSpeech + 8
	if h.track = C.sx_track_new(h.ps, C.int(rows)); h.track == nil || h.track.cep == nil {
		h.free()
		return nil, fmt.Errorf("%w: building the frame tracker", ErrInit)
	}
	h.frameSize = int(h.track.frame_size)
	h.frameShift = int(h.track.frame_shift)
	// One block yields at most BlockSamples/frameShift+1 new frames, plus the
	// pre-speech buffer released when speech starts.
	h.keptCap = BlockSamples/h.frameShift + rows + 2
	h.buf = (*C.int16)(C.malloc(C.size_t(BlockSamples) * C.size_t(unsafe.Sizeof(C.int16(0)))))
	h.kept = (*C.int)(C.malloc(C.size_t(h.keptCap) * C.size_t(unsafe.Sizeof(C.int(0)))))
	h.nsegs = 64
	h.segs = (*C.sx_seg)(C.malloc(C.size_t(h.nsegs) * C.size_t(unsafe.Sizeof(C.sx_seg{}))))
	if h.buf == nil || h.kept == nil || h.segs == nil {
		h.free()
		return nil, fmt.Errorf("%w: out of memory", ErrInit)
	}
	return h, nil
}

// free releases every C resource; it is safe on a partly built handle and
// idempotent.
func (h *handle) free() {
	if h.track != nil {
		C.sx_track_free(h.track)
		h.track = nil
	}
	if h.cmn != nil {
		C.sx_cmn_free(h.cmn)
		h.cmn = nil
	}
	if h.ps != nil {
		C.ps_free(h.ps)
		h.ps = nil
	}
	for _, p := range []unsafe.Pointer{unsafe.Pointer(h.buf), unsafe.Pointer(h.kept), unsafe.Pointer(h.segs)} {
		if p != nil {
			C.free(p)
		}
	}
	h.buf, h.kept, h.segs = nil, nil, nil
}

// startStream puts the decoder and the tracker back into the state of a
// freshly initialised decoder: noise statistics, stream sample counter and
// cepstral means.
func (h *handle) startStream() {
	C.ps_start_stream(h.ps)
	C.sx_cmn_restore(h.ps, h.cmn)
	C.sx_track_start_stream(h.track)
}

// startUtt starts a library utterance and mirrors it in the tracker.
func (h *handle) startUtt() error {
	if rc := C.ps_start_utt(h.ps); rc < 0 {
		return &LibraryError{Op: "ps_start_utt", Code: int(rc)}
	}
	C.sx_track_start_utt(h.track)
	return nil
}

// endUtt ends the library utterance, mirrors it in the tracker and reports
// whether the tracker kept one last frame (utterance-relative index next).
func (h *handle) endUtt() (lastKept bool, next int, err error) {
	if rc := C.ps_end_utt(h.ps); rc < 0 {
		return false, 0, &LibraryError{Op: "ps_end_utt", Code: int(rc)}
	}
	n := C.sx_track_end(h.track)
	if n < 0 {
		return false, 0, &LibraryError{Op: "fe_end_utt", Code: int(n)}
	}
	return n > 0, int(h.track.next), nil
}

// process feeds one block (at most BlockSamples samples) to the tracker and
// the decoder. It appends to kept the utterance-relative indices of frames
// the front end kept and reports the detector's state after the block.
func (h *handle) process(block []int16, kept []int) ([]int, bool, error) {
	n := len(block)
	if n == 0 {
		return kept, C.ps_get_in_speech(h.ps) != 0, nil
	}
	dst := unsafe.Slice((*int16)(unsafe.Pointer(h.buf)), BlockSamples)
	copy(dst, block)

	nk := C.sx_track_feed(h.track, h.buf, C.int(n), h.kept, C.int(h.keptCap))
	if nk < 0 {
		return kept, false, &LibraryError{Op: "fe_process_frames", Code: int(nk)}
	}
	for _, k := range unsafe.Slice((*C.int)(unsafe.Pointer(h.kept)), h.keptCap)[:nk] {
		kept = append(kept, int(k))
	}
	if rc := C.ps_process_raw(h.ps, h.buf, C.size_t(n), 0, 0); rc < 0 {
		return kept, false, &LibraryError{Op: "ps_process_raw", Code: int(rc)}
	}
	return kept, C.ps_get_in_speech(h.ps) != 0, nil
}

// nFrames is the number of frames the decoder searched in this utterance.
func (h *handle) nFrames() int { return int(C.ps_get_n_frames(h.ps)) }

// segment is one entry of the library's segmentation, in library frames.
type segment struct {
	word   string
	sf, ef int
	conf   float64
}

// hypothesis returns the current best hypothesis string and its word
// segmentation (fillers included, frames as the library reports them).
func (h *handle) hypothesis(segs []segment) (string, []segment) {
	var text string
	if p := C.ps_get_hyp(h.ps, nil); p != nil {
		text = C.GoString(p)
	}
	for {
		n := int(C.sx_segments(h.ps, h.segs, C.int(h.nsegs)))
		if n > h.nsegs {
			// Grow and walk again; hypotheses longer than 64 segments are rare.
			size := max(n, 2*h.nsegs)
			p := C.realloc(unsafe.Pointer(h.segs), C.size_t(size)*C.size_t(unsafe.Sizeof(C.sx_seg{})))
			if p == nil {
				n = h.nsegs // keep what fits
			} else {
				h.segs, h.nsegs = (*C.sx_seg)(p), size
				continue
			}
		}
		for _, s := range unsafe.Slice(h.segs, h.nsegs)[:n] {
			segs = append(segs, segment{
				word: C.GoString(s.word),
				sf:   int(s.sf),
				ef:   int(s.ef),
				conf: float64(s.conf),
			})
		}
		return text, segs
	}
}
