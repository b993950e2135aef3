package store

import "testing"

// TestKeepAudioSetting: audio is kept unless the person turned it off,
// and turning it off is remembered.
func TestKeepAudioSetting(t *testing.T) {
	d := openTest(t)
	ctx := t.Context()
	s, err := d.LoadSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !s.KeepAudio {
		t.Fatal("a new installation does not keep the audio of transcriptions")
	}
	s.KeepAudio = false
	if err := d.SaveSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	if s, err = d.LoadSettings(ctx); err != nil {
		t.Fatal(err)
	}
	if s.KeepAudio {
		t.Error("KeepAudio turned off came back on")
	}
	// A database written before the setting existed keeps audio.
	if _, err := d.w.ExecContext(ctx, `DELETE FROM settings WHERE key = 'keep_audio'`); err != nil {
		t.Fatal(err)
	}
	if s, err = d.LoadSettings(ctx); err != nil {
		t.Fatal(err)
	}
	if !s.KeepAudio {
		t.Error("with no saved keep_audio, KeepAudio is off")
	}
}
