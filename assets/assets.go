// Package assets holds the files Earshot ships inside its binary: the app
// icon, drawn as icon/earshot.svg and rendered to PNGs by render-icons.sh.
//
// It exposes plain bytes and imports no UI toolkit, so that package ui stays
// the only package that imports Fyne; ui wraps these bytes in a resource.
package assets

import (
	"bytes"
	_ "embed"
)

//go:generate ./render-icons.sh

//go:embed icon/earshot-512.png
var iconPNG []byte

//go:embed icon/earshot-128.png
var smallIconPNG []byte

// IconPNG returns the app icon as a 512x512 RGBA PNG. It returns a fresh
// copy on each call, so no caller can change the icon another one sees.
func IconPNG() []byte {
	return bytes.Clone(iconPNG)
}

// SmallIconPNG returns the app icon as a 128x128 RGBA PNG, for drawing
// it small (the window's header shows it at 40 points): decoded, it takes
// 64 KiB where the large one takes 1 MiB. A fresh copy on each call.
func SmallIconPNG() []byte {
	return bytes.Clone(smallIconPNG)
}

// IconName is the file name the icon goes by when it is handed to a
// toolkit or a desktop as a named resource.
const IconName = "earshot.png"
