//go:build !screenshots

package main

import (
	"context"

	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/ui"
)

// screenshot is what a build with the screenshots tag sets up for
// scripts/screenshots (main_screenshots.go). This build takes none: the
// app opens as it was configured.
type screenshot struct{}

func prepareScreenshot(context.Context, *sessions.WorkspaceConfig, *ui.Options) (screenshot, error) {
	return screenshot{}, nil
}

func (screenshot) show(*ui.App) error { return nil }
