package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/internal/llm"
)

// The Settings tab's language model field: its address is tried when it
// is saved, off the UI goroutine, and the field says what was found
// ("Answers: 3 models: ...", "Does not answer: connection refused.");
// an edit of the field stops the try.

// llmHint is what the field says before its address is tried.
const llmHint = "Optional: an OpenAI-compatible server, such as Ollama's."

// llmTry is the last try of the field's address. Touched only on the UI
// goroutine.
type llmTry struct {
	addr   string             // the address tried, "" for none
	cancel context.CancelFunc // stops the try under way; nil when none is
	err    error              // why the server cannot be used, once known
}

// tryLLM tries the saved address addr; "" puts the field back as it was.
func (t *settingsTab) tryLLM(addr string) {
	t.stopLLMTry()
	t.llmTry = llmTry{addr: addr}
	if addr == "" {
		t.setLLMHint(llmHint)
		return
	}
	ctx, cancel := context.WithCancel(t.app.ctx)
	t.llmTry.cancel = cancel
	t.setLLMHint("Trying the address…")
	started := t.app.goAsync(func(context.Context) {
		models, err := t.app.ws.TryLLM(ctx, addr)
		t.app.onUI(func() {
			if ctx.Err() != nil {
				return // the field changed, or another try began
			}
			cancel()
			t.llmTry.cancel, t.llmTry.err = nil, err
			if err != nil {
				t.app.log.Info("the language model server cannot be used", "err", err)
				t.setLLMHint(llmFieldWords(err))
				if t.status.Text == "Saved." {
					t.setStatus("Saved, but "+lowerFirst(plainError(err)), widget.WarningImportance)
				}
			} else {
				t.setLLMHint(modelsWords(models))
			}
			_ = t.llm.Validate() // the field's icon follows the verdict
		})
	})
	if !started {
		cancel()
		t.llmTry.cancel = nil
	}
}

// stopLLMTry stops the try under way, if any.
func (t *settingsTab) stopLLMTry() {
	if t.llmTry.cancel != nil {
		t.llmTry.cancel()
		t.llmTry.cancel = nil
	}
}

// llmEdited follows a change of the field: the verdict on another
// address no longer holds.
func (t *settingsTab) llmEdited(text string) {
	if strings.TrimSpace(text) == t.llmTry.addr {
		return // the same address, set again
	}
	t.stopLLMTry()
	t.llmTry = llmTry{}
	t.setLLMHint(llmHint)
}

// checkLLM is the field's verdict: the address's form, then what trying
// it found.
func (t *settingsTab) checkLLM(s string) error {
	if err := checkLLMURL(s); err != nil {
		return err
	}
	if t.llmTry.err != nil && strings.TrimSpace(s) == t.llmTry.addr {
		return errors.New(llmFieldWords(t.llmTry.err))
	}
	return nil
}

func (t *settingsTab) setLLMHint(text string) {
	t.llmItem.HintText = text
	t.llmForm.Refresh()
}

// llmFieldWords says under the field why the server cannot be used:
// "Does not answer: connection refused." (the field names the server).
func llmFieldWords(err error) string {
	var le *llm.Error
	if errors.As(err, &le) {
		return sentence(le.Reason())
	}
	return plainError(err)
}

// modelsWords says under the field what the server offers.
func modelsWords(models []string) string {
	const shown = 3
	s := "Answers: " + plural(len(models), "model") + ": " + strings.Join(models[:min(len(models), shown)], ", ")
	if len(models) > shown {
		s += fmt.Sprintf(" and %d more", len(models)-shown)
	}
	return s + "."
}
