package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/llm"
)

// ServeConfig is what serve passes to the engine constructor.
type ServeConfig struct {
	Key            api.Secret
	Region         api.Region
	MaxConnections int
	// LoopbackOnly makes the engine refuse requests whose Host header is
	// not a loopback name, which defeats DNS rebinding from web pages.
	LoopbackOnly bool
	Logger       *slog.Logger
	// LLM is the base address (up to /v1) of an OpenAI-compatible server
	// the voice agent may think with; empty for none.
	LLM string
}

// Server is the local engine as serve sees it.
type Server interface {
	// Handler serves the main host.
	Handler() http.Handler
	// AgentHandler serves the voice-agent host.
	AgentHandler() http.Handler
	// Close ends open streams and frees the engine.
	Close() error
}

// EngineFactory builds the local engine.
type EngineFactory func(ServeConfig) (Server, error)

const shutdownGrace = 5 * time.Second

func runServe(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "serve", "--key KEY [--addr 127.0.0.1:8080] [--agent-addr ADDR] [--region eu|au|in] [--max-connections N] [--llm URL]")
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (loopback unless you say otherwise)")
	agentAddr := fs.String("agent-addr", "", "address of the voice-agent host (global only; in a region the agent is on the main host)")
	key := fs.String("key", "", "the API key clients must send (or set EARSHOT_ENGINE_KEY)")
	region := fs.String("region", "", "behave as a regional host: eu, au or in")
	maxConns := fs.Int("max-connections", 8, "concurrency allowance; diarization counts double")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	llmURL := fs.String("llm", "", "an OpenAI-compatible server the voice agent may think with, up to /v1 (Ollama: http://127.0.0.1:11434/v1)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if *llmURL != "" {
		u, err := url.Parse(*llmURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			fmt.Fprintf(env.Stderr, "--llm must be an http or https address such as http://127.0.0.1:11434/v1, not %q\n", *llmURL)
			return errUsage
		}
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "serve takes no arguments, only flags (got %q)\n", fs.Arg(0))
		return errUsage
	}
	if *key == "" && env.Getenv != nil {
		*key = env.Getenv("EARSHOT_ENGINE_KEY")
	}
	if *key == "" {
		fmt.Fprintln(env.Stderr, "serve needs --key (or EARSHOT_ENGINE_KEY): the key clients must send as 'Authorization: Token KEY'")
		return errUsage
	}
	reg, err := api.ParseRegion(*region)
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return errUsage
	}
	if reg.Regional() && *agentAddr != "" {
		fmt.Fprintf(env.Stderr, "--agent-addr cannot be used with --region %s: a region has no agent host, the agent is served on the main host\n", reg)
		return errUsage
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(env.Stderr, "unknown log level %q\n", *logLevel)
		return errUsage
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level}))
	if env.NewEngine == nil {
		return errors.New("this build of Earshot has no local engine to serve (it is left out of the Windows build)")
	}
	if *llmURL != "" {
		// Tried before anything else writes to stderr: the agent thinks
		// with its built-in assistant while the server does not answer.
		tctx, cancel := context.WithTimeout(ctx, llm.Timeout)
		_, err := llm.Models(tctx, nil, *llmURL, nil)
		cancel()
		var le *llm.Error
		if errors.As(err, &le) {
			fmt.Fprintf(env.Stderr, "earshot serve: %v; the voice agent thinks with its built-in assistant until it answers\n", le)
		}
	}

	type listener struct {
		name string
		ln   net.Listener
	}
	var lns []listener
	closeAll := func() {
		for _, l := range lns {
			l.ln.Close()
		}
	}
	loopback := true
	for _, a := range []struct{ name, addr string }{{"main", *addr}, {"agent", *agentAddr}} {
		if a.addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", a.addr)
		if err != nil {
			closeAll()
			return fmt.Errorf("listen on %s: %w", a.addr, err)
		}
		if !isLoopbackAddr(ln.Addr()) {
			loopback = false
			fmt.Fprintf(env.Stderr, "warning: %s is reachable beyond this machine; anyone who can reach it and knows the key can use it\n", ln.Addr())
		}
		lns = append(lns, listener{name: a.name, ln: ln})
	}

	eng, err := env.NewEngine(ServeConfig{Key: api.Secret(*key), Region: reg, MaxConnections: *maxConns, LoopbackOnly: loopback, Logger: log, LLM: *llmURL})
	if err != nil {
		closeAll()
		return err
	}
	defer eng.Close()

	var wg sync.WaitGroup
	errs := make(chan error, len(lns))
	servers := make([]*http.Server, len(lns))
	for i, l := range lns {
		h := eng.Handler()
		if l.name == "agent" {
			h = eng.AgentHandler()
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
		servers[i] = srv
		fmt.Fprintf(env.Stdout, "earshot serve: %s host listening on http://%s\n", l.name, l.ln.Addr())
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.Serve(l.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("%s host: %w", l.name, err)
			}
		}()
	}

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errs:
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	// Close the engine first: it ends open streams, which Shutdown would
	// otherwise wait for (hijacked WebSocket connections are not tracked).
	eng.Close()
	for _, srv := range servers {
		_ = srv.Shutdown(sctx)
	}
	wg.Wait()
	return runErr
}

func isLoopbackAddr(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
