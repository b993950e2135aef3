package sessions

import (
	"context"
	"errors"

	"github.com/earshot-app/earshot/internal/llm"
)

// TryLLM tries the language model server at url (its address up to /v1),
// as the settings do when it is saved: the models it offers, or an
// *llm.Error that says why it cannot be used ("does not answer:
// connection refused"). It waits llm.Timeout at most; cancelling ctx
// gives ctx's error.
func (w *Workspace) TryLLM(ctx context.Context, url string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, llm.Timeout)
	defer cancel()
	return llm.Models(ctx, nil, url, nil)
}

// LLMProblem says why the language model server of the settings cannot
// be used by the agent of the local engine (an *llm.Error), which then
// thinks without it: nil when it answers with models, when the settings
// name none, or when the service in use is not the local engine.
func (w *Workspace) LLMProblem(ctx context.Context) error {
	s, conn, err := w.settingsAndConnection(ctx)
	if err != nil || s.AgentLLM == "" || conn.Kind != BackendLocal || w.cfg.LocalLLM == nil {
		return nil
	}
	var le *llm.Error
	if _, err := w.TryLLM(ctx, s.AgentLLM); errors.As(err, &le) {
		return le
	}
	return nil
}
