package engine

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/earshot-app/earshot/api"
)

func TestModelList(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	list, err := newClient(t, shared).Models(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range list.STT {
		names = append(names, m.Name)
		checkSTTRecord(t, m)
	}
	if want := []string{"nova-3", "nova-2", "nova", "enhanced", "base", "flux-general-en"}; !slices.Equal(names, want) {
		t.Errorf("stt names %v, want %v", names, want)
	}
	if len(list.TTS) == 0 {
		t.Error("no voices listed")
	}
	// The wire carries both lists and every field of a record.
	a := do(t, shared, http.MethodGet, api.PathModels, tokenAuth(shared), nil, nil)
	var raw map[string][]map[string]json.RawMessage
	if err := json.Unmarshal(a.body, &raw); err != nil {
		t.Fatalf("body %s: %v", a.body, err)
	}
	if tts, ok := raw["tts"]; !ok || tts == nil {
		t.Errorf("body %s: want \"tts\": []", a.body)
	}
	want := []string{"architecture", "batch", "canonical_name", "engine", "formatted_output", "languages", "name", "streaming", "uuid", "version"}
	for _, rec := range raw["stt"] {
		if got := sortedKeys(rec); !slices.Equal(got, want) {
			t.Errorf("record fields %v, want %v", got, want)
		}
	}
}

func checkSTTRecord(t *testing.T, m api.STTModel) {
	t.Helper()
	if m.Name == "" || m.CanonicalName != m.Name {
		t.Errorf("%+v: want canonical_name equal to name", m)
	}
	if !strings.HasPrefix(m.Architecture, "pocketsphinx") {
		t.Errorf("%s: architecture %q, want pocketsphinx", m.Name, m.Architecture)
	}
	if !slices.Contains(m.Languages, "en") {
		t.Errorf("%s: languages %v, want en", m.Name, m.Languages)
	}
	if _, err := uuid.Parse(m.UUID); err != nil {
		t.Errorf("%s: uuid %q: %v", m.Name, m.UUID, err)
	}
	// The turn-aware model is served on the /v2/listen WebSocket only.
	if wantBatch := m.Name != api.ModelFluxGeneralEN; m.Batch != wantBatch || !m.Streaming {
		t.Errorf("%s: batch %v streaming %v, want batch %v and streaming", m.Name, m.Batch, m.Streaming, wantBatch)
	}
	if m.Engine == "" || m.Version == "" {
		t.Errorf("%s: engine %q version %q: the engine says what it is", m.Name, m.Engine, m.Version)
	}
}

func TestModelByID(t *testing.T) {
	t.Parallel()
	key := tokenAuth(shared)
	for _, tc := range []struct {
		id       string
		wantName string // "" for 404
	}{
		{"nova-3", "nova-3"},
		{"base", "base"},
		{"enhanced", "enhanced"},
		{sttModelUUID, "nova-3"},
		{"nova-3/", "nova-3"},
		{"whisper", ""},
		{"nova-3-general", ""},
		{"00000000-0000-0000-0000-000000000000", ""},
		{"a/b", ""},
	} {
		t.Run(tc.id, func(t *testing.T) {
			a := do(t, shared, http.MethodGet, api.PathModels+"/"+tc.id, key, nil, nil)
			if tc.wantName == "" {
				a.wantError(t, http.StatusNotFound, "MODEL_NOT_FOUND", "")
				return
			}
			if a.status != http.StatusOK {
				t.Fatalf("status %d; body %s", a.status, a.body)
			}
			var m api.STTModel
			if err := json.Unmarshal(a.body, &m); err != nil {
				t.Fatal(err)
			}
			if m.Name != tc.wantName {
				t.Errorf("name %q, want %q", m.Name, tc.wantName)
			}
			checkSTTRecord(t, m)
			want := sttModelUUID
			if tc.wantName == "base" { // the fast search (fastmodel.go)
				want = fastModelUUID
			}
			if m.UUID != want {
				t.Errorf("uuid %q, want the recogniser's %q, which results name", m.UUID, want)
			}
		})
	}
	// Listing needs credentials like everything else.
	if _, err := newClientWith(t, api.Config{Endpoint: shared.Endpoint(), APIKey: "wrong"}).Models(testContext(t, time.Minute), false); !errors.Is(err, api.ErrUnauthorized) {
		t.Errorf("models with a wrong key: %v", err)
	}
}
