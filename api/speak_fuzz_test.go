package api_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"slices"
	"testing"

	"github.com/earshot-app/earshot/api"
)

// speakMessageSeeds are the documented shapes of the server messages of
// both speak WebSockets, plus awkward near-misses.
var speakMessageSeeds = []string{
	wireSpeakMetadata, wireFlushed, wireCleared, wireSpeakWarnReal, wireSpeakWarnSpec, wireSpeakError,
	wireSpeechConnected, wireSpeechStarted, wireSpeechFlushed, wireSpeechMetadata, wireSpeechInterrupted,
	wireSessionMetadata, wireSpeechWarning, wireSpeechUnknownWarn, wireSpeechError,
	`{"type":"Metadata","additional_model_uuids":["a",null]}`,
	`{"type":"Flushed","sequence_id":-1,"speech_id":"x"}`,
	`{"type":"Flushed","sequence_id":1e400}`,
	`{"type":"Warning","warn_code":"A","code":"B","warn_msg":"","description":"d"}`,
	`{"type":"Warning","warn_code":null}`,
	`{"type":"SpeechMetadata","audio_duration_ms":1.5}`,
	`{"type":"SpeechMetadata","controls_applied":null}`,
	`{"type":"SpeechInterrupted","audio_played_ms":0,"text_spoken":"\ud800"}`,
	`{"type":"Connected","model_uuids":null}`,
	`{"type":"Error","variant":"v","message":"m"}`,
	`{"type":"Flushed","type":"Cleared"}`,
	`{"type":null}`, `[]`, `"x"`, ``, `{"type":"\u00e9"}`,
	"{\"type\":\"Warning\",\"warn_msg\":\"\xff\xfe\"}",
}

func FuzzDecodeSpeakMessage(f *testing.F) {
	for _, s := range speakMessageSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecoded(t, data, api.DecodeSpeakMessage)
	})
}

func FuzzDecodeSpeechMessage(f *testing.F) {
	for _, s := range speakMessageSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecoded(t, data, api.DecodeSpeechMessage)
	})
}

func FuzzDecodeSpeakClientMessage(f *testing.F) {
	for _, s := range []string{
		`{"type":"Speak","text":"Hello"}`, `{"type":"Speak"}`, `{"type":"Speak","text":null}`, `{"type":"Speak","text":7}`,
		`{"type":"Flush"}`, `{"type":"Clear"}`, `{"type":"Close"}`, `{"type":"Interrupt"}`,
		`{"type":"Configure","speed":1.05}`, `{"type":"Configure","speed":"1.05"}`, `{"type":"Configure","speed":1e999}`,
		`{"type":"Configure"}`, `{"type":"KeepAlive"}`, `{"type":""}`, `[]`, ``, "{\"type\":\"Speak\",\"text\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, decode := range []func([]byte) (api.SpeakClientMessage, error){api.DecodeSpeakClientMessage, api.DecodeSpeechClientMessage} {
			in := bytes.Clone(data)
			m, err := decode(data)
			if !bytes.Equal(in, data) {
				t.Fatal("the decoder changed its input")
			}
			if (m == nil) == (err == nil) {
				t.Fatalf("message %#v and error %v", m, err)
			}
			if err != nil {
				continue
			}
			if u, ok := m.(*api.UnknownMessage); ok {
				if !bytes.Equal(u.Raw, data) {
					t.Fatal("an unknown message does not keep its bytes")
				}
				continue
			}
			// A known message the engine re-encodes reads back the same,
			// unless it carries a speed that cannot be written.
			enc, err := json.Marshal(m)
			if err != nil {
				if _, ok := m.(*api.SpeechConfigure); ok {
					continue
				}
				t.Fatalf("encode %#v: %v", m, err)
			}
			again, err := decode(enc)
			if err != nil || reflect.TypeOf(again) != reflect.TypeOf(m) {
				t.Fatalf("%#v through %s became %#v, %v", m, enc, again, err)
			}
		}
	})
}

// speakQuerySeeds are queries of both speak endpoints, valid and not.
var speakQuerySeeds = []string{
	"", "model=aura-2-thalia-en&encoding=linear16&sample_rate=24000",
	"model=flux-kit-en&encoding=mulaw&sample_rate=8000&speed=1.05&expressivity=-2&tag=a&tag=b&mip_opt_out=true",
	"model=flux-kit-en&encoding=mp3&bit_rate=48000&container=none&callback=https://e.com/c&callback_method=PUT&priority=low",
	"speed=NaN", "speed=-0", "speed=1e309", "sample_rate=-1", "sample_rate=99999999999999999999", "expressivity=0x1",
	"mip_opt_out=TRUE", "model=%00", "model=flux-kit-en&unknown=1", "model=flux-kit-en;x=1", "%zz",
}

func FuzzParseSpeakOptions(f *testing.F) {
	fuzzQuery(f, speakQuerySeeds, func(t *testing.T, q url.Values) {
		o, unknown, err := api.ParseSpeakOptions(q)
		if !slices.IsSorted(unknown) {
			t.Fatalf("unknown %v is not sorted", unknown)
		}
		if err != nil {
			if !errors.Is(err, api.ErrInvalidOptions) {
				t.Fatalf("%v is not an option error", err)
			}
			return
		}
		for _, mode := range []api.Mode{api.Batch, api.Streaming} {
			if o.Validate(mode) != nil {
				continue
			}
			// Valid options survive their own query.
			back, unknown, err := api.ParseSpeakOptions(o.Query())
			if err != nil || len(unknown) != 0 || back.Validate(mode) != nil {
				t.Fatalf("%+v does not survive its query %s: %v %v", o, o.Query().Encode(), unknown, err)
			}
		}
	})
}

func FuzzParseSpeakV2Options(f *testing.F) {
	fuzzQuery(f, speakQuerySeeds, func(t *testing.T, q url.Values) {
		for _, mode := range []api.Mode{api.Batch, api.Streaming} {
			o, unknown, err := api.ParseSpeakV2Options(q, mode)
			if err != nil {
				if !errors.Is(err, api.ErrInvalidOptions) {
					t.Fatalf("%v is not an option error", err)
				}
				continue
			}
			if mode == api.Streaming && len(unknown) > 0 {
				t.Fatalf("the socket accepted unknown parameters %v", unknown)
			}
			if err := o.Validate(mode); err != nil {
				t.Fatalf("parsed options %+v do not validate: %v", o, err)
			}
			sq := o.StreamQuery()
			for k := range sq {
				if !slices.Contains(speakV2StreamParams, k) {
					t.Fatalf("StreamQuery of %+v carries %s", o, k)
				}
			}
			if mode == api.Streaming {
				back, _, err := api.ParseSpeakV2Options(sq, api.Streaming)
				if err != nil || !reflect.DeepEqual(back, o) {
					t.Fatalf("%+v through %s became %+v, %v", o, sq.Encode(), back, err)
				}
			}
		}
	})
}
