package ui

import (
	"fyne.io/fyne/v2"

	"github.com/earshot-app/earshot/assets"
)

// icon is the app icon as a Fyne resource, as `fyne bundle` would write it.
// It is built here rather than in assets so that assets stays free of Fyne.
var icon fyne.Resource = fyne.NewStaticResource(assets.IconName, assets.IconPNG())
