#ifndef EARSHOT_TTS_FTGLUE_H
#define EARSHOT_TTS_FTGLUE_H
#include <stddef.h>
#include <stdint.h>

/* ft_job is one flite utterance being synthesised. The Go side owns it
   (C memory) and reads the word table after the first audio callback. */
typedef struct {
	uintptr_t handle;  /* cgo.Handle of the Go job */
	int have_words;    /* word table filled */
	int nwords;
	float *ends;       /* end time of each word (seconds) */
	int *pos;          /* file_pos of each word's token */
	void *utt;         /* the utterance, while synthesising */
	int rate;          /* sample rate of the wave */
} ft_job;

int ft_init(void);
void *ft_voice(const char *name, char *err, size_t n);
int ft_synth(void *voice, const char *text, float stretch, float f0_scale, float pitch, ft_job *job);
void ft_job_clear(ft_job *job);

#endif
