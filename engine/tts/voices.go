package tts

import (
	"fmt"
	"slices"
	"strings"
)

// Family is a voice family of the hosted service; it decides which
// endpoint serves the voice.
type Family int

// Voice families.
const (
	// Aura is the first-generation family (aura-{voice}-en), /v1/speak.
	Aura Family = iota + 1
	// Aura2 is the multilingual family (aura-2-{voice}-{lang}), /v1/speak.
	Aura2
	// Flux is the turn-based family (flux-{voice}-en), /v2/speak only.
	Flux
)

func (f Family) String() string {
	switch f {
	case Aura:
		return "aura"
	case Aura2:
		return "aura-2"
	case Flux:
		return "flux"
	}
	return fmt.Sprintf("Family(%d)", int(f))
}

// Gender is the expressed gender of a voice.
type Gender string

// Genders.
const (
	Feminine  Gender = "feminine"
	Masculine Gender = "masculine"
)

// backend is the library that speaks a voice.
type backend int

const (
	flite backend = iota + 1
	espeak
)

// Voice is one entry of the catalogue: a service voice name and the real
// local voice behind it, described as it actually sounds.
type Voice struct {
	// Name is the model name clients ask for, e.g. "aura-asteria-en".
	Name string
	// Family is the voice family, which decides the endpoint.
	Family Family
	// Language is the ISO 639-1 code of the language spoken ("en", "es").
	Language string
	// Accent is the accent of the local voice (not necessarily that of the
	// hosted voice of the same name), e.g. "American", "Scottish".
	Accent string
	// Gender is the expressed gender of the local voice.
	Gender Gender
	// Engine names the library, its version and the voice used, e.g.
	// "flite 2.2 cmu_us_slt" or "espeak-ng 1.51 es+f3".
	Engine string
	// NativeRate is the sample rate of the audio the voice produces (Hz).
	NativeRate int

	backend backend
	// id is the library's voice: a flite voice name (cmu_us_slt) or an
	// espeak-ng voice name with variant (es+f3).
	id string
	// pitch scales the voice's mean pitch, giving several characters to
	// one library voice (1 = the voice's own pitch).
	pitch float64
}

// Sample rates of the libraries' voices.
const (
	fliteRate   = 16000
	kalRate     = 8000
	espeakRate  = 22050
	fliteEngine = "flite 2.2 "
	espeakEng   = "espeak-ng 1.51 "
)

// fliteVoice describes a flite voice; pitch 1 is its own pitch.
func fliteVoice(name string, fam Family, id string, pitch float64) Voice {
	v := Voice{Name: name, Family: fam, Language: "en", Accent: "American", backend: flite, id: id, pitch: pitch, NativeRate: fliteRate}
	switch id {
	case "cmu_us_slt":
		v.Gender = Feminine
	case "cmu_us_awb":
		v.Gender, v.Accent = Masculine, "Scottish"
	case "cmu_us_kal":
		v.Gender, v.NativeRate = Masculine, kalRate
	default: // rms, kal16
		v.Gender = Masculine
	}
	v.Engine = fliteEngine + id
	if pitch != 1 {
		v.Engine += fmt.Sprintf(", pitch %+d%%", int(pitch*100-100+0.5*sign(pitch-1)))
	}
	return v
}

func sign(x float64) float64 {
	if x < 0 {
		return -1
	}
	return 1
}

// espeakVoice describes an espeak-ng voice: language voice plus variant.
func espeakVoice(name, lang, accent, id string) Voice {
	g := Masculine
	if strings.Contains(id, "+f") {
		g = Feminine
	}
	return Voice{Name: name, Family: Aura2, Language: lang, Accent: accent, Gender: g,
		Engine: espeakEng + id, NativeRate: espeakRate, backend: espeak, id: id, pitch: 1}
}

// catalogue is every voice the engine serves, sorted by name in init.
var catalogue = []Voice{
	// Aura (v1), English only. flite has one female voice (slt), so the
	// feminine voices are slt at different pitches.
	fliteVoice("aura-asteria-en", Aura, "cmu_us_slt", 1),
	fliteVoice("aura-luna-en", Aura, "cmu_us_slt", 1.08),
	fliteVoice("aura-stella-en", Aura, "cmu_us_slt", 1.15),
	fliteVoice("aura-athena-en", Aura, "cmu_us_slt", 0.94),
	fliteVoice("aura-hera-en", Aura, "cmu_us_slt", 0.88),
	fliteVoice("aura-orion-en", Aura, "cmu_us_rms", 1),
	fliteVoice("aura-arcas-en", Aura, "cmu_us_kal16", 1),
	fliteVoice("aura-perseus-en", Aura, "cmu_us_rms", 1.1),
	fliteVoice("aura-angus-en", Aura, "cmu_us_awb", 1),
	fliteVoice("aura-orpheus-en", Aura, "cmu_us_kal16", 0.92),
	fliteVoice("aura-helios-en", Aura, "cmu_us_awb", 1.08),
	fliteVoice("aura-zeus-en", Aura, "cmu_us_rms", 0.9),

	// Aura-2, English.
	fliteVoice("aura-2-thalia-en", Aura2, "cmu_us_slt", 1),
	fliteVoice("aura-2-andromeda-en", Aura2, "cmu_us_slt", 1.06),
	fliteVoice("aura-2-asteria-en", Aura2, "cmu_us_slt", 1.1),
	fliteVoice("aura-2-luna-en", Aura2, "cmu_us_slt", 1.15),
	fliteVoice("aura-2-helena-en", Aura2, "cmu_us_slt", 0.94),
	fliteVoice("aura-2-athena-en", Aura2, "cmu_us_slt", 0.9),
	fliteVoice("aura-2-apollo-en", Aura2, "cmu_us_rms", 1),
	fliteVoice("aura-2-orion-en", Aura2, "cmu_us_rms", 1.08),
	fliteVoice("aura-2-zeus-en", Aura2, "cmu_us_rms", 0.9),
	fliteVoice("aura-2-arcas-en", Aura2, "cmu_us_kal16", 1),
	fliteVoice("aura-2-aries-en", Aura2, "cmu_us_kal16", 1.1),
	fliteVoice("aura-2-hermes-en", Aura2, "cmu_us_awb", 1),
	fliteVoice("aura-2-draco-en", Aura2, "cmu_us_awb", 0.92),
	fliteVoice("aura-2-odysseus-en", Aura2, "cmu_us_kal", 1),

	// Aura-2, other languages, on espeak-ng with its gender variants.
	espeakVoice("aura-2-celeste-es", "es", "Latin American", "es-419+f3"),
	espeakVoice("aura-2-estrella-es", "es", "Castilian", "es+f2"),
	espeakVoice("aura-2-carina-es", "es", "Castilian", "es+f4"),
	espeakVoice("aura-2-diana-es", "es", "Latin American", "es-419+f1"),
	espeakVoice("aura-2-nestor-es", "es", "Castilian", "es+m3"),
	espeakVoice("aura-2-alvaro-es", "es", "Castilian", "es+m1"),
	espeakVoice("aura-2-aquila-es", "es", "Latin American", "es-419+m2"),
	espeakVoice("aura-2-viktoria-de", "de", "Standard German", "de+f3"),
	espeakVoice("aura-2-elara-de", "de", "Standard German", "de+f2"),
	espeakVoice("aura-2-julius-de", "de", "Standard German", "de+m3"),
	espeakVoice("aura-2-fabian-de", "de", "Standard German", "de+m1"),
	espeakVoice("aura-2-rhea-nl", "nl", "Netherlands Dutch", "nl+f3"),
	espeakVoice("aura-2-beatrix-nl", "nl", "Netherlands Dutch", "nl+f2"),
	espeakVoice("aura-2-sander-nl", "nl", "Netherlands Dutch", "nl+m3"),
	espeakVoice("aura-2-agathe-fr", "fr", "Parisian French", "fr+f3"),
	espeakVoice("aura-2-hector-fr", "fr", "Parisian French", "fr+m3"),
	espeakVoice("aura-2-livia-it", "it", "Standard Italian", "it+f3"),
	espeakVoice("aura-2-cinzia-it", "it", "Standard Italian", "it+f2"),
	espeakVoice("aura-2-dionisio-it", "it", "Standard Italian", "it+m3"),
	espeakVoice("aura-2-cesare-it", "it", "Standard Italian", "it+m1"),
	espeakVoice("aura-2-izanami-ja", "ja", "Standard Japanese", "ja+f3"),
	espeakVoice("aura-2-ama-ja", "ja", "Standard Japanese", "ja+f2"),
	espeakVoice("aura-2-ebisu-ja", "ja", "Standard Japanese", "ja+m3"),

	// Flux, turn-based, English. flux-kit-en is the voice agent's default.
	fliteVoice("flux-kit-en", Flux, "cmu_us_slt", 1),
	fliteVoice("flux-alexis-en", Flux, "cmu_us_slt", 1.08),
	fliteVoice("flux-nova-en", Flux, "cmu_us_slt", 0.93),
	fliteVoice("flux-miles-en", Flux, "cmu_us_rms", 1),
	fliteVoice("flux-reed-en", Flux, "cmu_us_kal16", 1),
	fliteVoice("flux-ewan-en", Flux, "cmu_us_awb", 1),
}

func init() {
	slices.SortFunc(catalogue, func(a, b Voice) int { return strings.Compare(a.Name, b.Name) })
}

// DefaultVoice is the voice /v1/speak uses when no model is given.
const DefaultVoice = "aura-asteria-en"

// DefaultFluxVoice is the voice agent's default turn-based voice.
const DefaultFluxVoice = "flux-kit-en"

// Voices returns the catalogue, sorted by name. The slice is a copy.
func Voices() []Voice { return slices.Clone(catalogue) }

// Lookup returns the voice with the given model name.
func Lookup(name string) (Voice, bool) {
	i, ok := slices.BinarySearchFunc(catalogue, name, func(v Voice, n string) int { return strings.Compare(v.Name, n) })
	if !ok {
		return Voice{}, false
	}
	return catalogue[i], true
}

// Engines names the synthesis engines voices are made with, for people.
func Engines() []string {
	return []string{strings.TrimSpace(fliteEngine) + " (English voices)", strings.TrimSpace(espeakEng) + " (other languages)"}
}
