package engine

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
)

// TestFastModel checks the engine's second recogniser: base (and its
// aliases) is decoded with the fast search, says so in its model record
// and in results, and hears a real recording differently from nova-3.
func TestFastModel(t *testing.T) {
	t.Parallel()
	list, err := newClient(t, shared).Models(testContext(t, time.Minute), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range list.STT {
		fast := m.Name == "base"
		if got := strings.Contains(m.Engine, "fast search"); got != fast {
			t.Errorf("%s: engine %q; want fast search named for base only", m.Name, m.Engine)
		}
		if fast && m.UUID != fastModelUUID || !fast && m.UUID == fastModelUUID {
			t.Errorf("%s: uuid %s", m.Name, m.UUID)
		}
	}

	wav := readFile(t, clipPath("0920"))
	transcripts := map[string]string{}
	for _, model := range []string{"nova-3", "base", "general"} {
		r := postListen(t, "model="+model, wav, "audio/wav").listenOK(t)
		info := r.Metadata.ModelInfo[r.Metadata.Models[0]]
		wantName := "pocketsphinx-en-us"
		if model != "nova-3" {
			wantName = "pocketsphinx-en-us-fast"
		}
		if info.Name != wantName || info.Arch != "pocketsphinx" {
			t.Errorf("%s: model_info %+v, want name %s", model, info, wantName)
		}
		transcripts[model] = r.Transcript()
	}
	t.Logf("nova-3: %s\nbase:   %s", transcripts["nova-3"], transcripts["base"])
	if transcripts["base"] == transcripts["nova-3"] {
		t.Errorf("base heard exactly what nova-3 did (%q): not a different model", transcripts["base"])
	}
	if transcripts["general"] != transcripts["base"] {
		t.Errorf("general (an alias of base) heard %q, base %q", transcripts["general"], transcripts["base"])
	}
	if len(strings.Fields(transcripts["base"])) < 10 {
		t.Errorf("base heard only %q", transcripts["base"])
	}
}

// TestFastModelStream streams a clip with model=base: every result names
// the fast model, and the words are what batch hears with base.
func TestFastModelStream(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	msgs, err := streamClip(t, ctx, shared, "0930", api.ListenOptions{Model: "base", Endpointing: 500}, 32)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("stream ended with %v", err)
	}
	finals := 0
	for _, m := range msgs {
		switch m := m.(type) {
		case *api.Results:
			finals++
			if m.Metadata.ModelUUID != fastModelUUID || m.Metadata.ModelInfo.Name != "pocketsphinx-en-us-fast" {
				t.Errorf("result metadata %+v, want the fast model", m.Metadata)
			}
		case *api.Metadata:
			if len(m.Models) != 1 || m.Models[0] != fastModelUUID || m.ModelInfo[fastModelUUID].Name != "pocketsphinx-en-us-fast" {
				t.Errorf("stream metadata models %v %v", m.Models, m.ModelInfo)
			}
		}
	}
	if finals == 0 {
		t.Fatal("no results")
	}
	batch := postListen(t, "model=base", readFile(t, clipPath("0930")), "audio/wav").listenOK(t).Transcript()
	if got := joinFinals(msgs); got != batch {
		t.Errorf("streamed with base: %q\nbatch with base: %q", got, batch)
	}
}
