package sessions

import (
	"context"
	"errors"
	"net/url"
	"reflect"
	"testing"

	"github.com/earshot-app/earshot/api"
)

type fakeLister struct {
	list *api.ModelList
	err  error
	ep   api.Endpoint
}

func (f *fakeLister) Models(context.Context, bool) (*api.ModelList, error) { return f.list, f.err }
func (f *fakeLister) Endpoint() api.Endpoint                               { return f.ep }

func TestServiceInfo(t *testing.T) {
	base, _ := url.Parse("http://user:secret@127.0.0.1:4000")
	f := &fakeLister{ep: api.Endpoint{Base: base}, list: &api.ModelList{
		STT: []api.STTModel{
			{Name: "nova-3", Architecture: "pocketsphinx", Engine: "pocketsphinx 5prealpha", Languages: []string{"en"}, Batch: true, Streaming: true},
			{Name: "nova-2", Architecture: "nova-2", Languages: []string{"en", "es"}, Batch: true},
		},
		TTS: []api.TTSModel{{Name: "thalia", CanonicalName: "aura-2-thalia-en", Architecture: "aura-2", Languages: []string{"en"}}},
	}}
	info, err := NewService(f, "Local engine").Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := ServiceInfo{Backend: "Local engine", URL: "http://127.0.0.1:4000", Models: []ModelInfo{
		{Name: "nova-3", Kind: KindSpeechToText, Engine: "pocketsphinx 5prealpha", Languages: []string{"en"}, Batch: true, Streaming: true},
		{Name: "nova-2", Kind: KindSpeechToText, Engine: "nova-2", Languages: []string{"en", "es"}, Batch: true},
		{Name: "aura-2-thalia-en", Kind: KindTextToSpeech, Engine: "aura-2", Languages: []string{"en"}, Batch: true, Streaming: true},
	}}
	if !reflect.DeepEqual(info, want) {
		t.Errorf("Info =\n%+v\nwant\n%+v", info, want)
	}
}

func TestServiceInfoError(t *testing.T) {
	boom := &api.Error{Status: 401, Code: api.CodeInvalidAuth}
	info, err := NewService(&fakeLister{err: boom}, "Hosted service").Info(context.Background())
	if !errors.Is(err, api.ErrUnauthorized) {
		t.Fatalf("err = %v, want one matching ErrUnauthorized", err)
	}
	if info.Backend != "Hosted service" || info.URL != "https://api.deepgram.com" {
		t.Errorf("info on error = %+v; want the backend and URL still described", info)
	}
}
