package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"

	"github.com/earshot-app/earshot/assets"
)

// icon is the app icon as a Fyne resource, as `fyne bundle` would write it.
// It is built here rather than in assets so that assets stays free of Fyne.
var icon fyne.Resource = fyne.NewStaticResource(assets.IconName, assets.IconPNG())

// logo is the icon at the size the header draws it.
var logo fyne.Resource = fyne.NewStaticResource("earshot-small.png", assets.SmallIconPNG())

// micIcon is a microphone, drawn for Earshot (Fyne's theme has none); as
// a themed resource it takes the colour of the text around it.
var micIcon fyne.Resource = theme.NewThemedResource(fyne.NewStaticResource("microphone.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">
<rect x="8.5" y="2" width="7" height="12.5" rx="3.5" fill="#000000"/>
<path d="M5 11.5a7 7 0 0 0 14 0" fill="none" stroke="#000000" stroke-width="2" stroke-linecap="round"/>
<path d="M12 18.5V21.5M8.5 21.5H15.5" fill="none" stroke="#000000" stroke-width="2" stroke-linecap="round"/>
</svg>`)))
