package intelbench

import "testing"

// The examples of Porter's 1980 paper, step by step, run through the whole
// algorithm; the expected stems are the paper's.
func TestPorterStem(t *testing.T) {
	tests := map[string]string{
		// step 1a
		"caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
		// step 1b
		"feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled",
		"motoring": "motor", "sing": "sing", "conflated": "conflat", "troubled": "troubl",
		"sized": "size", "hopping": "hop", "tanned": "tan", "falling": "fall",
		"hissing": "hiss", "fizzed": "fizz", "failing": "fail", "filing": "file",
		// step 1c
		"happy": "happi", "sky": "sky",
		// step 2
		"relational": "relat", "conditional": "condit", "rational": "ration",
		"valenci": "valenc", "hesitanci": "hesit", "digitizer": "digit",
		"conformabli": "conform", "radicalli": "radic", "differentli": "differ",
		"vileli": "vile", "analogousli": "analog", "vietnamization": "vietnam",
		"predication": "predic", "operator": "oper", "feudalism": "feudal",
		"decisiveness": "decis", "hopefulness": "hope", "callousness": "callous",
		"formaliti": "formal", "sensitiviti": "sensit", "sensibiliti": "sensibl",
		// step 3
		"triplicate": "triplic", "formative": "form", "formalize": "formal",
		"electriciti": "electr", "electrical": "electr", "hopeful": "hope", "goodness": "good",
		// step 4
		"revival": "reviv", "allowance": "allow", "inference": "infer", "airliner": "airlin",
		"gyroscopic": "gyroscop", "adjustable": "adjust", "defensible": "defens",
		"irritant": "irrit", "replacement": "replac", "adjustment": "adjust",
		"dependent": "depend", "adoption": "adopt", "homologou": "homolog",
		"communism": "commun", "activate": "activ", "angulariti": "angular",
		"homologous": "homolog", "effective": "effect", "bowdlerize": "bowdler",
		// step 5
		"probate": "probat", "rate": "rate", "cease": "ceas", "controll": "control", "roll": "roll",
		// the paper's multi-step examples
		"generalizations": "gener", "oscillators": "oscil",
		// left alone
		"is": "is", "a": "a", "café": "café", "": "",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			if got := PorterStem(in); got != want {
				t.Errorf("PorterStem(%q) = %q, want %q", in, got, want)
			}
		})
	}
}

func FuzzPorterStem(f *testing.F) {
	for _, s := range []string{"generalizations", "ies", "eed", "y", "yyyy", "sss", "ing", "1990s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, w string) {
		got := PorterStem(w)
		if len(got) > len(w)+1 { // only step 1b's "e" ever lengthens a word
			t.Fatalf("PorterStem(%q) = %q grew", w, got)
		}
		if len(w) > 2 && got == "" {
			t.Fatalf("PorterStem(%q) is empty", w)
		}
	})
}
