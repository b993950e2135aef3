package engine

import (
	"log/slog"

	"github.com/google/uuid"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine/sphinx"
	"github.com/earshot-app/earshot/internal/clock"
)

// The engine's second /v1/listen model, served as base: the same
// acoustic model, language model and dictionary as the others, decoded
// with a narrower, single-pass search (sphinx.FastSearch). It takes about
// a third less CPU and makes different mistakes; docs/engine.md has the
// figures.
const (
	fastModelName   = sttModelName + "-fast"
	fastModelEngine = sttEngine + ", fast search (one pass, at most 5000 HMMs a frame)"
)

// fastModelUUID identifies the fast recogniser in model_info.
var fastModelUUID = uuid.NewSHA1(modelNamespace, []byte(fastModelName)).String()

// fastListenNames are the served names (after aliases) decoded with the
// fast search.
var fastListenNames = map[string]bool{"base": true}

// listenModel is one recogniser behind /v1/listen names: what results
// call it, and which of the engine's recognisers decodes for it.
type listenModel struct {
	name   string // model_info name
	uuid   string
	engine string // the model record's Engine
	fast   bool   // decoded by the fast recogniser
}

var (
	fullListenModel = listenModel{name: sttModelName, uuid: sttModelUUID, engine: sttEngine}
	fastListenModel = listenModel{name: fastModelName, uuid: fastModelUUID, engine: fastModelEngine, fast: true}
)

// listenModelFor returns the recogniser behind a requested model name;
// names the engine does not serve get the default one (they are refused
// before this is asked).
func listenModelFor(requested string) listenModel {
	if name, ok := resolveListenModel(requested); ok && fastListenNames[name] {
		return fastListenModel
	}
	return fullListenModel
}

// info is the model_info of results decoded by m.
func (m listenModel) info() api.ModelInfo {
	return api.ModelInfo{Name: m.name, Version: sttModelVersion, Arch: sttModelArch}
}

// newFastRecognizer is a recogniser like newRecognizer's whose decoders
// search with sphinx.FastSearch.
func newFastRecognizer(cfg RecognizerConfig, size int, clk clock.Clock, log *slog.Logger) (*recognizer, error) {
	r, err := newRecognizer(cfg, size, clk, log.With("model", fastModelName))
	if err != nil {
		return nil, err
	}
	r.base.Search = sphinx.FastSearch()
	return r, nil
}

// recognizerFor returns the recogniser that decodes for m.
func (e *Engine) recognizerFor(m listenModel) *recognizer {
	if m.fast {
		return e.asrFast
	}
	return e.asr
}
