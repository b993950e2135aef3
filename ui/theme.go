package ui

import (
	"image/color"
	"strconv"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// speakerColorPrefix starts the theme colour names of speakers; the name
// of speaker n (counted from 0) ends with n modulo len(speakerPalette).
const speakerColorPrefix = "earshot-speaker-"

// speakerPalette holds one colour per speaker, for dark and light
// backgrounds: hues far apart, none of them the red of an error, each
// readable as bold text on the theme's background.
var speakerPalette = []struct{ dark, light color.NRGBA }{
	{color.NRGBA{R: 0x5c, G: 0xa8, B: 0xff, A: 0xff}, color.NRGBA{R: 0x1a, G: 0x5f, B: 0xc4, A: 0xff}}, // blue
	{color.NRGBA{R: 0xf2, G: 0xa6, B: 0x3b, A: 0xff}, color.NRGBA{R: 0xa8, G: 0x5a, B: 0x00, A: 0xff}}, // amber
	{color.NRGBA{R: 0x4c, G: 0xc9, B: 0x8a, A: 0xff}, color.NRGBA{R: 0x12, G: 0x7a, B: 0x48, A: 0xff}}, // green
	{color.NRGBA{R: 0xe0, G: 0x7b, B: 0xd2, A: 0xff}, color.NRGBA{R: 0x9c, G: 0x2f, B: 0x8c, A: 0xff}}, // magenta
	{color.NRGBA{R: 0x3f, G: 0xcf, B: 0xd0, A: 0xff}, color.NRGBA{R: 0x0b, G: 0x75, B: 0x78, A: 0xff}}, // teal
	{color.NRGBA{R: 0xb3, G: 0x9d, B: 0xff, A: 0xff}, color.NRGBA{R: 0x5b, G: 0x3f, B: 0xc0, A: 0xff}}, // violet
}

// speakerColorNames are the theme colour names of speakerPalette.
var speakerColorNames = func() []fyne.ThemeColorName {
	names := make([]fyne.ThemeColorName, len(speakerPalette))
	for i := range names {
		names[i] = fyne.ThemeColorName(speakerColorPrefix + strconv.Itoa(i))
	}
	return names
}()

// speakerColor names the colour of speaker n (counted from 0).
func speakerColor(n int) fyne.ThemeColorName {
	if n < 0 {
		n = -n
	}
	return speakerColorNames[n%len(speakerColorNames)]
}

// appTheme is the theme in use with Earshot's own colours added: one per
// speaker, so that a caption's speaker reads at a glance. Every other
// name is answered by the theme it wraps.
type appTheme struct {
	fyne.Theme
}

// newAppTheme wraps base; nil means Fyne's default theme.
func newAppTheme(base fyne.Theme) fyne.Theme {
	if base == nil {
		base = theme.DefaultTheme()
	}
	if t, ok := base.(appTheme); ok {
		return t
	}
	return appTheme{Theme: base}
}

// Color implements fyne.Theme.
func (t appTheme) Color(name fyne.ThemeColorName, variant fyne.ThemeVariant) color.Color {
	for i, n := range speakerColorNames {
		if n == name {
			if variant == theme.VariantLight {
				return speakerPalette[i].light
			}
			return speakerPalette[i].dark
		}
	}
	return t.Theme.Color(name, variant)
}
