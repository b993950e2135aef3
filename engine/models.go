package engine

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine/tts"
)

// The speech-to-text model behind the /v1/listen names the engine
// answers to, but for base (fastmodel.go). It says what it is: pocketsphinx with the CMU Sphinx US
// English model, as Debian packages them.
const (
	sttModelName    = "pocketsphinx-en-us"
	sttModelArch    = "pocketsphinx"
	sttModelVersion = "0.8+5prealpha"
	sttEngine       = "pocketsphinx 5prealpha (en-us)"
)

// modelNamespace derives stable model UUIDs from model names.
var modelNamespace = uuid.MustParse("6f1c7c2e-5b1e-4a8e-9d33-2f3b8e7c9a10")

// sttModelUUID identifies the recogniser in model_info.
var sttModelUUID = uuid.NewSHA1(modelNamespace, []byte(sttModelName)).String()

// listenNames are the /v1/listen model names the engine serves, each with
// the same recogniser but base, which has a faster search; listenAliases are the service's spellings of them.
var (
	listenNames   = []string{"nova-3", "nova-2", "nova", "enhanced", "base"}
	listenAliases = map[string]string{
		"nova-3-general": "nova-3", "nova-2-general": "nova-2", "nova-general": "nova",
		"enhanced-general": "enhanced", "base-general": "base", "general": "base",
	}
)

// The turn-aware model the engine serves on /v2/listen: the same
// pocketsphinx recogniser, with Earshot's end-of-turn detector (package
// engine/turn) deciding where turns end. flux-general-multi is not
// served: the recogniser understands English only.
const (
	turnModelName   = api.ModelFluxGeneralEN
	turnModelArch   = "pocketsphinx+earshot-turn"
	turnModelEngine = sttEngine + " with Earshot's end-of-turn detector"
)

// turnModelUUID identifies the turn-aware model.
var turnModelUUID = uuid.NewSHA1(modelNamespace, []byte(turnModelName)).String()

// sttLanguages are the languages the recogniser understands.
var sttLanguages = []string{"en", "en-US"}

// resolveListenModel maps a requested model to a name the engine serves.
// The empty name is the default, nova-3.
func resolveListenModel(model string) (string, bool) {
	m := strings.ToLower(model)
	if m == "" {
		return "nova-3", true
	}
	if slices.Contains(listenNames, m) {
		return m, true
	}
	if a, ok := listenAliases[m]; ok {
		return a, true
	}
	return "", false
}

// englishOnly reports whether a language tag is one the recogniser
// understands (any English).
func englishOnly(lang string) bool {
	l := strings.ToLower(lang)
	return l == "" || l == "en" || strings.HasPrefix(l, "en-") || strings.HasPrefix(l, "en_")
}

func sttRecord(name string) api.STTModel {
	m := listenModelFor(name)
	return api.STTModel{
		Name:            name,
		CanonicalName:   name,
		Architecture:    sttModelArch,
		Languages:       sttLanguages,
		Version:         sttModelVersion,
		UUID:            m.uuid,
		Batch:           true,
		Streaming:       true,
		FormattedOutput: true,
		Engine:          m.engine,
	}
}

// turnRecord is the model record of flux-general-en: streaming only,
// on /v2/listen, unformatted (the turn-aware models offer no formatting).
func turnRecord() api.STTModel {
	return api.STTModel{
		Name:          turnModelName,
		CanonicalName: turnModelName,
		Architecture:  turnModelArch,
		Languages:     sttLanguages,
		Version:       sttModelVersion,
		UUID:          turnModelUUID,
		Streaming:     true,
		Engine:        turnModelEngine,
	}
}

// catalogue lists the models the engine serves.
func (e *Engine) catalogue() api.ModelList {
	list := api.ModelList{STT: []api.STTModel{}, TTS: []api.TTSModel{}}
	for _, n := range listenNames {
		list.STT = append(list.STT, sttRecord(n))
	}
	list.STT = append(list.STT, turnRecord())
	for _, v := range tts.Voices() {
		list.TTS = append(list.TTS, ttsRecord(v))
	}
	return list
}

// voiceRegions gives the regional language tag of a local voice's accent.
var voiceRegions = map[string]string{
	"American": "en-US", "Scottish": "en-GB", "Latin American": "es-419", "Castilian": "es-ES",
	"Standard German": "de-DE", "Netherlands Dutch": "nl-NL", "Parisian French": "fr-FR",
	"Standard Italian": "it-IT", "Standard Japanese": "ja-JP",
}

// voiceArch splits a voice's engine description ("flite 2.2 cmu_us_slt")
// into the library, which is the architecture, and its version.
func voiceArch(v tts.Voice) (arch, version string) {
	f := strings.Fields(v.Engine)
	if len(f) < 2 {
		return v.Engine, ""
	}
	return f[0], f[1]
}

// voiceUUID identifies a voice, stably across runs.
func voiceUUID(name string) string { return uuid.NewSHA1(modelNamespace, []byte(name)).String() }

// ttsRecord is the model record of a voice. As the hosted service does,
// name is the voice's short name and canonical_name the model name
// clients ask for; architecture, version and engine name the library that
// really speaks, and the metadata describes the local voice as it sounds.
func ttsRecord(v tts.Voice) api.TTSModel {
	arch, version := voiceArch(v)
	short := strings.TrimSuffix(v.Name, "-"+v.Language)
	short = short[strings.LastIndexByte(short, '-')+1:]
	langs := []string{v.Language}
	if r, ok := voiceRegions[v.Accent]; ok {
		langs = append(langs, r)
	}
	tags := []string{string(v.Gender)}
	useCases := []string{"general"}
	if v.Family == tts.Flux {
		tags = append(tags, "turn-based")
		useCases = []string{"conversation", "agent"}
	}
	return api.TTSModel{
		Name:          short,
		CanonicalName: v.Name,
		Architecture:  arch,
		Languages:     langs,
		Version:       version,
		UUID:          voiceUUID(v.Name),
		Metadata:      &api.TTSModelDetails{Accent: v.Accent, Tags: tags, UseCases: useCases},
		Engine:        v.Engine,
	}
}

// handleModels serves GET /v1/models.
func (e *Engine) handleModels(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, e.catalogue())
}

// handleModel serves GET /v1/models/{id}, by name or UUID.
func (e *Engine) handleModel(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(strings.TrimSuffix(r.URL.Path, "/"), api.PathModels+"/")
	list := e.catalogue()
	for _, m := range list.STT {
		if m.Name == id || m.UUID == id {
			writeJSON(w, http.StatusOK, m)
			return
		}
	}
	for _, m := range list.TTS {
		if m.CanonicalName == id || m.UUID == id {
			writeJSON(w, http.StatusOK, m)
			return
		}
	}
	for _, m := range list.TTS {
		if m.Name == id {
			writeJSON(w, http.StatusOK, m)
			return
		}
	}
	writeError(w, r, http.StatusNotFound, "MODEL_NOT_FOUND", fmt.Sprintf("No model %q is served by the local engine.", id))
}
