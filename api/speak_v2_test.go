package api_test

import (
	"math/rand/v2"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"testing"

	"github.com/earshot-app/earshot/api"
)

func kit() api.SpeakV2Options { return api.SpeakV2Options{Model: "flux-kit-en"} }

func withV2(f func(*api.SpeakV2Options)) api.SpeakV2Options {
	o := kit()
	f(&o)
	return o
}

func TestSpeakV2OptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts api.SpeakV2Options
		mode api.Mode
		want *wantOpt
	}{
		{"flux voice", kit(), api.Streaming, nil},
		{"flux voice batch", kit(), api.Batch, nil},
		{"model required", api.SpeakV2Options{}, api.Streaming, bad("model")},
		{"aura refused", api.SpeakV2Options{Model: "aura-2-thalia-en"}, api.Streaming, bad("model")},
		{"aura refused batch", api.SpeakV2Options{Model: "aura-asteria-en"}, api.Batch, bad("model")},
		{"bare flux", api.SpeakV2Options{Model: "flux"}, api.Streaming, bad("model")},
		{"transcription model", api.SpeakV2Options{Model: "flux-general-en"}, api.Streaming, bad("model")},
		{"no language", api.SpeakV2Options{Model: "flux-kit"}, api.Streaming, bad("model")},

		{"speed 0.5", withV2(func(o *api.SpeakV2Options) { o.Speed = 0.5 }), api.Streaming, nil},
		{"speed 1.5", withV2(func(o *api.SpeakV2Options) { o.Speed = 1.5 }), api.Streaming, nil},
		{"speed 1.05", withV2(func(o *api.SpeakV2Options) { o.Speed = 1.05 }), api.Streaming, nil},
		{"speed 1.15 sum", withV2(func(o *api.SpeakV2Options) { o.Speed = 1 + 0.05 + 0.05 + 0.05 }), api.Streaming, nil},
		{"speed 0.45", withV2(func(o *api.SpeakV2Options) { o.Speed = 0.45 }), api.Streaming, bad("speed")},
		{"speed 1.55", withV2(func(o *api.SpeakV2Options) { o.Speed = 1.55 }), api.Batch, bad("speed")},
		{"speed off step", withV2(func(o *api.SpeakV2Options) { o.Speed = 1.07 }), api.Streaming, bad("speed")},
		{"speed negative", withV2(func(o *api.SpeakV2Options) { o.Speed = -1 }), api.Streaming, bad("speed")},

		{"expressivity -2", withV2(func(o *api.SpeakV2Options) { o.Expressivity = intp(-2) }), api.Streaming, nil},
		{"expressivity 0 explicit", withV2(func(o *api.SpeakV2Options) { o.Expressivity = intp(0) }), api.Streaming, nil},
		{"expressivity 2", withV2(func(o *api.SpeakV2Options) { o.Expressivity = intp(2) }), api.Batch, nil},
		{"expressivity 3", withV2(func(o *api.SpeakV2Options) { o.Expressivity = intp(3) }), api.Streaming, bad("expressivity")},
		{"expressivity -3", withV2(func(o *api.SpeakV2Options) { o.Expressivity = intp(-3) }), api.Batch, bad("expressivity")},

		{"linear16 44100", withV2(func(o *api.SpeakV2Options) { o.Encoding, o.SampleRate = "linear16", 44100 }), api.Streaming, nil},
		{"default 48000", withV2(func(o *api.SpeakV2Options) { o.SampleRate = 48000 }), api.Streaming, nil},
		{"rate 22050", withV2(func(o *api.SpeakV2Options) { o.SampleRate = 22050 }), api.Streaming, bad("sample_rate")},
		{"mulaw 8000", withV2(func(o *api.SpeakV2Options) { o.Encoding, o.SampleRate = "mulaw", 8000 }), api.Streaming, nil},
		{"alaw 24000", withV2(func(o *api.SpeakV2Options) { o.Encoding, o.SampleRate = "alaw", 24000 }), api.Streaming, bad("sample_rate")},
		{"unknown encoding", withV2(func(o *api.SpeakV2Options) { o.Encoding = "pcm" }), api.Streaming, bad("encoding")},

		{"mp3 batch", withV2(func(o *api.SpeakV2Options) { o.Encoding, o.BitRate = "mp3", 48000 }), api.Batch, nil},
		{"opus ogg batch", withV2(func(o *api.SpeakV2Options) { o.Encoding, o.Container = "opus", "ogg" }), api.Batch, nil},
		{"wav batch", withV2(func(o *api.SpeakV2Options) { o.Encoding, o.Container = "linear16", "wav" }), api.Batch, nil},
		{"callback batch", withV2(func(o *api.SpeakV2Options) {
			o.Callback, o.CallbackMethod, o.Priority = "https://example.com/cb", "POST", "low"
		}), api.Batch, nil},
		{"priority high", withV2(func(o *api.SpeakV2Options) { o.Callback, o.Priority = "https://example.com/cb", "high" }), api.Batch, bad("priority")},
		{"bit rate on linear16", withV2(func(o *api.SpeakV2Options) { o.BitRate = 32000 }), api.Batch, bad("bit_rate")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOptionErr(t, "Validate", tt.opts.Validate(tt.mode), tt.want)
		})
	}
}

// batchOnlyV2 sets, one at a time, every setting the /v2/speak WebSocket
// fails the connection on.
var batchOnlyV2 = []struct {
	name  string
	param string
	set   func(*api.SpeakV2Options)
}{
	{"mp3", "encoding", func(o *api.SpeakV2Options) { o.Encoding = "mp3" }},
	{"opus", "encoding", func(o *api.SpeakV2Options) { o.Encoding = "opus" }},
	{"flac", "encoding", func(o *api.SpeakV2Options) { o.Encoding = "flac" }},
	{"aac", "encoding", func(o *api.SpeakV2Options) { o.Encoding = "aac" }},
	{"container", "container", func(o *api.SpeakV2Options) { o.Container = "none" }},
	{"bit_rate", "bit_rate", func(o *api.SpeakV2Options) { o.BitRate = 48000 }},
	{"callback", "callback", func(o *api.SpeakV2Options) { o.Callback = "https://example.com/cb" }},
	{"callback_method", "callback_method", func(o *api.SpeakV2Options) { o.CallbackMethod = "POST" }},
	{"priority", "priority", func(o *api.SpeakV2Options) { o.Priority = "low" }},
	{"everything", "encoding", func(o *api.SpeakV2Options) {
		o.Encoding, o.Container, o.BitRate, o.Callback, o.CallbackMethod, o.Priority = "mp3", "none", 48000, "https://example.com/cb", "PUT", "low"
	}},
}

// speakV2StreamParams are the only parameters the /v2/speak WebSocket
// takes.
var speakV2StreamParams = []string{"model", "encoding", "sample_rate", "speed", "expressivity", "tag", "mip_opt_out"}

func TestSpeakV2StreamQueryWhitelist(t *testing.T) {
	for _, tt := range batchOnlyV2 {
		t.Run(tt.name, func(t *testing.T) {
			o := withV2(func(o *api.SpeakV2Options) {
				o.Speed, o.Expressivity, o.Tag, o.MipOptOut = 1.1, intp(1), []string{"t"}, true
			})
			tt.set(&o)
			checkOptionErr(t, "Validate(Streaming)", o.Validate(api.Streaming), bad(tt.param))
			q := o.StreamQuery()
			for k := range q {
				if !slices.Contains(speakV2StreamParams, k) {
					t.Errorf("StreamQuery carries %s: %s", k, q.Encode())
				}
			}
			if tt.param == "encoding" && q.Has("encoding") && slices.Contains([]string{"mp3", "opus", "flac", "aac"}, q.Get("encoding")) {
				// The value is the caller's; Validate refuses it before a
				// handshake, which the stream tests check.
				q.Del("encoding")
			}
			if _, unknown, err := api.ParseSpeakV2Options(q, api.Streaming); err != nil || len(unknown) != 0 {
				t.Errorf("the engine refuses the stream query %s: %v %v", q.Encode(), unknown, err)
			}
			if got := q.Get("speed"); got != "1.1" {
				t.Errorf("speed %q", got)
			}
		})
	}
}

func TestSpeakV2Query(t *testing.T) {
	tests := []struct {
		name          string
		opts          api.SpeakV2Options
		batch, stream string
	}{
		{"model only", kit(), "model=flux-kit-en", "model=flux-kit-en"},
		{"zero expressivity is sent when set", withV2(func(o *api.SpeakV2Options) { o.Expressivity = intp(0) }),
			"expressivity=0&model=flux-kit-en", "expressivity=0&model=flux-kit-en"},
		{"speed steps", withV2(func(o *api.SpeakV2Options) { o.Speed = 1 + 0.05 }), "model=flux-kit-en&speed=1.05", "model=flux-kit-en&speed=1.05"},
		{"full batch", withV2(func(o *api.SpeakV2Options) {
			o.Encoding, o.SampleRate, o.Speed, o.Expressivity = "mp3", 24000, 0.7000000001, intp(-1)
			o.Container, o.BitRate, o.Callback, o.CallbackMethod, o.Priority = "none", 32000, "https://e.com/c", "PUT", "low"
			o.Tag, o.MipOptOut = []string{"x"}, true
		}),
			"bit_rate=32000&callback=https%3A%2F%2Fe.com%2Fc&callback_method=PUT&container=none&encoding=mp3&expressivity=-1&mip_opt_out=true&model=flux-kit-en&priority=low&sample_rate=24000&speed=0.7&tag=x",
			"encoding=mp3&expressivity=-1&mip_opt_out=true&model=flux-kit-en&sample_rate=24000&speed=0.7&tag=x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.opts.Query().Encode(); got != tt.batch {
				t.Errorf("Query\n got %s\nwant %s", got, tt.batch)
			}
			if got := tt.opts.StreamQuery().Encode(); got != tt.stream {
				t.Errorf("StreamQuery\n got %s\nwant %s", got, tt.stream)
			}
		})
	}
}

func TestFormatSpeakV2Speed(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{1, "1"}, {1.05, "1.05"}, {1 + 0.05, "1.05"}, {0.1 + 0.2 + 0.85, "1.15"}, {1.1, "1.1"}, {0.5, "0.5"}, {1.5, "1.5"},
		{1.07, "1.07"}, // not a step: written as given, and refused by Validate
	}
	for _, tt := range tests {
		if got := api.FormatSpeakV2Speed(tt.in); got != tt.want {
			t.Errorf("FormatSpeakV2Speed(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseSpeakV2Options(t *testing.T) {
	invalidQuery := func(p string) *wantOpt {
		return &wantOpt{Param: p, Status: http.StatusBadRequest, Code: api.CodeInvalidQueryParameter}
	}
	tests := []struct {
		name    string
		query   string
		mode    api.Mode
		want    api.SpeakV2Options
		unknown []string
		err     *wantOpt
	}{
		{"stream", "model=flux-kit-en&encoding=mulaw&sample_rate=8000&speed=1.25&expressivity=-1&tag=a&mip_opt_out=true", api.Streaming,
			api.SpeakV2Options{Model: "flux-kit-en", Encoding: "mulaw", SampleRate: 8000, Speed: 1.25, Expressivity: intp(-1), Tag: []string{"a"}, MipOptOut: true}, nil, nil},
		{"explicit zero expressivity", "model=flux-kit-en&expressivity=0", api.Streaming,
			api.SpeakV2Options{Model: "flux-kit-en", Expressivity: intp(0)}, nil, nil},
		{"unknown on the socket", "model=flux-kit-en&sped=1.1", api.Streaming, api.SpeakV2Options{}, []string{"sped"}, invalidQuery("sped")},
		{"unknown in batch", "model=flux-kit-en&sped=1.1", api.Batch, api.SpeakV2Options{Model: "flux-kit-en"}, []string{"sped"}, nil},
		{"container on the socket", "model=flux-kit-en&container=wav", api.Streaming, api.SpeakV2Options{}, nil, bad("container")},
		{"bit_rate on the socket", "model=flux-kit-en&bit_rate=32000", api.Streaming, api.SpeakV2Options{}, nil, bad("bit_rate")},
		{"callback on the socket", "model=flux-kit-en&callback=https://e.com", api.Streaming, api.SpeakV2Options{}, nil, bad("callback")},
		{"callback_method on the socket", "model=flux-kit-en&callback_method=POST", api.Streaming, api.SpeakV2Options{}, nil, bad("callback_method")},
		{"priority on the socket", "model=flux-kit-en&priority=low", api.Streaming, api.SpeakV2Options{}, nil, bad("priority")},
		{"mp3 on the socket", "model=flux-kit-en&encoding=mp3", api.Streaming, api.SpeakV2Options{}, nil, bad("encoding")},
		{"batch", "model=flux-kit-en&encoding=mp3&bit_rate=32000&callback=https://e.com/c&callback_method=put&priority=low", api.Batch,
			api.SpeakV2Options{Model: "flux-kit-en", Encoding: "mp3", BitRate: 32000, Callback: "https://e.com/c", CallbackMethod: "PUT", Priority: "low"}, nil, nil},
		{"no model", "encoding=linear16", api.Streaming, api.SpeakV2Options{}, nil, bad("model")},
		{"aura", "model=aura-2-thalia-en", api.Batch, api.SpeakV2Options{}, nil, bad("model")},
		{"expressivity text", "model=flux-kit-en&expressivity=high", api.Streaming, api.SpeakV2Options{}, nil, invalidQuery("expressivity")},
		{"expressivity out of range", "model=flux-kit-en&expressivity=5", api.Streaming, api.SpeakV2Options{}, nil, bad("expressivity")},
		{"speed off step", "model=flux-kit-en&speed=1.01", api.Streaming, api.SpeakV2Options{}, nil, bad("speed")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, unknown, err := api.ParseSpeakV2Options(q, tt.mode)
			checkOptionErr(t, "ParseSpeakV2Options", err, tt.err)
			if !slices.Equal(unknown, tt.unknown) {
				t.Errorf("unknown %v, want %v", unknown, tt.unknown)
			}
			if tt.err == nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// randomSpeakV2Options draws options, valid or not, from the values the
// rules care about.
func randomSpeakV2Options(r *rand.Rand) api.SpeakV2Options {
	pick := func(vs ...string) string { return vs[r.IntN(len(vs))] }
	o := api.SpeakV2Options{
		Model:          pick("", "flux-kit-en", "flux-alexis-en", "aura-2-thalia-en"),
		Encoding:       pick("", "linear16", "mulaw", "alaw", "mp3", "opus", "flac", "aac", "wav"),
		SampleRate:     []int{0, 8000, 16000, 22050, 24000, 44100, 48000}[r.IntN(7)],
		Speed:          []float64{0, 0.5, 0.95, 1.05, 1.5, 1.52, 2}[r.IntN(7)],
		Container:      pick("", "", "wav", "ogg", "none"),
		BitRate:        []int{0, 0, 32000, 48000, 12000}[r.IntN(5)],
		Callback:       pick("", "", "https://example.com/cb"),
		CallbackMethod: pick("", "", "POST", "PUT", "GET"),
		Priority:       pick("", "", "low", "high"),
		MipOptOut:      r.IntN(2) == 0,
	}
	if r.IntN(2) == 0 {
		o.Expressivity = intp(r.IntN(7) - 3)
	}
	if r.IntN(2) == 0 {
		o.Tag = []string{pick("a", "b c", "é")}
	}
	return o
}

// TestSpeakV2StreamQueryProperty checks, over many drawn options, that a
// stream query never carries a parameter the WebSocket would fail on and
// that the engine reads back exactly the streaming settings.
func TestSpeakV2StreamQueryProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 7))
	for range 2000 {
		o := randomSpeakV2Options(r)
		q := o.StreamQuery()
		for k := range q {
			if !slices.Contains(speakV2StreamParams, k) {
				t.Fatalf("%+v: StreamQuery carries %s", o, k)
			}
		}
		if o.Validate(api.Streaming) != nil {
			continue
		}
		back, unknown, err := api.ParseSpeakV2Options(q, api.Streaming)
		if err != nil || len(unknown) != 0 {
			t.Fatalf("%+v: the engine refuses %s: %v %v", o, q.Encode(), unknown, err)
		}
		if !reflect.DeepEqual(back, o) {
			t.Fatalf("round trip of %s\n got %+v\nwant %+v", q.Encode(), back, o)
		}
	}
}
