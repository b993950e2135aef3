package tts

// mark says that once the audio of a piece has been emitted up to sample
// (counted from the piece's first synthesised sample), the text up to
// textEnd (a byte offset in the whole text) has been spoken.
type mark struct {
	sample  int
	textEnd int
}

// joiner turns the pieces' audio into one continuous reading: it trims
// the silence the library puts at the start and end of every utterance,
// puts a pause that fits the punctuation between pieces, and tracks how
// much of the text the emitted audio covers. It is used by the producer
// goroutine only.
type joiner struct {
	rate  int
	speed float64

	next     Boundary // how the current piece ends; 0 for the last piece
	pieceEnd int      // text offset reached when the piece is done
	pos      int      // samples of the piece synthesised so far
	leading  bool     // no audible sample yet in this piece
	held     []int16  // the quiet run at the end of what was synthesised
	marks    []mark
	mi       int // marks[:mi] are reached
	textEnd  int
}

// startPiece prepares for the next piece.
func (j *joiner) startPiece(first bool, next Boundary, pieceEnd int) {
	j.next, j.pieceEnd = next, pieceEnd
	j.pos, j.leading, j.held = 0, true, j.held[:0]
	j.marks, j.mi = j.marks[:0], 0
}

// setWords replaces the piece's word marks (flite knows them all up front;
// espeak-ng voices have none, and reach the piece's end at endPiece).
func (j *joiner) setWords(ms []mark) { j.marks = append(j.marks[:0], ms...) }

func (j *joiner) seconds(s float64) int { return int(s * float64(j.rate)) }

// add takes newly synthesised samples and returns what can be emitted.
func (j *joiner) add(pcm []int16) []item {
	j.pos += len(pcm)
	last := -1
	for i := len(pcm) - 1; i >= 0; i-- {
		if pcm[i] >= silenceLevel || pcm[i] <= -silenceLevel {
			last = i
			break
		}
	}
	var out []int16
	if last < 0 {
		j.held = append(j.held, pcm...)
		if j.leading {
			// Keep only the end of the leading silence.
			if keep := j.seconds(leadKeep); len(j.held) > keep {
				j.held = append(j.held[:0], j.held[len(j.held)-keep:]...)
			}
		}
	} else {
		out = make([]int16, 0, len(j.held)+last+1)
		out = append(out, j.held...)
		out = append(out, pcm[:last+1]...)
		j.held = append(j.held[:0], pcm[last+1:]...)
		j.leading = false
	}
	emittedTo := j.pos - len(j.held)
	for j.mi < len(j.marks) && j.marks[j.mi].sample <= emittedTo {
		j.textEnd = max(j.textEnd, j.marks[j.mi].textEnd)
		j.mi++
	}
	if len(out) == 0 {
		return nil
	}
	return []item{{pcm: out, textEnd: j.textEnd}}
}

// endPiece returns the rest of the piece: a little of its trailing
// silence and the pause before the next piece.
func (j *joiner) endPiece() []item {
	keep := j.seconds(tailKeep)
	var pause int
	switch j.next {
	case SentenceEnd:
		pause = j.seconds(sentencePause / j.speed)
	case ClauseEnd:
		pause = j.seconds(clausePause / j.speed)
	case WordEnd:
		pause = j.seconds(wordPause / j.speed)
	}
	if j.next != 0 {
		keep = j.seconds(leadKeep)
	}
	var out []int16
	if !j.leading {
		out = make([]int16, 0, keep+pause)
		out = append(out, j.held[:min(keep, len(j.held))]...)
		out = append(out, make([]int16, pause)...)
	}
	j.textEnd = max(j.textEnd, j.pieceEnd)
	j.held = j.held[:0]
	return []item{{pcm: out, textEnd: j.textEnd, last: true}}
}
