#!/bin/sh
# generate.sh regenerates the diariser's test clips and word-timing fixtures.
# generate.sh --calibration DIR writes the calibration clips to DIR instead.
#
# Needs the Debian packages flite, espeak-ng, sox and pocketsphinx (with
# pocketsphinx-en-us and pocketsphinx-testdata). Run it from any directory;
# it writes next to itself.
#
# For every clip NAME it writes:
#   NAME.wav    16 kHz mono 8-bit mu-law WAV (mu-law halves the size of the
#               committed audio; the tests decode it to float32).
#   NAME.turns  ground truth, one turn a line: "start end speaker", seconds;
#               speakers are numbered in order of first appearance. Taken
#               from the construction of the clip (each turn is one voice).
#   NAME.words  word timings, one word a line: "word start end confidence",
#               from `pocketsphinx_continuous -time yes` run on the decoded
#               clip, the same recogniser the engine uses, with <s>, </s>,
#               <sil> and fillers dropped and alternate-pronunciation
#               suffixes such as "(2)" removed.
# For the five LibriVox clips shipped by pocketsphinx-testdata (one human
# reader) it writes only librivox_ID.words; the audio stays in
# /usr/share/pocketsphinx/test/data/librivox.
set -eu
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# say VOICE TEXT OUT: synthesise TEXT with a flite voice (kal16, awb, rms,
# slt) or an espeak-ng voice (espeak:NAME), as 16 kHz mono 16-bit,
# normalised to -3 dBFS so that loudness is no cue.
say() {
	case $1 in
	espeak:*) espeak-ng -v "${1#espeak:}" -w "$work/raw.wav" "$2" ;;
	*) flite -voice "$1" -t "$2" -o "$work/raw.wav" ;;
	esac
	sox "$work/raw.wav" -r 16000 -c 1 -b 16 "$3" norm -3
}

# words WAV OUT: word timings by pocketsphinx.
words() {
	pocketsphinx_continuous -infile "$1" -time yes 2>/dev/null |
		awk 'NF == 4 && $1 !~ /^(<s>|<\/s>|<sil>|\[.*\]|\+\+.*\+\+)$/ {
			w = $1; sub(/\([0-9]+\)$/, "", w); print w, $2, $3, $4 }' >"$2"
}

# clip NAME VOICE TEXT [VOICE TEXT ...]: concatenate turns with 0.3 s of
# silence between them, then write NAME.wav, NAME.turns and NAME.words.
clip() {
	name=$1
	shift
	: >"$name.turns"
	parts=""
	t=0
	i=0
	speakers=""
	while [ $# -ge 2 ]; do
		i=$((i + 1))
		say "$1" "$2" "$work/turn$i.wav"
		sox "$work/turn$i.wav" "$work/pad$i.wav" pad 0 0.3
		d=$(soxi -D "$work/turn$i.wav")
		# speaker number: index of first appearance of the voice
		n=0
		found=-1
		for s in $speakers; do
			[ "$s" = "$1" ] && found=$n
			n=$((n + 1))
		done
		if [ $found -lt 0 ]; then
			speakers="$speakers $1"
			found=$n
		fi
		echo "$t $(echo "$t + $d" | bc -l | sed 's/^\./0./') $found" >>"$name.turns"
		t=$(echo "$t + $d + 0.3" | bc -l | sed 's/^\./0./')
		parts="$parts $work/pad$i.wav"
		shift 2
	done
	# shellcheck disable=SC2086
	sox $parts "$work/all.wav"
	sox "$work/all.wav" -e u-law -b 8 "$name.wav"
	sox "$name.wav" -e signed-integer -b 16 "$work/dec.wav"
	words "$work/dec.wav" "$name.words"
}

if [ "${1:-}" = --calibration ]; then
	# The calibration set: the clips the parameters were tuned on
	# (written to DIR, not committed). The committed clips below use other
	# sentences, so the tests check the tuned values on speech they were
	# not tuned on.
	mkdir -p "$2"
	cd "$2"
	# Two voices of different sex (flite slt female, rms male).
	clip two_fm \
		slt "Good morning. Did you manage to read the report I sent yesterday?" \
		rms "I did, and I think the numbers in the second section look wrong." \
		slt "Really? Which numbers do you mean?" \
		rms "The totals for March. They do not add up to the monthly figures." \
		slt "You are right, I will check them again this afternoon." \
		rms "Thank you. Send me the new version when it is ready."

	# Two male voices (flite rms, US, and awb, Scottish).
	clip two_mm \
		rms "Have you seen the weather forecast for the weekend?" \
		awb "Yes, it says heavy rain on Saturday and sun on Sunday." \
		rms "Then we should move the picnic to Sunday afternoon." \
		awb "That works for me. I will tell the others tonight." \
		rms "Great. Can you bring the blue blanket and some plates?" \
		awb "Of course. I will also bake a small lemon cake."

	# Three voices: female slt, male awb and male kal16 (a diphone voice),
	# with short turns.
	clip three \
		slt "Let us begin the meeting. First item is the budget." \
		awb "The budget is almost finished. We only need the travel costs." \
		kal16 "I can send those numbers tomorrow morning." \
		slt "Good." \
		awb "After that we need to talk about the new office chairs." \
		kal16 "The chairs arrived last week, but two of them are broken." \
		slt "Then please call the supplier and ask for a replacement." \
		awb "I will do it today."

	# Mixed synthesisers: espeak-ng (formant synthesis) male and female
	# voices beside a flite voice.
	clip mixed \
		espeak:en-us "Where did you put the keys to the garden shed?" \
		rms "They should be hanging on the hook beside the kitchen door." \
		espeak:en-us+f3 "No, I looked there already and the hook is empty." \
		espeak:en-us "Maybe they are still in the pocket of my old coat." \
		rms "I will look in the hall cupboard after dinner." \
		espeak:en-us+f3 "Thanks, the lawn mower is in there and I need it."
	exit 0
fi

# Two voices of different sex (flite slt female, rms male).
clip two_fm \
	slt "Is the train to the airport running on time today?" \
	rms "No, it is about ten minutes late because of the snow." \
	slt "Then I will take a taxi instead." \
	rms "That costs more, but it is faster." \
	slt "I know. I cannot miss this flight."

# Two male voices (flite rms, US, and awb, Scottish).
clip two_mm \
	awb "Did you fix the bicycle before the race?" \
	rms "I changed the chain, but the brakes still squeak." \
	awb "A little oil should stop that noise." \
	rms "Good idea. Where do we keep the oil?" \
	awb "On the top shelf in the garage."

# Three voices: female slt, male awb and male kal16 (a diphone voice),
# with a one-word turn.
clip three \
	kal16 "Welcome back. Who wants to start today?" \
	slt "I can start. The website is finished." \
	awb "Great news. Did the tests pass?" \
	slt "Yes." \
	kal16 "Then we can publish it on Monday morning." \
	awb "I will write the announcement tonight."

# Mixed synthesisers: espeak-ng (formant synthesis) male and female
# voices beside a flite voice.
clip mixed \
	espeak:en-us+f3 "Could you water the plants while I am away?" \
	rms "Sure, how often do they need water?" \
	espeak:en-us "Twice a week is enough for most of them." \
	espeak:en-us+f3 "The big fern by the window needs more."

lib=/usr/share/pocketsphinx/test/data/librivox
for id in 0870 0880 0890 0920 0930; do
	words "$lib/sense_and_sensibility_01_austen_64kb-$id.wav" "librivox_$id.words"
done
