#include <stdlib.h>
#include <setjmp.h>
#include <string.h>
#include <stdio.h>
#include <dlfcn.h>
#include <flite/flite.h>
#include <flite/cst_cg.h>
#include "ftglue.h"
#include "_cgo_export.h"

int ft_init(void) { return flite_init(); }

/* ft_voice loads a voice's library (libflite_<name>.so.1, from Debian's
   libflite1) and registers the voice. The libraries are opened here, on
   first use, rather than linked: each relocates megabytes of tables when
   it loads, which a process that never speaks should not pay for. On
   failure it returns NULL with the reason in err (n bytes). */
void *ft_voice(const char *name, char *err, size_t n) {
	char lib[96], sym[96];
	err[0] = 0;
	if (snprintf(lib, sizeof lib, "libflite_%s.so.1", name) >= (int)sizeof lib ||
	    snprintf(sym, sizeof sym, "register_%s", name) >= (int)sizeof sym) {
		snprintf(err, n, "voice name too long");
		return NULL;
	}
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		snprintf(err, n, "%s", dlerror());
		return NULL;
	}
	cst_voice *(*reg)(const char *) = (cst_voice * (*)(const char *)) dlsym(h, sym);
	if (reg == NULL) {
		snprintf(err, n, "%s", dlerror());
		return NULL;
	}
	cst_voice *v = reg(NULL);
	if (v == NULL)
		snprintf(err, n, "%s did not register the voice", sym);
	return v;
}

void ft_job_clear(ft_job *job) {
	free(job->ends);
	free(job->pos);
	job->ends = NULL;
	job->pos = NULL;
	job->nwords = 0;
	job->have_words = 0;
	job->utt = NULL;
}

/* ft_words fills the job's word table from the utterance: by the time
   audio streams, every segment has its end time. */
static void ft_words(ft_job *job) {
	cst_utterance *u = job->utt;
	int n = 0;
	job->have_words = 1;
	for (cst_item *w = relation_head(utt_relation(u, "Word")); w; w = item_next(w))
		n++;
	if (n == 0)
		return;
	job->ends = malloc(n * sizeof(float));
	job->pos = malloc(n * sizeof(int));
	if (job->ends == NULL || job->pos == NULL)
		return;
	int i = 0;
	for (cst_item *w = relation_head(utt_relation(u, "Word")); w && i < n; w = item_next(w), i++) {
		job->ends[i] = ffeature_float(w, "R:SylStructure.daughtern.daughtern.R:Segment.end");
		job->pos[i] = ffeature_int(w, "R:Token.parent.file_pos");
	}
	job->nwords = i;
}

static int ft_asc(const cst_wave *w, int start, int size, int last, cst_audio_streaming_info *asi) {
	ft_job *job = asi->userdata;
	if (!job->have_words)
		ft_words(job);
	job->rate = w->sample_rate;
	if (size <= 0)
		return CST_AUDIO_STREAM_CONT;
	if (goFliteAudio(job->handle, (short *)(w->samples + start), size, last) != 0)
		return CST_AUDIO_STREAM_STOP;
	return CST_AUDIO_STREAM_CONT;
}

static int ft_stop(const cst_wave *w, int start, int size, int last, cst_audio_streaming_info *asi) {
	return CST_AUDIO_STREAM_STOP;
}

/* ft_current is the job of the synthesis in progress; the flite lock
   guards it. */
static ft_job *ft_current;
static float ft_f0_scale, ft_pitch;

/* ft_cg_wave replaces a clustergen voice's wave synthesis. Clustergen
   voices with a SPAM F0 model (slt, rms, awb) overwrite their F0 track
   after the int_f0_target_* features are applied, so the features cannot
   change their pitch. This runs cg_synth with a streaming callback that
   stops the vocoder at once (leaving the final parameter track in the
   utterance), rescales the F0 track around its mean (pitch moves the mean,
   expressivity scales the deviations), then runs MLPG and the MLSA vocoder
   itself, streaming to the job. */
static cst_utterance *ft_cg_wave(cst_utterance *u) {
	cst_audio_streaming_info *stop = new_audio_streaming_info();
	stop->asc = ft_stop;
	feat_set(u->features, "streaming_info", audio_streaming_info_val(stop));
	cg_synth(u);
	feat_remove(u->features, "streaming_info");

	cst_cg_db *cg = val_cg_db(utt_feat_val(u, "cg_db"));
	cst_track *param = val_track(utt_feat_val(u, "param_track"));
	const cst_track *str = NULL;
	if (cg->mixed_excitation)
		str = val_track(utt_feat_val(u, "str_track"));

	double sum = 0;
	int n = 0;
	for (int i = 0; i < param->num_frames; i++)
		if (param->frames[i][0] > 0) {
			sum += param->frames[i][0];
			n++;
		}
	if (n > 0) {
		float mean = sum / n;
		for (int i = 0; i < param->num_frames; i++) {
			float f = param->frames[i][0];
			if (f <= 0)
				continue;
			f = (mean + (f - mean) * ft_f0_scale) * ft_pitch;
			if (f < 50) f = 50;
			if (f > 700) f = 700;
			param->frames[i][0] = f;
		}
	}

	cst_audio_streaming_info *asi = new_audio_streaming_info();
	asi->asc = ft_asc;
	asi->min_buffsize = 256;
	asi->userdata = ft_current;
	asi->utt = u;
	cst_track *smooth = NULL;
	if (cg->do_mlpg)
		smooth = mlpg(param, cg);
	cst_wave *w = mlsa_resynthesis(smooth ? smooth : param, str, cg, asi, 0);
	if (smooth)
		delete_track(smooth);
	delete_audio_streaming_info(asi);
	if (w == NULL)
		w = new_wave();
	utt_set_wave(u, w);
	return u;
}

/* ft_synth synthesises text as one utterance, streaming its audio to
   goFliteAudio. The caller holds the process-wide flite lock: flite reports
   errors by longjmp to the one global cst_errjmp, and ft_current is
   global. It returns 0, or -1 when flite reported an error (the utterance
   is then leaked, as flite leaves it in an unknown state). */
int ft_synth(void *voice, const char *text, float stretch, float f0_scale, float pitch, ft_job *job) {
	cst_voice *v = voice;
	jmp_buf env;
	jmp_buf *old = cst_errjmp;
	cst_utterance *volatile u = NULL;

	cst_errjmp = &env;
	if (setjmp(env) != 0) {
		cst_errjmp = old;
		job->utt = NULL;
		ft_current = NULL;
		return -1;
	}
	/* The vocoder's noise excitation comes from rand(): a fixed seed makes
	   the same text give the same audio. */
	srand(1);
	u = new_utterance();
	utt_set_input_text(u, text);
	utt_init(u, v);
	job->utt = u;
	ft_current = job;

	float base_stretch = get_param_float(v->features, "duration_stretch", 1.0);
	feat_set_float(u->features, "duration_stretch", base_stretch * stretch);

	int cg = get_param_val(v->features, "cg_db", NULL) != NULL;
	if (cg && (f0_scale != 1 || pitch != 1)) {
		ft_f0_scale = f0_scale;
		ft_pitch = pitch;
		feat_set(u->features, "wave_synth_func", uttfunc_val(ft_cg_wave));
	} else {
		if (!cg) {
			/* Diphone voices take their F0 from the int_f0_target_* model. */
			float mean = get_param_float(v->features, "int_f0_target_mean", 100);
			float sd = get_param_float(v->features, "int_f0_target_stddev", 15);
			feat_set_float(u->features, "int_f0_target_mean", mean * pitch);
			feat_set_float(u->features, "int_f0_target_stddev", sd * f0_scale);
		}
		cst_audio_streaming_info *asi = new_audio_streaming_info();
		asi->asc = ft_asc;
		asi->min_buffsize = 256;
		asi->userdata = job;
		feat_set(u->features, "streaming_info", audio_streaming_info_val(asi));
	}

	utt_synth(u);
	job->utt = NULL;
	ft_current = NULL;
	delete_utterance(u);
	cst_errjmp = old;
	return 0;
}
