package store

import (
	"bytes"
	"errors"
	"testing"
)

func TestAudio(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	id, err := d.CreateSession(ctx, Session{Kind: KindSynthesis, Source: "aura-2-thalia-en"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Audio(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Audio before SaveAudio: %v, want ErrNotFound", err)
	}
	first := Audio{ContentType: "audio/wav", Encoding: "linear16", SampleRate: 24000, Data: []byte("RIFF....WAVE")}
	if err := d.SaveAudio(ctx, id, first); err != nil {
		t.Fatal(err)
	}
	got, err := d.Audio(ctx, id)
	if err != nil || got.ContentType != first.ContentType || got.Encoding != first.Encoding ||
		got.SampleRate != first.SampleRate || !bytes.Equal(got.Data, first.Data) {
		t.Fatalf("Audio = %+v, %v; want %+v", got, err, first)
	}
	second := Audio{ContentType: "audio/mpeg", Encoding: "mp3", Data: []byte{0xff, 0xfb, 1, 2}}
	if err := d.SaveAudio(ctx, id, second); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Audio(ctx, id); got.Encoding != "mp3" || !bytes.Equal(got.Data, second.Data) || got.SampleRate != 0 {
		t.Errorf("a second SaveAudio did not replace the first: %+v", got)
	}

	for name, a := range map[string]Audio{
		"empty":       {ContentType: "audio/wav", Encoding: "linear16"},
		"no encoding": {ContentType: "audio/wav", Data: []byte{1}},
		"no type":     {Encoding: "linear16", Data: []byte{1}},
		"bad rate":    {ContentType: "audio/wav", Encoding: "linear16", SampleRate: -1, Data: []byte{1}},
	} {
		t.Run(name, func(t *testing.T) {
			if err := d.SaveAudio(ctx, id, a); !errors.Is(err, ErrInvalid) {
				t.Errorf("SaveAudio(%s) = %v, want ErrInvalid", name, err)
			}
		})
	}
	if err := d.SaveAudio(ctx, id+100, first); !errors.Is(err, ErrNotFound) {
		t.Errorf("SaveAudio of a missing session = %v, want ErrNotFound", err)
	}

	if err := d.DeleteSession(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Audio(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Errorf("audio outlived its session: %v", err)
	}
}
