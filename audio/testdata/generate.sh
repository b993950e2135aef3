#!/bin/sh
# Regenerates the compressed and converted test files in this directory from
# a real human recording: a public-domain LibriVox reading that pocketsphinx
# ships (16 kHz mono; installed by scripts/setup). Every file holds the first
# 3 s of that recording (less where 3 s would exceed 100 KB), so tests can
# compare what they decode against the original samples.
#
# Tools (Debian 12 packages, needed only to regenerate, not by `make test`):
#   sox, lame, flac, vorbis-tools (oggenc), opus-tools (opusenc)
set -eu
cd "$(dirname "$0")"
src=${SRC:-/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# -D: no dither, so conversions are plain and reproducible.
sox -D "$src" "$tmp/speech.wav" trim 0 3
# Stereo 44.1 kHz with distinct channels: left is the speech, right is the
# speech inverted at half level.
sox -D "$src" -b 16 "$tmp/stereo44k.wav" trim 0 3 remix 1 1v-0.5 rate -v 44100

# MPEG-2 layer III (16 kHz mono) and MPEG-1 layer III (44.1 kHz joint
# stereo), both with LAME's gapless Info tag.
lame --quiet --noreplaygain -b 48 -m m "$tmp/speech.wav" speech-16k-mono.mp3
lame --quiet --noreplaygain -b 96 -m j --resample 44.1 "$tmp/stereo44k.wav" speech-44k-stereo.mp3
flac --silent --force -8 --no-padding -o speech.flac "$tmp/speech.wav"
oggenc --quiet -q 2 --serial 1 -o speech.ogg "$tmp/speech.wav"
opusenc --quiet --bitrate 24 --serial 1 "$tmp/speech.wav" speech.opus

# Raw and WAV PCM variants.
sox -D "$tmp/speech.wav" -r 8000 -e mu-law -t raw speech-8k.mulaw
sox -D "$tmp/speech.wav" -r 8000 -e a-law speech-8k-alaw.wav
sox -D "$tmp/speech.wav" -r 8000 -e unsigned -b 8 speech-8k-u8.wav
sox -D "$tmp/stereo44k.wav" speech-44k-stereo.wav trim 0 0.5
sox -D "$tmp/speech.wav" -e floating-point -b 32 speech-float.wav trim 0 1.25
sox -D "$tmp/speech.wav" -b 24 speech-24bit.wav trim 0 1.5
ls -l
