package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/engine"
)

// agentQuestions are what the person asks, spoken by the engine's voice.
var agentQuestions = []string{
	"What is two plus two?", "What is seven times six?", "What is ten minus three?",
	"What is nine plus one?", "What is five times five?", "What is eight minus two?",
	"What is three plus four?", "What is six times two?", "What is twenty minus five?",
	"What is one plus one?", "What is four times three?", "What is fifty plus fifty?",
}

// agentRate is the rate of the person's audio.
const agentRate = 16000

// agentTurn is one question and the agent's answer, as timed at the client.
type agentTurn struct {
	firstAudio    time.Duration // end of the question's speech to the reply's first audio
	ttt, tts, all float64       // AgentStartedSpeaking, seconds
}

// agentTable measures the voice agent: end of the person's speech to the
// first audio of the reply, with the built-in assistant and with an
// OpenAI-compatible server; and echo cancellation in simulated rooms.
func agentTable(ctx context.Context, local *engine.Local) error {
	client, err := api.NewClient(api.Config{Endpoint: local.Endpoint(), APIKey: local.Key})
	if err != nil {
		return err
	}
	speech := make([][]byte, len(agentQuestions))
	for i, q := range agentQuestions {
		resp, err := client.Speak(ctx, q, api.SpeakOptions{Model: "aura-2-thalia-en", Encoding: "linear16", Container: "none", SampleRate: agentRate})
		if err != nil {
			return err
		}
		speech[i], err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
	}
	llm := httptest.NewServer(http.HandlerFunc(streamingLLM))
	defer llm.Close()

	fmt.Println("### Voice agent: end of speech to first audio")
	fmt.Println()
	fmt.Printf("%d spoken questions (the engine's aura-2-thalia-en voice, linear16 at %d Hz) sent at real-time pace in 20 ms frames, "+
		"followed by silence, to `/v1/agent/converse` of the engine on loopback, one conversation per think provider. "+
		"Measured at the client: from the last frame of the question's speech to the first binary frame of the reply. "+
		"The engine's endpointing waits for silence before the turn ends, and that wait is part of the figure. "+
		"ttt and tts are the engine's own AgentStartedSpeaking figures (think: to the first text; speak: text to first audio). "+
		"The OpenAI-compatible server is a test server in the bench that streams a 12-word reply in four chunks, 20 ms apart.\n\n",
		len(agentQuestions), agentRate)
	fmt.Println("| think provider | turns | median | p90 | max | median ttt | median tts | target |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, p := range []struct {
		name  string
		think api.Think
	}{
		{"built-in assistant", api.Think{Provider: api.ThinkProvider{Type: "earshot", Model: "earshot-assistant"}}},
		{"OpenAI-compatible server", api.Think{Provider: api.ThinkProvider{Type: "open_ai", Model: "bench-llm"},
			Endpoint: &api.AgentEndpoint{URL: llm.URL + "/v1/chat/completions"}}},
	} {
		turns, err := agentTurns(ctx, client, p.think, speech)
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		var first, ttt, tts []float64
		for _, t := range turns {
			first = append(first, ms(t.firstAudio))
			ttt = append(ttt, 1000*t.ttt)
			tts = append(tts, 1000*t.tts)
		}
		fmt.Printf("| %s | %d | %.0f ms | %.0f ms | %.0f ms | %.1f ms | %.1f ms | median < 900 ms |\n",
			p.name, len(turns), median(first), speakQuantile(first, 0.9), slices.Max(first), median(ttt), median(tts))
	}
	fmt.Println()
	return echoTable()
}

// streamingLLM answers chat completions with a short streamed reply.
func streamingLLM(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	for _, piece := range []string{"The answer ", "is on its way, ", "and here it is: ", "forty two."} {
		b, _ := json.Marshal(piece)
		fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%s}}]}\n\n", b)
		if fl != nil {
			fl.Flush()
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// agentTurns asks every question in one conversation and times each
// answer.
func agentTurns(ctx context.Context, client *api.Client, think api.Think, speech [][]byte) ([]agentTurn, error) {
	set := api.AgentSettings{
		Audio: api.AgentAudioConfig{
			Input:  &api.AgentAudioInput{Encoding: "linear16", SampleRate: agentRate},
			Output: &api.AgentAudioOutput{Encoding: "linear16", SampleRate: 24000, Container: "none"},
		},
		Agent: api.AgentConfig{
			Listen: &api.AgentListen{Provider: api.ListenProvider{Type: "deepgram", Model: "nova-3"}},
			Think:  api.ThinkChain{think},
			Speak:  api.SpeakChain{{Provider: api.SpeakProvider{Type: "deepgram", Model: "aura-2-thalia-en"}}},
		},
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	st, err := client.Converse(ctx, set)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	msgs := make(chan api.AgentMessage, 1024)
	go func() {
		defer close(msgs)
		for {
			m, err := st.Next(ctx)
			if err != nil {
				return
			}
			msgs <- m
		}
	}()
	for m := range msgs {
		if m.MessageType() == api.TypeSettingsApplied {
			break
		}
	}
	const frame = 2 * agentRate / 50 // 20 ms
	silence := make([]byte, frame)
	var turns []agentTurn
	for _, q := range speech {
		tick := time.NewTicker(20 * time.Millisecond)
		var end time.Time
		var turn agentTurn
		audioDone, gotAudio := false, false
		pcm := q
	turnLoop:
		for {
			select {
			case <-tick.C:
				f := silence
				if len(pcm) > 0 {
					n := min(frame, len(pcm))
					f, pcm = pcm[:n], pcm[n:]
					if len(pcm) == 0 {
						end = time.Now()
					}
				}
				if err := st.SendAudio(ctx, f); err != nil {
					tick.Stop()
					return nil, err
				}
			case m, ok := <-msgs:
				if !ok {
					tick.Stop()
					return nil, fmt.Errorf("the conversation ended: %w", ctx.Err())
				}
				switch x := m.(type) {
				case *api.AgentAudio:
					if !gotAudio && !end.IsZero() {
						gotAudio = true
						turn.firstAudio = time.Since(end)
					}
				case *api.AgentStartedSpeaking:
					turn.ttt, turn.tts, turn.all = x.TTTLatency, x.TTSLatency, x.TotalLatency
				case *api.AgentAudioDone:
					audioDone = true
				}
				if audioDone && gotAudio {
					break turnLoop
				}
			case <-ctx.Done():
				tick.Stop()
				return nil, ctx.Err()
			}
		}
		tick.Stop()
		turns = append(turns, turn)
		// Let the reply play out (it is paced near real time) before
		// the next question.
		time.Sleep(time.Second)
	}
	return turns, nil
}

// echoTable measures the echo return loss enhancement of the agent's
// canceller in simulated rooms.
func echoTable() error {
	const line = librivox + "/sense_and_sensibility_01_austen_64kb-0880.wav"
	f, err := os.Open(line)
	if err != nil {
		return err
	}
	b, err := audio.Decode(context.Background(), f)
	f.Close()
	if err != nil {
		return err
	}
	one := audio.Float32ToInt16(nil, b.Samples)
	var played []int16
	for len(played) < 10*agentRate {
		played = append(played, one...)
	}
	fmt.Println("### Voice agent: echo cancellation")
	fmt.Println()
	fmt.Println("10 s of a real reading (LibriVox, 16 kHz) played into simulated rooms: the sound reaches the microphone after the delay, " +
		"6 dB weaker, followed by 60 ms of decaying reverberation, over a noise floor at -56 dBFS. " +
		"`audio.EchoFilter` (speexdsp's canceller, 300 ms tail, and its residual suppressor) with the played audio as the reference. " +
		"ERLE: the echo's power at the microphone over what is left of it, after the first 4 s (the canceller's convergence), " +
		"and over the first 4 s.")
	fmt.Println()
	fmt.Println("| echo delay | ERLE after 4 s | ERLE, first 4 s | target |")
	fmt.Println("|---|---:|---:|---:|")
	for _, d := range []time.Duration{30 * time.Millisecond, 90 * time.Millisecond, 150 * time.Millisecond} {
		mic := roomEcho(played, d)
		filter, err := audio.NewEchoFilter(agentRate)
		if err != nil {
			return err
		}
		filter.Played(played)
		var out []int16
		for i := 0; i+320 <= len(mic); i += 320 {
			out = append(out, filter.Capture(mic[i:i+320], int64(i+320))...)
		}
		filter.Close()
		skip := 4 * agentRate
		fmt.Printf("| %d ms | %.1f dB | %.1f dB | at least 20 dB |\n", d.Milliseconds(),
			audio.ERLE(mic[skip:len(out)], out[skip:]), audio.ERLE(mic[:skip], out[:skip]))
	}
	fmt.Println()
	return nil
}

// roomEcho is what a microphone hears of played in a room with an echo
// path of delay.
func roomEcho(played []int16, delay time.Duration) []int16 {
	d := int(agentRate * delay / time.Second)
	n := agentRate * 60 / 1000
	h := make([]float64, d+n+1)
	h[d] = 0.5
	rng := rand.New(rand.NewPCG(1, 2))
	for k := 1; k <= n; k++ {
		f := 1 - float64(k)/float64(n+1)
		h[d+k] = 0.5 * 0.3 * f * f * (rng.Float64()*2 - 1)
	}
	out := make([]int16, len(played))
	for i := range out {
		s := 50 * (rng.Float64()*2 - 1)
		for k, c := range h {
			if c != 0 && i-k >= 0 {
				s += c * float64(played[i-k])
			}
		}
		out[i] = int16(max(-32768, min(32767, s)))
	}
	return out
}
