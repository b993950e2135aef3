package api_test

import (
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
)

func TestSpeakOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts api.SpeakOptions
		mode api.Mode
		want *wantOpt
	}{
		{"defaults batch", api.SpeakOptions{}, api.Batch, nil},
		{"defaults streaming", api.SpeakOptions{}, api.Streaming, nil},
		{"aura-2 voice", api.SpeakOptions{Model: "aura-2-thalia-en"}, api.Batch, nil},
		{"aura voice", api.SpeakOptions{Model: "aura-luna-en"}, api.Streaming, nil},
		{"aura-2 german", api.SpeakOptions{Model: "aura-2-julius-de"}, api.Batch, nil},
		{"flux voice not served", api.SpeakOptions{Model: "flux-kit-en"}, api.Batch, bad("model")},
		{"flux voice not served streaming", api.SpeakOptions{Model: "flux-kit-en"}, api.Streaming, bad("model")},
		{"bare flux", api.SpeakOptions{Model: "flux"}, api.Batch, bad("model")},
		{"transcription model", api.SpeakOptions{Model: "flux-general-en"}, api.Batch, bad("model")},
		{"nova is not a voice", api.SpeakOptions{Model: "nova-3"}, api.Batch, bad("model")},
		{"malformed aura", api.SpeakOptions{Model: "aura-"}, api.Batch, bad("model")},

		{"mp3", api.SpeakOptions{Encoding: "mp3"}, api.Batch, nil},
		{"mp3 22050", api.SpeakOptions{Encoding: "mp3", SampleRate: 22050}, api.Batch, nil},
		{"mp3 24000 refused", api.SpeakOptions{Encoding: "mp3", SampleRate: 24000}, api.Batch, bad("sample_rate")},
		{"default mp3 at 24000 refused", api.SpeakOptions{SampleRate: 24000}, api.Batch, bad("sample_rate")},
		{"mp3 bit rate 48000", api.SpeakOptions{Encoding: "mp3", BitRate: 48000}, api.Batch, nil},
		{"mp3 bit rate 32000", api.SpeakOptions{Encoding: "mp3", BitRate: 32000}, api.Batch, nil},
		{"mp3 bit rate 64000", api.SpeakOptions{Encoding: "mp3", BitRate: 64000}, api.Batch, bad("bit_rate")},
		{"mp3 in wav", api.SpeakOptions{Encoding: "mp3", Container: "wav"}, api.Batch, bad("container")},
		{"mp3 container none", api.SpeakOptions{Encoding: "mp3", Container: "none"}, api.Batch, nil},
		{"mp3 streaming", api.SpeakOptions{Encoding: "mp3"}, api.Streaming, bad("encoding")},
		{"opus ogg 48000", api.SpeakOptions{Encoding: "opus", Container: "ogg", SampleRate: 48000, BitRate: 12000}, api.Batch, nil},
		{"opus wav", api.SpeakOptions{Encoding: "opus", Container: "wav"}, api.Batch, bad("container")},
		{"opus 24000", api.SpeakOptions{Encoding: "opus", SampleRate: 24000}, api.Batch, bad("sample_rate")},
		{"opus bit rate low", api.SpeakOptions{Encoding: "opus", BitRate: 3999}, api.Batch, bad("bit_rate")},
		{"opus bit rate high", api.SpeakOptions{Encoding: "opus", BitRate: 650001}, api.Batch, bad("bit_rate")},
		{"aac", api.SpeakOptions{Encoding: "aac", BitRate: 192000}, api.Batch, nil},
		{"aac bit rate high", api.SpeakOptions{Encoding: "aac", BitRate: 192001}, api.Batch, bad("bit_rate")},
		{"flac 22050", api.SpeakOptions{Encoding: "flac", SampleRate: 22050}, api.Batch, nil},
		{"flac bit rate", api.SpeakOptions{Encoding: "flac", BitRate: 32000}, api.Batch, bad("bit_rate")},
		{"flac streaming", api.SpeakOptions{Encoding: "flac"}, api.Streaming, bad("encoding")},
		{"aac streaming", api.SpeakOptions{Encoding: "aac"}, api.Streaming, bad("encoding")},
		{"opus streaming", api.SpeakOptions{Encoding: "opus"}, api.Streaming, bad("encoding")},
		{"unknown encoding", api.SpeakOptions{Encoding: "wav"}, api.Batch, bad("encoding")},

		{"linear16 rates", api.SpeakOptions{Encoding: "linear16", SampleRate: 48000}, api.Streaming, nil},
		{"linear16 8000", api.SpeakOptions{Encoding: "linear16", SampleRate: 8000, Container: "wav"}, api.Batch, nil},
		{"linear16 44100", api.SpeakOptions{Encoding: "linear16", SampleRate: 44100}, api.Batch, bad("sample_rate")},
		{"default streaming at 16000", api.SpeakOptions{SampleRate: 16000}, api.Streaming, nil},
		{"linear16 container none", api.SpeakOptions{Encoding: "linear16", Container: "none"}, api.Batch, nil},
		{"linear16 ogg", api.SpeakOptions{Encoding: "linear16", Container: "ogg"}, api.Batch, bad("container")},
		{"linear16 bit rate", api.SpeakOptions{Encoding: "linear16", BitRate: 32000}, api.Batch, bad("bit_rate")},
		{"mulaw 8000", api.SpeakOptions{Encoding: "mulaw", SampleRate: 8000}, api.Streaming, nil},
		{"alaw 16000", api.SpeakOptions{Encoding: "alaw", SampleRate: 16000, Container: "wav"}, api.Batch, nil},
		{"mulaw 24000", api.SpeakOptions{Encoding: "mulaw", SampleRate: 24000}, api.Streaming, bad("sample_rate")},
		{"container streaming", api.SpeakOptions{Encoding: "linear16", Container: "none"}, api.Streaming, bad("container")},
		{"bit rate streaming", api.SpeakOptions{BitRate: 32000}, api.Streaming, bad("bit_rate")},

		{"speed aura-2 en", api.SpeakOptions{Model: "aura-2-thalia-en", Speed: 1.2}, api.Batch, nil},
		{"speed aura-2 es", api.SpeakOptions{Model: "aura-2-celeste-es", Speed: 0.7}, api.Streaming, nil},
		{"speed 1.5", api.SpeakOptions{Model: "aura-2-thalia-en", Speed: 1.5}, api.Batch, nil},
		{"speed too slow", api.SpeakOptions{Model: "aura-2-thalia-en", Speed: 0.69}, api.Batch, bad("speed")},
		{"speed too fast", api.SpeakOptions{Model: "aura-2-thalia-en", Speed: 1.51}, api.Batch, bad("speed")},
		{"speed negative", api.SpeakOptions{Model: "aura-2-thalia-en", Speed: -1}, api.Batch, bad("speed")},
		{"speed aura-2 de", api.SpeakOptions{Model: "aura-2-julius-de", Speed: 1.1}, api.Batch, bad("speed")},
		{"speed aura-1", api.SpeakOptions{Model: "aura-luna-en", Speed: 1.1}, api.Batch, bad("speed")},
		{"speed default voice", api.SpeakOptions{Speed: 1.1}, api.Batch, bad("speed")},

		{"callback", api.SpeakOptions{Callback: "https://example.com/cb", CallbackMethod: "PUT", Priority: "low"}, api.Batch, nil},
		{"callback not a URL", api.SpeakOptions{Callback: "example.com"}, api.Batch, bad("callback")},
		{"callback ftp", api.SpeakOptions{Callback: "ftp://example.com/"}, api.Batch, bad("callback")},
		{"callback GET", api.SpeakOptions{Callback: "https://example.com/cb", CallbackMethod: "GET"}, api.Batch, bad("callback_method")},
		{"priority high", api.SpeakOptions{Callback: "https://example.com/cb", Priority: "high"}, api.Batch, bad("priority")},
		{"callback streaming", api.SpeakOptions{Callback: "https://example.com/cb"}, api.Streaming, bad("callback")},
		{"callback method streaming", api.SpeakOptions{CallbackMethod: "POST"}, api.Streaming, bad("callback_method")},
		{"priority streaming", api.SpeakOptions{Priority: "low"}, api.Streaming, bad("priority")},
		{"tags and opt-out", api.SpeakOptions{Tag: []string{"a", "b"}, MipOptOut: true}, api.Streaming, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOptionErr(t, "Validate", tt.opts.Validate(tt.mode), tt.want)
		})
	}
}

func TestSpeakOptionsCheckRequest(t *testing.T) {
	tests := []struct {
		name string
		opts api.SpeakOptions
		want *wantOpt
	}{
		{"callback with its method and priority", api.SpeakOptions{Callback: "https://example.com/cb", CallbackMethod: "POST", Priority: "low"}, nil},
		{"method without callback", api.SpeakOptions{CallbackMethod: "POST"}, bad("callback_method")},
		{"priority without callback", api.SpeakOptions{Priority: "low"}, bad("priority")},
		{"invalid first", api.SpeakOptions{Model: "flux-kit-en", Priority: "low"}, bad("model")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOptionErr(t, "CheckRequest", tt.opts.CheckRequest(api.Batch), tt.want)
			v2 := api.SpeakV2Options{Model: "flux-kit-en", Callback: tt.opts.Callback, CallbackMethod: tt.opts.CallbackMethod, Priority: tt.opts.Priority}
			if tt.opts.Model == "" {
				checkOptionErr(t, "v2 CheckRequest", v2.CheckRequest(api.Batch), tt.want)
			}
		})
	}
}

func TestSpeakOptionsQuery(t *testing.T) {
	full := api.SpeakOptions{Model: "aura-2-thalia-en", Encoding: "mp3", Container: "none", SampleRate: 22050, BitRate: 48000, Speed: 1.05,
		Callback: "https://example.com/cb?x=1", CallbackMethod: "PUT", Priority: "low", Tag: []string{"a", "b c"}, MipOptOut: true}
	tests := []struct {
		name   string
		opts   api.SpeakOptions
		batch  string
		stream string
	}{
		{"empty", api.SpeakOptions{}, "", ""},
		{"full", full,
			"bit_rate=48000&callback=https%3A%2F%2Fexample.com%2Fcb%3Fx%3D1&callback_method=PUT&container=none&encoding=mp3&mip_opt_out=true&model=aura-2-thalia-en&priority=low&sample_rate=22050&speed=1.05&tag=a&tag=b+c",
			"encoding=mp3&mip_opt_out=true&model=aura-2-thalia-en&sample_rate=22050&speed=1.05&tag=a&tag=b+c"},
		{"stream", api.SpeakOptions{Model: "aura-luna-en", Encoding: "mulaw", SampleRate: 8000},
			"encoding=mulaw&model=aura-luna-en&sample_rate=8000", "encoding=mulaw&model=aura-luna-en&sample_rate=8000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.opts.Query().Encode(); got != tt.batch {
				t.Errorf("Query\n got %s\nwant %s", got, tt.batch)
			}
			if got := tt.opts.StreamQuery().Encode(); got != tt.stream {
				t.Errorf("StreamQuery\n got %s\nwant %s", got, tt.stream)
			}
			back, unknown, err := api.ParseSpeakOptions(tt.opts.Query())
			if err != nil || len(unknown) != 0 {
				t.Fatalf("ParseSpeakOptions: %v %v", unknown, err)
			}
			if !reflect.DeepEqual(back, tt.opts) {
				t.Errorf("round trip\n got %+v\nwant %+v", back, tt.opts)
			}
		})
	}
}

func TestParseSpeakOptions(t *testing.T) {
	tests := []struct {
		name    string
		query   string
		want    api.SpeakOptions
		unknown []string
		err     *wantOpt
	}{
		{"empty", "", api.SpeakOptions{}, nil, nil},
		{"case folded", "encoding=MP3&container=NONE&callback_method=put&priority=LOW&model=aura-2-thalia-en",
			api.SpeakOptions{Model: "aura-2-thalia-en", Encoding: "mp3", Container: "none", CallbackMethod: "PUT", Priority: "low"}, nil, nil},
		{"unknown reported", "model=aura-luna-en&expressivity=1&voice=x", api.SpeakOptions{Model: "aura-luna-en"}, []string{"expressivity", "voice"}, nil},
		{"sample rate text", "sample_rate=high", api.SpeakOptions{}, nil, &wantOpt{Param: "sample_rate", Status: http.StatusBadRequest, Code: api.CodeInvalidQueryParameter}},
		{"sample rate zero", "sample_rate=0", api.SpeakOptions{}, nil, &wantOpt{Param: "sample_rate", Status: http.StatusBadRequest, Code: api.CodeInvalidQueryParameter}},
		{"bit rate negative", "bit_rate=-1", api.SpeakOptions{}, nil, &wantOpt{Param: "bit_rate", Status: http.StatusBadRequest, Code: api.CodeInvalidQueryParameter}},
		{"speed text", "speed=fast", api.SpeakOptions{}, nil, &wantOpt{Param: "speed", Status: http.StatusBadRequest, Code: api.CodeInvalidQueryParameter}},
		{"speed NaN", "speed=NaN", api.SpeakOptions{}, nil, &wantOpt{Param: "speed", Status: http.StatusBadRequest, Code: api.CodeInvalidQueryParameter}},
		{"speed zero", "speed=0", api.SpeakOptions{}, nil, bad("speed")},
		{"opt-out bad", "mip_opt_out=yes", api.SpeakOptions{}, nil, &wantOpt{Param: "mip_opt_out", Status: http.StatusBadRequest, Code: api.CodeInvalidQueryParameter}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, unknown, err := api.ParseSpeakOptions(q)
			checkOptionErr(t, "ParseSpeakOptions", err, tt.err)
			if !slices.Equal(unknown, tt.unknown) {
				t.Errorf("unknown %v, want %v", unknown, tt.unknown)
			}
			if tt.err == nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCheckSpeakText(t *testing.T) {
	tooLong := &wantOpt{Param: "text", Status: http.StatusUnprocessableEntity, Code: "Unprocessable Entity"}
	tests := []struct {
		name  string
		model string
		text  string
		want  *wantOpt
	}{
		{"hello", "", "Hello", nil},
		{"empty", "", "", badMsg("text", api.MsgEmptyText)},
		{"white space only", "aura-2-thalia-en", " \n\t", badMsg("text", api.MsgEmptyText)},
		{"aura-2 at its limit", "aura-2-thalia-en", strings.Repeat("a", 1000), nil},
		{"aura-2 over its limit", "aura-2-thalia-en", strings.Repeat("a", 1001), tooLong},
		{"characters not bytes", "aura-2-thalia-en", strings.Repeat("é", 1000), nil},
		{"aura at its limit", "aura-luna-en", strings.Repeat("a", 2000), nil},
		{"aura over its limit", "aura-luna-en", strings.Repeat("a", 2001), tooLong},
		{"default voice is aura", "", strings.Repeat("a", 2000), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOptionErr(t, "CheckSpeakText", api.CheckSpeakText(tt.model, tt.text), tt.want)
		})
	}
}

func TestVoiceNames(t *testing.T) {
	tests := []struct {
		model      string
		aura, flux bool
		lang       string
		speed      bool
	}{
		{"aura-2-thalia-en", true, false, "en", true},
		{"aura-2-celeste-es", true, false, "es", true},
		{"aura-2-julius-de", true, false, "de", false},
		{"aura-asteria-en", true, false, "en", false},
		{"AURA-2-Thalia-EN", true, false, "en", true},
		{"flux-kit-en", false, true, "en", false},
		{"flux-alexis-en", false, true, "en", false},
		{"flux-general-en", false, false, "en", false},
		{"flux", false, false, "", false},
		{"nova-3", false, false, "3", false},
		{"aura-2-x-y-en", false, false, "en", false},
		{"", false, false, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			if got := api.IsAuraVoice(tt.model); got != tt.aura {
				t.Errorf("IsAuraVoice = %v", got)
			}
			if got := api.IsFluxVoice(tt.model); got != tt.flux {
				t.Errorf("IsFluxVoice = %v", got)
			}
			if got := api.VoiceLanguage(tt.model); got != tt.lang {
				t.Errorf("VoiceLanguage = %q", got)
			}
			if got := api.SpeedAvailable(tt.model); got != tt.speed {
				t.Errorf("SpeedAvailable = %v", got)
			}
		})
	}
}

func TestModelListVoices(t *testing.T) {
	l := api.ModelList{
		STT: []api.STTModel{{Name: "nova-3", CanonicalName: "nova-3"}, {Name: "flux-general-en", CanonicalName: "flux-general-en"}},
		TTS: []api.TTSModel{
			{Name: "zeus", CanonicalName: "aura-2-zeus-en"},
			{Name: "kit", CanonicalName: "flux-kit-en"},
			{Name: "asteria", CanonicalName: "aura-asteria-en"},
			{Name: "aura-luna-en"},
			{Name: "flux-alexis-en"},
			{Name: "mystery", CanonicalName: "other-voice"},
		},
	}
	names := func(ms []api.TTSModel) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Name)
		}
		return out
	}
	if got, want := names(l.SpeakVoices()), []string{"zeus", "asteria", "aura-luna-en"}; !slices.Equal(got, want) {
		t.Errorf("SpeakVoices %v, want %v", got, want)
	}
	if got, want := names(l.TurnVoices()), []string{"kit", "flux-alexis-en"}; !slices.Equal(got, want) {
		t.Errorf("TurnVoices %v, want %v", got, want)
	}
	for _, m := range l.SpeakVoices() {
		if err := (&api.SpeakOptions{Model: m.CanonicalName}).Validate(api.Batch); m.CanonicalName != "" && err != nil {
			t.Errorf("%s offered on /v1/speak but refused: %v", m.Name, err)
		}
	}
	for _, m := range l.TurnVoices() {
		model := m.CanonicalName
		if model == "" {
			model = m.Name
		}
		if err := (&api.SpeakV2Options{Model: model}).Validate(api.Streaming); err != nil {
			t.Errorf("%s offered on /v2/speak but refused: %v", m.Name, err)
		}
	}
}
