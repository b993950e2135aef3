package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/sessions"
)

const agentSummary = "talk with the voice agent, or with --text type to it (for scripts)"

// agentReplyTimeout bounds the wait for one reply in --text mode.
const agentReplyTimeout = 2 * time.Minute

type agentFlags struct {
	prompt, think, voice, greeting, device string
	text, halfDuplex, headphones           bool
	args                                   []string
}

func newAgentFlags(env Env) (*flag.FlagSet, *agentFlags) {
	f := &agentFlags{}
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.StringVar(&f.prompt, "prompt", "", "what the agent is told to be, as `TEXT`")
	fs.StringVar(&f.think, "think", "", "the `MODEL` it thinks with, an id of 'earshot agent --list-models' (default: the first)")
	fs.StringVar(&f.voice, "voice", "", "the `VOICE` it speaks with, such as aura-2-thalia-en or flux-kit-en (default: the one in Settings)")
	fs.StringVar(&f.greeting, "greeting", "", "what the agent says first, as `TEXT`")
	fs.StringVar(&f.device, "device", "", "the microphone `ID` (default: the one in Settings)")
	fs.BoolVar(&f.text, "text", false, "read lines from standard input, print the replies, play nothing")
	fs.BoolVar(&f.halfDuplex, "half-duplex", false, "mute the microphone while the agent speaks, instead of cancelling its echo")
	fs.BoolVar(&f.headphones, "headphones", false, "the agent cannot hear itself: send the microphone as it is, with no echo cancellation")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, `Usage: earshot agent [--prompt TEXT] [--think MODEL] [--voice VOICE] [--greeting TEXT] [--half-duplex | --headphones] [--device ID]
       earshot agent --text [--prompt TEXT] [--think MODEL] [--voice VOICE] < questions.txt
       earshot agent --list-models

Talks with the voice agent of the service chosen in the app's Settings
(the local engine when no key is set): it listens to the microphone,
answers aloud and prints both sides, until Ctrl+C. Speaking while it
talks interrupts it; it does not hear itself through the speakers (echo
cancellation, or --half-duplex to mute the microphone while it talks).
With --text it reads one message per line from standard input and
prints each reply as "agent: ...", for scripts. The conversation is
saved to the app's history.

Flags:
`)
		fs.PrintDefaults()
	}
	return fs, f
}

func agent(ctx context.Context, env Env, args []string) error {
	if len(args) == 1 && args[0] == "--list-models" {
		return listThinkModels(ctx, env)
	}
	fs, f := newAgentFlags(env)
	var err error
	if f.args, err = parseInterleaved(fs, args); err != nil {
		return errUsage
	}
	if len(f.args) > 0 {
		fmt.Fprintf(env.Stderr, "earshot agent: it takes no arguments, only flags (got %q)\n\nRun 'earshot agent -h' for help.\n", f.args[0])
		return errUsage
	}
	if f.text && (f.device != "" || f.halfDuplex || f.headphones) {
		fmt.Fprintln(env.Stderr, "earshot agent: --device, --half-duplex and --headphones are for the microphone; --text uses none\n\nRun 'earshot agent -h' for help.")
		return errUsage
	}
	if f.halfDuplex && f.headphones {
		fmt.Fprintln(env.Stderr, "earshot agent: choose --half-duplex or --headphones, not both")
		return errUsage
	}
	if f.voice != "" && !api.IsAuraVoice(f.voice) && !api.IsFluxVoice(f.voice) {
		fmt.Fprintf(env.Stderr, "earshot agent: %q is not a voice; use an aura-* or flux-* voice such as aura-2-thalia-en\n", f.voice)
		return errUsage
	}
	ws, err := env.workspace(ctx, "talk with the agent")
	if err != nil {
		return err
	}
	defer ws.Close()
	req := sessions.AgentRequest{Think: f.think, Voice: f.voice, Prompt: f.prompt, Greeting: f.greeting,
		Text: f.text, Silent: f.text, DeviceID: f.device}
	switch {
	case f.halfDuplex:
		req.Mode = sessions.ListenHalfDuplex
	case f.headphones:
		req.Mode = sessions.ListenOpen
	}
	if err := ws.LLMProblem(ctx); err != nil {
		fmt.Fprintf(env.Stderr, "earshot agent: %v; the agent thinks with the local engine's built-in assistant instead\n", err)
	}
	a, err := ws.StartAgent(context.WithoutCancel(ctx), req)
	if errors.Is(err, device.ErrNoDevice) || errors.Is(err, device.ErrNoAudioBackend) {
		return reword(err, "%s: connect a microphone, or type to the agent with --text", deviceProblem(err))
	}
	if err != nil {
		return err
	}
	if f.text {
		err = agentText(ctx, env, a)
	} else {
		err = agentVoice(ctx, env, a)
	}
	if stopErr := a.Stop(); err == nil && stopErr == nil && !a.Kept() {
		fmt.Fprintln(env.Stderr, "Nothing was said, so no conversation was kept in history.")
	}
	return err
}

// listThinkModels prints the models the agent can think with.
func listThinkModels(ctx context.Context, env Env) error {
	ws, err := env.workspace(ctx, "list the agent's models")
	if err != nil {
		return err
	}
	defer ws.Close()
	models, err := ws.ThinkModels(ctx)
	if err != nil {
		return err
	}
	if err := ws.LLMProblem(ctx); err != nil {
		fmt.Fprintf(env.Stderr, "earshot agent: %v, so its models are not listed\n", err)
	}
	for _, m := range models {
		fmt.Fprintf(env.Stdout, "%-28s %-14s %s\n", m.ID, m.Provider, m.Name)
	}
	return nil
}

// printAgentEvent prints what a person follows of the conversation: both
// sides' words on stdout, calls and notices on stderr. It reports whether
// ev ends a reply (the agent sent its last audio, or refused).
func printAgentEvent(env Env, ev sessions.Event, echoUser bool) (replyEnded bool, err error) {
	switch e := ev.(type) {
	case *sessions.AgentTextEvent:
		who := "agent"
		if e.Role == api.RoleUser {
			if !echoUser {
				return false, nil
			}
			who = "you"
		}
		_, err = fmt.Fprintf(env.Stdout, "%s: %s\n", who, e.Content)
	case *sessions.AgentFunctionEvent:
		if e.Done {
			fmt.Fprintf(env.Stderr, "[%s(%s) answered %s]\n", e.Name, e.Arguments, shorten(e.Result, 200))
		}
	case *sessions.AgentAudioDoneEvent:
		return true, nil
	case *sessions.AgentNoticeEvent:
		fmt.Fprintf(env.Stderr, "%s from the agent: %s\n", e.Type, e.Description)
		return e.Type == api.TypeError || e.Type == api.TypeInjectionRefused || e.Type == "Refused", nil
	case *sessions.NoSpeakerEvent:
		fmt.Fprintf(env.Stderr, "No speaker is available: the agent's replies are printed only (%v).\n", e.Err)
	}
	return false, err
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// agentText sends each line of standard input and prints the reply,
// one at a time.
func agentText(ctx context.Context, env Env, a *sessions.AgentSession) error {
	defer a.Stop()
	in := env.Stdin
	if in == nil {
		in = os.Stdin
	}
	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-a.Done():
				return
			}
		}
		readErr <- sc.Err()
	}()
	events := a.Events()
	// waitReply prints events until the reply to the last line ended.
	waitReply := func() error {
		t := time.NewTimer(agentReplyTimeout)
		defer t.Stop()
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					return sessionEnd(a)
				}
				ended, err := printAgentEvent(env, ev, false)
				if err != nil {
					return fmt.Errorf("write the replies: %w", err)
				}
				if ended {
					return nil
				}
			case <-t.C:
				return fmt.Errorf("the agent did not answer within %s", agentReplyTimeout)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				if err := <-readErr; err != nil {
					return fmt.Errorf("read standard input: %w", err)
				}
				return nil
			}
			if strings.TrimSpace(line) == "" {
				continue
			}
			a.Say(line)
			if err := waitReply(); err != nil {
				if errors.Is(err, context.Canceled) {
					return nil
				}
				return err
			}
		case ev, ok := <-events:
			if !ok {
				return sessionEnd(a)
			}
			if _, err := printAgentEvent(env, ev, false); err != nil {
				return fmt.Errorf("write the replies: %w", err)
			}
		case <-ctx.Done():
			return nil
		}
	}
}

// sessionEnd is why a session ended by itself.
func sessionEnd(a *sessions.AgentSession) error {
	if err := a.Stop(); err != nil {
		return err
	}
	return errors.New("the agent ended the conversation")
}

// agentVoice runs a spoken conversation until Ctrl+C.
func agentVoice(ctx context.Context, env Env, a *sessions.AgentSession) error {
	_, stopped := stopper(ctx, a.Done(), a.Stop)
	fmt.Fprintln(env.Stderr, "Talking with the agent. Speak; press Ctrl+C to stop.")
	var (
		writeErr error
		hist     historyWatch
	)
	for ev := range a.Events() {
		line := hist.take(ev)
		if writeErr != nil {
			continue
		}
		if line != "" {
			fmt.Fprintln(env.Stderr, line)
		}
		if _, err := printAgentEvent(env, ev, true); err != nil {
			writeErr = fmt.Errorf("write the conversation: %w", err)
		}
	}
	err := <-stopped
	if writeErr != nil {
		return writeErr
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	saved, unsaved := hist.end()
	fmt.Fprintf(env.Stderr, "Stopped; the conversation is %s.\n", saved)
	return unsaved
}
