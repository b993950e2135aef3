//go:build !screenshots

package main

import (
	"context"

	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/ui"
)

// screenshotSetup is what a build with the screenshots tag sets up for
// scripts/screenshots (main_screenshots.go). This build takes none: the
// app opens as it was configured.
type screenshotSetup struct{}

func (screenshotSetup) prepare(context.Context, *sessions.WorkspaceConfig, *ui.Options) (appShow, error) {
	return screenshot{}, nil
}

type screenshot struct{}

func (screenshot) show(*ui.App) error { return nil }
