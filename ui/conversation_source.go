package ui

import (
	"context"
	"path/filepath"

	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// fileChoicePrefix marks the source picker's entry of a recording.
const fileChoicePrefix = "Recording: "

// fileChoice is the source id of the recording in the picker.
const fileChoice = "\x00file"

// convSource is the Conversation tab's source picker: a microphone, or a
// recording played at its own pace as if it were spoken now.
type convSource struct {
	picker   *widget.Select
	openFile *widget.Button

	ids  []string // device ids of the picker's options; "" default, fileChoice for the recording
	file string   // the recording chosen, "" for none
}

// build creates the picker and the Open file button, which calls onOpen.
func (s *convSource) build(onOpen func()) (*widget.Select, *widget.Button) {
	s.picker = widget.NewSelect([]string{defaultMic}, nil)
	s.picker.Selected = defaultMic
	s.ids = []string{""}
	s.openFile = widget.NewButtonWithIcon("Open file…", theme.FolderOpenIcon(), onOpen)
	return s.picker, s.openFile
}

func (s *convSource) enable(on bool) {
	enable(s.picker, on)
	enable(s.openFile, on)
}

// setMicrophones fills the picker with devs, keeping the recording
// chosen; saved is the settings' microphone.
func (s *convSource) setMicrophones(devs []device.Device, saved string) {
	selected := s.selected()
	options, ids := micChoices(devs, saved)
	if s.file != "" {
		options = append(options, fileChoicePrefix+filepath.Base(s.file))
		ids = append(ids, fileChoice)
	}
	s.picker.Options, s.ids = options, ids
	if selected == "" {
		selected = saved
	}
	s.choose(selected)
}

// choose shows the source id in the picker.
func (s *convSource) choose(id string) {
	selectDevice(s.picker, s.ids, id, defaultMic)
}

// selected is the source id chosen.
func (s *convSource) selected() string {
	if i := s.picker.SelectedIndex(); i >= 0 && i < len(s.ids) {
		return s.ids[i]
	}
	return ""
}

// setMicrophones fills the source picker, keeping the recording chosen.
func (c *conversationTab) setMicrophones(devs []device.Device) {
	c.ui.do(func() {
		c.source.setMicrophones(devs, c.settings.InputDevice)
	})
}

// settingsChanged takes saved settings: the microphone they name.
func (c *conversationTab) settingsChanged(s store.Settings) {
	c.ui.do(func() {
		c.settings = s
		if c.source.selected() != fileChoice && !c.starting && c.live == nil {
			c.setMicrophones(c.app.mics)
		}
	})
}

// onOpenFile asks for a recording to converse with, played at real time.
func (c *conversationTab) onOpenFile() {
	if c.live != nil || c.starting {
		return
	}
	c.app.openLocalFile("a recording to play as the conversation", audioExtensions, c.chooseFile)
}

// chooseFile makes the recording at path the source, once its start has
// been read as audio off the UI goroutine: a file that is not audio is
// refused now, not when Start plays it.
func (c *conversationTab) chooseFile(path string) {
	c.setStatus("Reading "+filepath.Base(path)+"…", widget.MediumImportance)
	c.app.goAsync(func(ctx context.Context) {
		err := sessions.CheckAudioFile(ctx, path)
		c.app.onUI(func() {
			if err != nil {
				c.showError("open a recording", err)
				return
			}
			c.useFile(path)
		})
	})
}

// useFile makes the recording at path, checked, the source.
func (c *conversationTab) useFile(path string) {
	c.source.file = path
	c.setMicrophones(c.app.mics)
	c.source.choose(fileChoice)
	c.setStatus("Press Start to play "+filepath.Base(path)+" at its own pace, as if it were spoken now.", widget.MediumImportance)
}
