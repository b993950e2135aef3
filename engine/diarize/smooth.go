package diarize

// labels is the outcome of a diariser for each word: its speaker (-1 while
// undecided) and the confidence of that choice.
type labels struct {
	speaker []int
	conf    []float64
}

func newLabels(n int) labels {
	l := labels{speaker: make([]int, n), conf: make([]float64, n)}
	for i := range l.speaker {
		l.speaker[i] = -1
	}
	return l
}

// fillGaps gives every undecided word (one without audio frames) the
// speaker and confidence of the nearest decided word before it, or after
// it at the start. With no decided word at all, every word is speaker 0
// with confidence 0: there was nothing to tell speakers apart by.
func fillGaps(l labels) {
	last := -1
	for i, s := range l.speaker {
		if s >= 0 {
			last = i
			continue
		}
		if last >= 0 {
			l.speaker[i], l.conf[i] = l.speaker[last], l.conf[last]
		}
	}
	next := -1
	for i := len(l.speaker) - 1; i >= 0; i-- {
		if l.speaker[i] >= 0 {
			next = i
			continue
		}
		if next >= 0 {
			l.speaker[i], l.conf[i] = l.speaker[next], l.conf[next]
		} else {
			l.speaker[i], l.conf[i] = 0, 0
		}
	}
}

// noSingleFlips relabels every one-word speaker run to a neighbouring
// run's speaker, so that no speaker turn is a single word: one word is too
// little speech to be sure of a voice, and a lone flip inside a turn is
// far likelier an error than a one-word interjection. Where the two
// neighbours differ, the word joins the one score prefers; score(w, s)
// also gives the word's confidence for its new speaker. Every relabel
// joins two runs, so the loop ends.
func noSingleFlips(l labels, score func(word, speaker int) (fit, conf float64)) {
	n := len(l.speaker)
	if n < 2 {
		return
	}
	for changed := true; changed; {
		changed = false
		for i := 0; i < n; i++ {
			left, right := i > 0 && l.speaker[i-1] == l.speaker[i], i < n-1 && l.speaker[i+1] == l.speaker[i]
			if left || right {
				continue
			}
			var to int
			switch {
			case i == 0:
				to = l.speaker[1]
			case i == n-1:
				to = l.speaker[n-2]
			case l.speaker[i-1] == l.speaker[i+1]:
				to = l.speaker[i-1]
			default:
				a, _ := score(i, l.speaker[i-1])
				b, _ := score(i, l.speaker[i+1])
				to = l.speaker[i-1]
				if b > a {
					to = l.speaker[i+1]
				}
			}
			l.speaker[i] = to
			_, l.conf[i] = score(i, to)
			changed = true
		}
	}
}

// renumber numbers speakers 0, 1, ... in order of first appearance.
func renumber(speaker []int) {
	seen := map[int]int{}
	for i, s := range speaker {
		k, ok := seen[s]
		if !ok {
			k = len(seen)
			seen[s] = k
		}
		speaker[i] = k
	}
}
