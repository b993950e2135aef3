package sessions

import (
	"context"
	"testing"
)

// SynthesizeOn is Synthesize timed by clk, for the tests of the package
// sessions_test.
func (v *Voices) SynthesizeOn(ctx context.Context, clk Clock, req SynthesisRequest) (*Synthesis, error) {
	return v.synthesize(ctx, req, clk)
}

// StopGrace is how long a stop waits for the service.
const StopGrace = stopGrace

// TestSynthPhases: every phase that is not an end leads to one, an end
// leads nowhere, and a move not in the table panics.
func TestSynthPhases(t *testing.T) {
	all := []synthPhase{phaseSpeaking, phaseDraining, phaseHalting, phaseStopping, phaseDone, phaseStopped}
	for _, p := range all {
		t.Run(p.String(), func(t *testing.T) {
			if p.ended() != (len(synthTransitions[p]) == 0) {
				t.Errorf("ended %v with moves %v", p.ended(), synthTransitions[p])
			}
			if !reachesEnd(p, map[synthPhase]bool{}) {
				t.Errorf("no way from %s to an end", p)
			}
			for _, to := range all {
				allowed := false
				for _, q := range synthTransitions[p] {
					allowed = allowed || q == to
				}
				r := &synthRun{phase: p}
				panicked := func() (panicked bool) {
					defer func() { panicked = recover() != nil }()
					r.enter(to)
					return false
				}()
				if panicked == allowed {
					t.Errorf("%s to %s: allowed %v, panicked %v", p, to, allowed, panicked)
				}
				if allowed && r.phase != to {
					t.Errorf("%s to %s left the run in %s", p, to, r.phase)
				}
			}
		})
	}
	// Stop has come in halting, stopping and stopped only.
	for _, p := range all {
		want := p == phaseHalting || p == phaseStopping || p == phaseStopped
		if p.stopped() != want {
			t.Errorf("%s.stopped() = %v", p, p.stopped())
		}
	}
}

func reachesEnd(p synthPhase, seen map[synthPhase]bool) bool {
	if p.ended() {
		return true
	}
	if seen[p] {
		return false
	}
	seen[p] = true
	for _, q := range synthTransitions[p] {
		if reachesEnd(q, seen) {
			return true
		}
	}
	return false
}
