#ifndef EARSHOT_TTS_ESGLUE_H
#define EARSHOT_TTS_ESGLUE_H
#include <stddef.h>

int es_init(const char *path);
int es_voice(const char *name, int rate, int range, int pitch);
int es_synth(const char *text, size_t size);

#endif
