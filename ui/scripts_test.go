package ui

import (
	"bytes"
	"image"
	"image/color"
	"testing"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// scriptSamples are titles a person may paste, in scripts Fyne's bundled
// fonts lack: the system's fonts must draw them (fonts-noto-core,
// fonts-noto-cjk and fonts-noto-color-emoji, which scripts/setup installs
// and the Debian package recommends).
var scriptSamples = []struct{ name, text string }{
	{"Chinese", "会议记录"},
	{"Arabic", "محضر"},
	{"emoji", "🎉🍎🙂"}, // colourful ones: Noto's microphone, say, is grey
}

// drawLabel renders text as a label, the widget History's titles are,
// on a window of a fixed size, so that two renders compare pixel for
// pixel.
func drawLabel(t *testing.T, text string) image.Image {
	t.Helper()
	w := test.NewWindow(widget.NewLabel(text))
	defer w.Close()
	w.SetPadded(false)
	w.Resize(fyne.NewSize(160, 48))
	return w.Canvas().Capture()
}

// sameShape reports whether two renders draw the same shape, wherever it
// sits: a missing glyph is drawn at the baseline of the font that lacked
// it, so the replacement character may sit higher or lower than when it
// is drawn by itself.
func sameShape(a, b image.Image) bool {
	a, b = inked(a), inked(b)
	if a.Bounds().Size() != b.Bounds().Size() {
		return false
	}
	return bytes.Equal(pixels(a), pixels(b))
}

// inked is the part of img that differs from its background (the
// top-left pixel).
func inked(img image.Image) image.Image {
	b := img.Bounds()
	bg := img.At(b.Min.X, b.Min.Y)
	box := image.Rectangle{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if img.At(x, y) != bg {
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return img.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(box)
}

func pixels(img image.Image) []byte {
	b := img.Bounds()
	out := make([]byte, 0, b.Dx()*b.Dy()*4)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			out = append(out, c.R, c.G, c.B, c.A)
		}
	}
	return out
}

// inkAndColour counts the pixels that differ from the background (the
// top-left one), and those of them that are coloured rather than grey.
func inkAndColour(img image.Image) (ink, coloured int) {
	b := img.Bounds()
	bg := color.NRGBAModel.Convert(img.At(b.Min.X, b.Min.Y)).(color.NRGBA)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			if c == bg {
				continue
			}
			ink++
			hi, lo := max(c.R, c.G, c.B), min(c.R, c.G, c.B)
			if int(hi)-int(lo) > 48 {
				coloured++
			}
		}
	}
	return ink, coloured
}

// TestScriptsDrawAsGlyphs: a Chinese, an Arabic and an emoji title are
// drawn with glyphs, not with the replacement character "�" that Fyne
// draws for a character none of its fonts has (the boxes History showed),
// and distinct characters draw distinct shapes; emoji are in colour.
func TestScriptsDrawAsGlyphs(t *testing.T) {
	a := test.NewTempApp(t)
	a.Settings().SetTheme(newAppTheme(nil))

	tofu := drawLabel(t, "\uFFFD")
	// A private-use character is in no font: it must draw as the
	// replacement character, or this test could not see a missing glyph.
	if !sameShape(drawLabel(t, "\uE000"), tofu) {
		t.Fatal("a character in no font is not drawn as U+FFFD: the test cannot tell a missing glyph")
	}
	for _, s := range scriptSamples {
		t.Run(s.name, func(t *testing.T) {
			var shapes []image.Image
			var chars []rune
			for _, r := range s.text {
				img := drawLabel(t, string(r))
				if sameShape(img, tofu) {
					t.Errorf("%q (U+%04X) is drawn as the replacement character: no font draws it", r, r)
					continue
				}
				if ink, coloured := inkAndColour(img); ink < 20 {
					t.Errorf("%q (U+%04X) draws almost nothing (%d pixels)", r, r, ink)
				} else if s.name == "emoji" && coloured < ink/4 {
					t.Errorf("%q (U+%04X) is drawn in grey (%d of %d pixels coloured): not the colour emoji font", r, r, coloured, ink)
				}
				for i, prev := range shapes {
					if sameShape(prev, img) {
						t.Errorf("%q and %q draw the same shape", chars[i], r)
					}
				}
				shapes, chars = append(shapes, img), append(chars, r)
			}
			if whole := drawLabel(t, s.text); sameShape(whole, tofu) {
				t.Errorf("%q draws as one replacement character", s.text)
			}
		})
	}
}

// TestWithMicrophoneKeepsCharacters: a sound source whose name begins
// with a letter outside ASCII keeps it whole when heard with the
// microphone (its first byte was lowered, leaving broken UTF-8 drawn as
// "��"); an empty name does not panic.
func TestWithMicrophoneKeepsCharacters(t *testing.T) {
	for name, want := range map[string]string{
		"Sound from Test speakers": "Microphone and sound from Test speakers",
		"Écran HDMI":               "Microphone and écran HDMI",
		"Ólafur's headset":         "Microphone and ólafur's headset",
		"会议室扬声器":                   "Microphone and 会议室扬声器",
		"":                         "Microphone and ",
	} {
		got := withMicrophone(name)
		if got != want || !utf8.ValidString(got) {
			t.Errorf("withMicrophone(%q) = %q, want %q", name, got, want)
		}
	}
}
