package intel

import (
	"context"
	"strings"
)

// intentVerbs are verbs that, with an object, state what a speaker wants
// done: the vocabulary of customer calls, meetings and requests.
var intentVerbs = strings.Fields(`activate add apply arrange ask block book borrow buy cancel change check claim
close compare complain confirm contact create deactivate delete deposit discuss dispute downgrade download exchange
extend file find finance fix get hire increase install join learn lease lower make modify move open order pause pay
postpone purchase recover redeem reduce refund register remove renew rent reorder repair replace report request
reschedule reserve reset resume return review schedule sell send set sign speak start stop submit subscribe switch
talk test track trade transfer troubleshoot unblock unsubscribe update upgrade verify withdraw`)

// irregular past forms of intent verbs.
var irregular = map[string]string{
	"bought": "buy", "paid": "pay", "sent": "send", "got": "get", "gotten": "get", "found": "find",
	"spoke": "speak", "spoken": "speak", "sold": "sell", "made": "make",
}

type verbForm struct {
	base string
	past bool // a past form: a report of something done, not a request
}

// verbForms maps every inflection of an intent verb to its base form.
var verbForms = func() map[string]verbForm {
	m := map[string]verbForm{}
	for _, b := range intentVerbs {
		m[b] = verbForm{base: b}
		stemB := strings.TrimSuffix(b, "e")
		m[stemB+"ing"] = verbForm{base: b}
		m[b+"s"] = verbForm{base: b}
		if strings.HasSuffix(b, "sh") || strings.HasSuffix(b, "ch") || strings.HasSuffix(b, "x") || strings.HasSuffix(b, "s") {
			m[b+"es"] = verbForm{base: b}
		}
		if strings.HasSuffix(b, "y") && !strings.ContainsAny(b[len(b)-2:len(b)-1], "aeiou") {
			m[b[:len(b)-1]+"ied"] = verbForm{base: b, past: true}
			m[b[:len(b)-1]+"ies"] = verbForm{base: b}
		} else {
			m[stemB+"ed"] = verbForm{base: b, past: true}
		}
		// Doubled final consonant: stopped, cancelled, cancelling.
		if last := b[len(b)-1]; strings.IndexByte("bdglmnprt", last) >= 0 {
			m[b+string(last)+"ed"] = verbForm{base: b, past: true}
			m[b+string(last)+"ing"] = verbForm{base: b}
		}
	}
	for f, b := range irregular {
		m[f] = verbForm{base: b, past: true}
	}
	return m
}()

// Words that turn what follows into a request, by how sure they make it.
var (
	// "want to cancel", "need to", "like to", "trying to", "have to"
	toFrames = wordSet(`want wants wanted need needs needed like trying try tried hoping hope looking have has wish
going planning plan able called calling call`)
	// "can I", "could you", "please", "let me", "help me"
	modalFrames = wordSet(`can could would will please let help i'd i'll we'd we'll gotta wanna lemme`)
	subjects    = wordSet(`i we you they he she i've we've`)
	// skipped between a verb and its object's head
	determiners = wordSet(`a an the my our your his her their its this that these those some any new another
different other extra additional more few couple of same current old second first`)
	particles = wordSet(`up out off back down over in`)
	preps     = wordSet(`about for to with on into regarding`)
)

// intentAt recognises an intent whose verb is word i of sentence s,
// returning its name and confidence, or ok=false.
func (d *doc) intentAt(s span, i int, cased map[string]string) (name string, conf float64, ok bool) {
	w := d.lower[i]
	vf, isVerb := verbForms[w]
	// "question(s) about X", "calling about X": asking about something.
	aboutNoun := (w == "question" || w == "questions" || w == "calling" || w == "inquiry" || w == "wondering") &&
		i+1 <= s.end && (d.lower[i+1] == "about" || d.lower[i+1] == "regarding")
	if !isVerb && !aboutNoun {
		return "", 0, false
	}
	if aboutNoun {
		vf = verbForm{base: "ask"}
	}
	prev := func(k int) string {
		if i-k < s.start {
			return ""
		}
		return d.lower[i-k]
	}
	// Negated requests ("I don't want to cancel") are not intents.
	for k := 1; k <= 4; k++ {
		if p := prev(k); p != "" && negated(p) {
			return "", 0, false
		}
	}
	switch {
	case aboutNoun:
		conf = 0.85
	case vf.past:
		if !subjects[prev(1)] {
			return "", 0, false
		}
		conf = 0.55
	case prev(1) == "to" && toFrames[prev(2)]:
		conf = 0.92
	case prev(1) == "to" && (prev(2) == "how" || prev(2) == "where"):
		conf = 0.85
	case modalFrames[prev(1)] || (subjects[prev(1)] && modalFrames[prev(2)]):
		conf = 0.9
	case i == s.start || (i == s.start+1 && (prev(1) == "so" || prev(1) == "and" || prev(1) == "just" || prev(1) == "also")):
		conf = 0.8 // imperative: "Cancel my order."
	case prev(1) == "to":
		conf = 0.75
	case subjects[prev(1)] && strings.HasSuffix(w, "ing"):
		conf = 0.6
	default:
		return "", 0, false
	}
	parts := []string{vf.base}
	j := i + 1
	if breaksPhrase(d.words[i]) {
		return "", 0, false
	}
	if j <= s.end && particles[d.lower[j]] && !aboutNoun {
		parts = append(parts, d.lower[j])
		if breaksPhrase(d.words[j]) {
			return capitalise(strings.Join(parts, " ")), conf * 0.8, true
		}
		j++
	}
	if j <= s.end && preps[d.lower[j]] {
		p := d.lower[j]
		if p == "regarding" {
			p = "about"
		}
		parts = append(parts, p)
		if breaksPhrase(d.words[j]) {
			return "", 0, false
		}
		j++
	}
	for skipped := 0; j <= s.end && skipped < 3 && determiners[d.lower[j]] && !breaksPhrase(d.words[j]); skipped++ {
		j++
	}
	var obj []string
	for ; j <= s.end && len(obj) < 2 && nominal(d.lower[j]); j++ {
		o := d.lower[j]
		if cw, ok := cased[o]; ok {
			o = cw
		}
		obj = append(obj, o)
		if breaksPhrase(d.words[j]) {
			break
		}
	}
	if len(obj) == 0 {
		return "", 0, false
	}
	return capitalise(strings.Join(append(parts, obj...), " ")), conf, true
}

// intents finds verb-object requests per sentence: an intent verb in a
// request frame ("I want to", "can you", "please", an imperative) followed
// by its object, named "Verb object" like the service's intents ("Cancel
// subscription"). Confidence reflects how explicit the frame is; it is a
// rule weight, not a calibrated probability.
func (d *doc) intents(ctx context.Context) ([]LabeledSegment, error) {
	c := &checker{ctx: ctx}
	cased := d.casedWords()
	perSent := map[int][]Label{}
	for si, s := range d.sents {
		for i := s.start; i <= s.end; i++ {
			if err := c.check(); err != nil {
				return nil, err
			}
			name, conf, ok := d.intentAt(s, i, cased)
			if !ok {
				continue
			}
			ls := perSent[si]
			dup := false
			for k := range ls {
				if ls[k].Name == name {
					ls[k].Confidence = max(ls[k].Confidence, conf)
					dup = true
				}
			}
			if !dup {
				perSent[si] = append(ls, Label{Name: name, Confidence: conf})
			}
		}
	}
	return d.labeledRuns(perSent), nil
}
