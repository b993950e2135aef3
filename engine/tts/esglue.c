#include <espeak-ng/speak_lib.h>
#include "esglue.h"
#include "_cgo_export.h"

static int es_callback(short *wav, int n, espeak_EVENT *events) {
	return goEspeakAudio(wav, n, events);
}

/* es_init initialises espeak-ng for synchronous synthesis with 20 ms
   callback buffers; it returns the sample rate or a negative error. */
int es_init(const char *path) {
	int rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 20, path, espeakINITIALIZE_DONT_EXIT);
	if (rate > 0)
		espeak_SetSynthCallback(es_callback);
	return rate;
}

int es_voice(const char *name, int rate, int range, int pitch) {
	espeak_ERROR e = espeak_SetVoiceByName(name);
	if (e != EE_OK)
		return -1;
	if (espeak_SetParameter(espeakRATE, rate, 0) != EE_OK)
		return -2;
	if (espeak_SetParameter(espeakRANGE, range, 0) != EE_OK)
		return -3;
	if (espeak_SetParameter(espeakPITCH, pitch, 0) != EE_OK)
		return -4;
	return 0;
}

int es_synth(const char *text, size_t size) {
	return espeak_Synth(text, size, 0, POS_CHARACTER, 0, espeakCHARS_UTF8, NULL, NULL);
}
