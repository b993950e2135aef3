package engine

import (
	"github.com/earshot-app/earshot/engine/tts"
)

// Components names what the engine is built on, for people (earshot
// version): its recognisers, its synthesis engines and its own text
// intelligence and end-of-turn detection.
func Components() []string {
	out := []string{sttEngine + ": " + sttModelName + " and " + fastModelName}
	out = append(out, tts.Engines()...)
	return append(out, "Earshot's text intelligence and end-of-turn detector")
}
