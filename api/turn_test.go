package api_test

import (
	"errors"
	"math/rand/v2"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/earshot-app/earshot/api"
)

func f64p(f float64) *float64 { return &f }

// en is the smallest valid options of /v2/listen with raw audio.
func en() api.TurnOptions {
	return api.TurnOptions{Model: api.ModelFluxGeneralEN, Encoding: "linear16", SampleRate: 16000}
}

// invalidParam is the answer of the service to a language hint it refuses.
func invalidParam(param string) *wantOpt {
	return &wantOpt{Param: param, Status: http.StatusBadRequest, Code: api.CodeInvalidParameter}
}

func TestTurnOptionRules(t *testing.T) {
	keyterms101 := make([]string, 101)
	for i := range keyterms101 {
		keyterms101[i] = "term " + strconv.Itoa(i)
	}
	with := func(f func(*api.TurnOptions)) api.TurnOptions {
		o := en()
		f(&o)
		return o
	}
	// One case per rule. validate is what Validate answers (the service's
	// own rules); check is what CheckRequest answers on top of it.
	tests := []struct {
		name     string
		opts     api.TurnOptions
		validate *wantOpt
		check    *wantOpt
	}{
		// Accepted requests.
		{name: "english raw pcm", opts: en()},
		{name: "multi with hints", opts: api.TurnOptions{Model: api.ModelFluxGeneralMulti, LanguageHints: []string{"en", "es", "pt-BR", "EN_gb"}}},
		{name: "every language of the multilingual model", opts: api.TurnOptions{Model: api.ModelFluxGeneralMulti, LanguageHints: api.FluxMultiLanguages}},
		{name: "100 keyterms", opts: with(func(o *api.TurnOptions) { o.Keyterms = keyterms101[:100] })},
		{name: "containerized audio, no encoding", opts: api.TurnOptions{Model: api.ModelFluxGeneralEN}},
		{name: "model upper case", opts: api.TurnOptions{Model: "FLUX-GENERAL-EN"}},
		{name: "opus needs no sample_rate", opts: api.TurnOptions{Model: api.ModelFluxGeneralEN, Encoding: "opus"}},
		{name: "every end-of-turn setting", opts: with(func(o *api.TurnOptions) {
			o.EOTThreshold, o.EagerEOTThreshold, o.EOTTimeoutMS = 0.8, 0.5, 3000
		})},
		{name: "thresholds at their bounds", opts: with(func(o *api.TurnOptions) {
			o.EOTThreshold, o.EagerEOTThreshold, o.EOTTimeoutMS = 1.0, 0.9, 60000
		})},
		{name: "lower bounds", opts: with(func(o *api.TurnOptions) {
			o.EOTThreshold, o.EagerEOTThreshold, o.EOTTimeoutMS = 0.5, 0.3, 500
		})},
		{name: "eager equal to eot", opts: with(func(o *api.TurnOptions) { o.EOTThreshold, o.EagerEOTThreshold = 0.6, 0.6 })},
		{name: "eager equal to default eot", opts: with(func(o *api.TurnOptions) { o.EagerEOTThreshold = 0.7 })},
		{name: "keyterms, redact and the rest", opts: with(func(o *api.TurnOptions) {
			o.Keyterms = []string{"Earshot", "10:30 meeting", "a&b"}
			o.Redact = []string{"numbers", "aggressive_numbers"}
			o.ProfanityFilter, o.Numerals, o.MipOptOut, o.Tag = true, true, true, []string{"t"}
		})},

		// The model (service-interface 2.1, 4.2).
		{name: "model missing", opts: api.TurnOptions{}, validate: bad("model")},
		{name: "model=flux", opts: api.TurnOptions{Model: "flux"}, validate: bad("model")},
		{name: "model=Flux", opts: api.TurnOptions{Model: "Flux"}, validate: bad("model")},
		{name: "continuous model", opts: api.TurnOptions{Model: "nova-3"}, validate: bad("model")},
		{name: "tts flux voice", opts: api.TurnOptions{Model: "flux-kit-en"}, validate: bad("model")},
		{name: "aura voice", opts: api.TurnOptions{Model: "aura-2-thalia-en"}, validate: bad("model")},
		{name: "unknown flux-general", opts: api.TurnOptions{Model: "flux-general-fr"}, validate: bad("model")},

		// Audio description.
		{name: "unknown encoding", opts: api.TurnOptions{Model: api.ModelFluxGeneralEN, Encoding: "wav"}, validate: bad("encoding")},
		{name: "flac is not a turn-aware encoding", opts: api.TurnOptions{Model: api.ModelFluxGeneralEN, Encoding: "flac"}, validate: bad("encoding")},
		{name: "linear16 without sample_rate", opts: api.TurnOptions{Model: api.ModelFluxGeneralEN, Encoding: "linear16"}, validate: bad("sample_rate")},
		{name: "mulaw without sample_rate", opts: api.TurnOptions{Model: api.ModelFluxGeneralEN, Encoding: "mulaw"}, validate: bad("sample_rate")},
		{name: "sample_rate out of range", opts: with(func(o *api.TurnOptions) { o.SampleRate = 1000 }), validate: bad("sample_rate")},
		{name: "sample_rate for containerized audio", opts: api.TurnOptions{Model: api.ModelFluxGeneralEN, SampleRate: 16000}, check: bad("sample_rate")},

		// End-of-turn ranges.
		{name: "eot_threshold below 0.5", opts: with(func(o *api.TurnOptions) { o.EOTThreshold = 0.49 }), validate: bad("eot_threshold")},
		{name: "eot_threshold above 1", opts: with(func(o *api.TurnOptions) { o.EOTThreshold = 1.01 }), validate: bad("eot_threshold")},
		{name: "eot_threshold negative", opts: with(func(o *api.TurnOptions) { o.EOTThreshold = -0.7 }), validate: bad("eot_threshold")},
		{name: "eager below 0.3", opts: with(func(o *api.TurnOptions) { o.EagerEOTThreshold = 0.29 }), validate: bad("eager_eot_threshold")},
		{name: "eager above 0.9", opts: with(func(o *api.TurnOptions) { o.EOTThreshold, o.EagerEOTThreshold = 1, 0.95 }), validate: bad("eager_eot_threshold")},
		{name: "eager above eot", opts: with(func(o *api.TurnOptions) { o.EOTThreshold, o.EagerEOTThreshold = 0.6, 0.65 }), validate: bad("eager_eot_threshold")},
		{name: "eager above default eot", opts: with(func(o *api.TurnOptions) { o.EagerEOTThreshold = 0.75 }), validate: bad("eager_eot_threshold")},
		{name: "eot_timeout_ms below 500", opts: with(func(o *api.TurnOptions) { o.EOTTimeoutMS = 499 }), validate: bad("eot_timeout_ms")},
		{name: "eot_timeout_ms above 60000", opts: with(func(o *api.TurnOptions) { o.EOTTimeoutMS = 60001 }), validate: bad("eot_timeout_ms")},

		// Keyterms, language hints, redaction.
		{name: "empty keyterm", opts: with(func(o *api.TurnOptions) { o.Keyterms = []string{" "} }), validate: bad("keyterm")},
		{name: "keyterm with weight", opts: with(func(o *api.TurnOptions) { o.Keyterms = []string{"Earshot:2"} }), validate: bad("keyterm")},
		{name: "language hint with the english model", opts: with(func(o *api.TurnOptions) { o.LanguageHints = []string{"en"} }), validate: invalidParam("language_hint")},
		{name: "bad language hint", opts: api.TurnOptions{Model: api.ModelFluxGeneralMulti, LanguageHints: []string{"english!"}}, validate: invalidParam("language_hint")},
		{name: "language multi does not speak", opts: api.TurnOptions{Model: api.ModelFluxGeneralMulti, LanguageHints: []string{"en", "sv"}}, validate: invalidParam("language_hint")},
		{name: "over 100 keyterms", opts: with(func(o *api.TurnOptions) { o.Keyterms = keyterms101 }), validate: bad("keyterm")},
		{name: "redact class of /v1/listen", opts: with(func(o *api.TurnOptions) { o.Redact = []string{"pci"} }), validate: bad("redact")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOptionErr(t, "Validate", tt.opts.Validate(), tt.validate)
			want := tt.check
			if tt.validate != nil {
				want = tt.validate
			}
			checkOptionErr(t, "CheckRequest", tt.opts.CheckRequest(), want)
		})
	}
}

func TestCheckTurnModel(t *testing.T) {
	for _, m := range api.TurnModels {
		if err := api.CheckTurnModel(m); err != nil {
			t.Errorf("%s is named by the specification but refused: %v", m, err)
		}
		// A model of one endpoint is refused on the other.
		if err := api.CheckListenModel(m); !errors.Is(err, api.ErrInvalidOptions) {
			t.Errorf("%s accepted on /v1/listen", m)
		}
	}
	for _, m := range api.ListenModels {
		if err := api.CheckTurnModel(m); !errors.Is(err, api.ErrInvalidOptions) {
			t.Errorf("%s accepted on /v2/listen", m)
		}
	}
}

func TestTurnQueryEncoding(t *testing.T) {
	tests := []struct {
		name string
		opts api.TurnOptions
		want url.Values
	}{
		{"zero sends nothing", api.TurnOptions{}, url.Values{}},
		{"wire reference URL", en(), url.Values{"model": {"flux-general-en"}, "encoding": {"linear16"}, "sample_rate": {"16000"}}},
		{"containerized: no encoding, no sample_rate", api.TurnOptions{Model: api.ModelFluxGeneralEN}, url.Values{"model": {"flux-general-en"}}},
		{"thresholds in shortest form", api.TurnOptions{EOTThreshold: 0.8, EagerEOTThreshold: 0.55, EOTTimeoutMS: 3000},
			url.Values{"eot_threshold": {"0.8"}, "eager_eot_threshold": {"0.55"}, "eot_timeout_ms": {"3000"}}},
		{"repeated keyterm and language_hint", api.TurnOptions{Keyterms: []string{"a", "b c"}, LanguageHints: []string{"en", "es"}},
			url.Values{"keyterm": {"a", "b c"}, "language_hint": {"en", "es"}}},
		{"booleans only when true", api.TurnOptions{ProfanityFilter: true, Numerals: false, MipOptOut: true},
			url.Values{"profanity_filter": {"true"}, "mip_opt_out": {"true"}}},
		{"redact and tag repeated", api.TurnOptions{Redact: []string{"numbers"}, Tag: []string{"x", "y"}},
			url.Values{"redact": {"numbers"}, "tag": {"x", "y"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.opts.Query(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Query() = %v, want %v", got, tt.want)
			}
		})
	}
}

// randomTurnOptions returns valid options drawn at random.
func randomTurnOptions(r *rand.Rand) api.TurnOptions {
	o := api.TurnOptions{Model: api.TurnModels[r.IntN(len(api.TurnModels))]}
	if r.IntN(2) == 0 {
		o.Encoding = api.TurnEncodings[r.IntN(len(api.TurnEncodings))]
		o.SampleRate = []int{8000, 16000, 48000}[r.IntN(3)]
	}
	if r.IntN(2) == 0 {
		o.EOTThreshold = 0.5 + float64(r.IntN(51))/100
	}
	if r.IntN(2) == 0 {
		o.EagerEOTThreshold = 0.3 + float64(r.IntN(int((o.EffectiveEOTThreshold()-0.3)*100)+1))/100
		o.EagerEOTThreshold = min(o.EagerEOTThreshold, 0.9, o.EffectiveEOTThreshold())
	}
	if r.IntN(2) == 0 {
		o.EOTTimeoutMS = 500 + r.IntN(59501)
	}
	for range r.IntN(3) {
		o.Keyterms = append(o.Keyterms, []string{"Earshot", "a&b=c", "São Paulo", "10:30 am"}[r.IntN(4)])
	}
	if o.Model == api.ModelFluxGeneralMulti {
		for range r.IntN(3) {
			o.LanguageHints = append(o.LanguageHints, []string{"en", "es", "de", "pt-BR"}[r.IntN(4)])
		}
	}
	o.ProfanityFilter = r.IntN(2) == 0
	o.Numerals = r.IntN(2) == 0
	o.MipOptOut = r.IntN(2) == 0
	if r.IntN(3) == 0 {
		o.Redact = []string{api.TurnRedactions[r.IntN(2)]}
	}
	if r.IntN(3) == 0 {
		o.Tag = []string{"run 1"}
	}
	return o
}

func TestTurnQueryRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for i := range 500 {
		o := randomTurnOptions(r)
		if err := o.CheckRequest(); err != nil {
			t.Fatalf("case %d: random options invalid: %v (%+v)", i, err, o)
		}
		// Through the URL form, as it travels.
		q, err := url.ParseQuery(o.Query().Encode())
		if err != nil {
			t.Fatal(err)
		}
		got, unknown, err := api.ParseTurnOptions(q)
		if err != nil {
			t.Fatalf("case %d: ParseTurnOptions: %v (%v)", i, err, q)
		}
		if len(unknown) != 0 {
			t.Errorf("case %d: unknown %v", i, unknown)
		}
		if !reflect.DeepEqual(got, o) {
			t.Fatalf("case %d: round trip\n got %+v\nwant %+v", i, got, o)
		}
	}
}

func TestParseTurnOptionsValues(t *testing.T) {
	tests := []struct {
		name  string
		query string
		want  api.TurnOptions
	}{
		{"containerized", "model=flux-general-en", api.TurnOptions{Model: "flux-general-en"}},
		{"encoding lower-cased, values trimmed", "model=%20flux-general-en&encoding=LINEAR16&sample_rate=16000",
			api.TurnOptions{Model: "flux-general-en", Encoding: "linear16", SampleRate: 16000}},
		{"language_hint and language_hints both read", "model=flux-general-multi&language_hint=en&language_hints=es",
			api.TurnOptions{Model: "flux-general-multi", LanguageHints: []string{"en", "es"}}},
		{"empty repeated values dropped", "model=flux-general-en&keyterm=&keyterm=Earshot",
			api.TurnOptions{Model: "flux-general-en", Keyterms: []string{"Earshot"}}},
		{"booleans any case", "model=flux-general-en&numerals=TRUE&profanity_filter=false",
			api.TurnOptions{Model: "flux-general-en", Numerals: true}},
		{"thresholds", "model=flux-general-en&eot_threshold=0.9&eager_eot_threshold=0.4&eot_timeout_ms=800",
			api.TurnOptions{Model: "flux-general-en", EOTThreshold: 0.9, EagerEOTThreshold: 0.4, EOTTimeoutMS: 800}},
		{"redact lower-cased", "model=flux-general-en&redact=NUMBERS",
			api.TurnOptions{Model: "flux-general-en", Redact: []string{"numbers"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := api.ParseTurnOptions(q)
			if err != nil {
				t.Fatalf("ParseTurnOptions: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseTurnOptionsErrors(t *testing.T) {
	invalid := func(p string) *wantOpt {
		return &wantOpt{Param: p, Status: http.StatusBadRequest, Code: api.CodeInvalidQueryParameter}
	}
	tests := []struct {
		query string
		want  *wantOpt
	}{
		// The parameters the specification says are unavailable.
		{"model=flux-general-en&smart_format=true", bad("smart_format")},
		{"model=flux-general-en&smart_format=false", bad("smart_format")},
		{"model=flux-general-en&diarize_model=latest", bad("diarize_model")},
		{"model=flux-general-en&punctuate=true", bad("punctuate")},
		// Values of the wrong type.
		{"model=flux-general-en&eot_threshold=high", invalid("eot_threshold")},
		{"model=flux-general-en&eot_threshold=NaN", invalid("eot_threshold")},
		{"model=flux-general-en&eager_eot_threshold=Inf", invalid("eager_eot_threshold")},
		{"model=flux-general-en&eot_timeout_ms=1.5", invalid("eot_timeout_ms")},
		{"model=flux-general-en&encoding=linear16&sample_rate=abc", invalid("sample_rate")},
		{"model=flux-general-en&numerals=yes", invalid("numerals")},
		{"model=flux-general-en&mip_opt_out=1", invalid("mip_opt_out")},
		// Zero is a value given, not the default.
		{"model=flux-general-en&eot_threshold=0", bad("eot_threshold")},
		{"model=flux-general-en&eot_timeout_ms=0", invalid("eot_timeout_ms")},
		{"model=flux-general-en&encoding=linear16&sample_rate=-16000", invalid("sample_rate")},
		// Validate's rules apply.
		{"", bad("model")},
		{"model=flux", bad("model")},
		{"model=nova-3", bad("model")},
		{"model=flux-general-en&language_hint=en", invalidParam("language_hint")},
		{"model=flux-general-multi&language_hints=xx", invalidParam("language_hint")},
		{"model=flux-general-en&eot_threshold=0.4", bad("eot_threshold")},
		{"model=flux-general-en&eager_eot_threshold=0.8", bad("eager_eot_threshold")},
		{"model=flux-general-en&eot_timeout_ms=70000", bad("eot_timeout_ms")},
		{"model=flux-general-en&encoding=linear16", bad("sample_rate")},
		{"model=flux-general-en&keyterm=Earshot:5", bad("keyterm")},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			o, _, err := api.ParseTurnOptions(q)
			checkOptionErr(t, "ParseTurnOptions", err, tt.want)
			if !reflect.DeepEqual(o, api.TurnOptions{}) {
				t.Errorf("options %+v returned with an error", o)
			}
		})
	}
}

func TestParseTurnOptionsUnknown(t *testing.T) {
	q := url.Values{"model": {"flux-general-en"}, "zebra": {"1"}, "language": {"en"}, "Model": {"x"}}
	o, unknown, err := api.ParseTurnOptions(q)
	if err != nil {
		t.Fatalf("unknown parameters must not be an error: %v", err)
	}
	if want := []string{"Model", "language", "zebra"}; !slices.Equal(unknown, want) {
		t.Errorf("unknown = %v, want %v", unknown, want)
	}
	if o.Model != api.ModelFluxGeneralEN {
		t.Errorf("options %+v", o)
	}
	// An unavailable parameter is refused, and not also listed as unknown.
	_, unknown, err = api.ParseTurnOptions(url.Values{"model": {"flux-general-en"}, "punctuate": {"true"}, "zebra": {"1"}})
	if err == nil || !slices.Equal(unknown, []string{"zebra"}) {
		t.Errorf("err %v, unknown %v", err, unknown)
	}
}

func TestTurnOptionsWithConfigure(t *testing.T) {
	base := en()
	base.EOTThreshold = 0.7
	base.Keyterms = []string{"old"}
	ms := 2000
	tests := []struct {
		name string
		from api.TurnOptions
		c    api.Configure
		want func(*api.TurnOptions)
		err  *wantOpt
	}{
		{name: "empty changes nothing", from: base, want: func(*api.TurnOptions) {}},
		{name: "threshold only, keyterms unchanged", from: base, c: api.Configure{Thresholds: api.Thresholds{EOTThreshold: f64p(0.9)}},
			want: func(o *api.TurnOptions) { o.EOTThreshold = 0.9 }},
		{name: "timeout and keyterms", from: base, c: api.Configure{Thresholds: api.Thresholds{EOTTimeoutMS: &ms}, Keyterms: []string{"new", "terms"}},
			want: func(o *api.TurnOptions) { o.EOTTimeoutMS = 2000; o.Keyterms = []string{"new", "terms"} }},
		{name: "empty keyterms clears them", from: base, c: api.Configure{Keyterms: []string{}},
			want: func(o *api.TurnOptions) { o.Keyterms = []string{} }},
		{name: "eager enabled", from: base, c: api.Configure{Thresholds: api.Thresholds{EagerEOTThreshold: f64p(0.4)}},
			want: func(o *api.TurnOptions) { o.EagerEOTThreshold = 0.4 }},
		{name: "eot out of range", from: base, c: api.Configure{Thresholds: api.Thresholds{EOTThreshold: f64p(0.2)}}, err: bad("eot_threshold")},
		{name: "eot zero", from: base, c: api.Configure{Thresholds: api.Thresholds{EOTThreshold: f64p(0)}}, err: bad("eot_threshold")},
		{name: "eager above the eot in force", from: base, c: api.Configure{Thresholds: api.Thresholds{EagerEOTThreshold: f64p(0.8)}}, err: bad("eager_eot_threshold")},
		{name: "hints with the english model", from: base, c: api.Configure{LanguageHints: []string{"es"}}, err: invalidParam("language_hint")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.from
			got, err := tt.from.WithConfigure(tt.c)
			if tt.err != nil {
				checkOptionErr(t, "WithConfigure", err, tt.err)
				if !reflect.DeepEqual(got, before) {
					t.Errorf("a refused Configure changed the options: %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := before
			want.Keyterms = slices.Clone(before.Keyterms)
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v\nwant %+v", got, want)
			}
			if !reflect.DeepEqual(tt.from, before) {
				t.Error("WithConfigure changed its receiver")
			}
		})
	}
}

func TestResolveFlux(t *testing.T) {
	tests := []struct {
		name, model string
		dir         api.Direction
		voice, lang string
		want        string
		wantErr     bool
	}{
		{name: "transcribe default", model: "flux", dir: api.Transcribe, want: api.ModelFluxGeneralEN},
		{name: "transcribe english region tag", model: "Flux", dir: api.Transcribe, lang: "en-GB", want: api.ModelFluxGeneralEN},
		{name: "transcribe spanish", model: "flux", dir: api.Transcribe, lang: "es", want: api.ModelFluxGeneralMulti},
		{name: "synthesize", model: "FLUX", dir: api.Synthesize, voice: "Kit", want: "flux-kit-en"},
		{name: "synthesize language", model: "flux", dir: api.Synthesize, voice: "kit", lang: "en_US", want: "flux-kit-en"},
		{name: "synthesize without voice", model: "flux", dir: api.Synthesize, wantErr: true},
		{name: "other names unchanged", model: "nova-3", dir: api.Transcribe, want: "nova-3"},
		{name: "full flux names unchanged", model: "flux-general-multi", dir: api.Synthesize, want: "flux-general-multi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := api.ResolveFlux(tt.model, tt.dir, tt.voice, tt.lang)
			if tt.wantErr {
				if !errors.Is(err, api.ErrInvalidOptions) {
					t.Errorf("err = %v, want an option error", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ResolveFlux = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestEffectiveTurnSettings(t *testing.T) {
	var o api.TurnOptions
	if o.EffectiveEOTThreshold() != 0.7 || o.EffectiveEOTTimeoutMS() != 5000 {
		t.Errorf("defaults %v %v", o.EffectiveEOTThreshold(), o.EffectiveEOTTimeoutMS())
	}
	o.EOTThreshold, o.EOTTimeoutMS = 0.9, 800
	if o.EffectiveEOTThreshold() != 0.9 || o.EffectiveEOTTimeoutMS() != 800 {
		t.Errorf("set %v %v", o.EffectiveEOTThreshold(), o.EffectiveEOTTimeoutMS())
	}
}
