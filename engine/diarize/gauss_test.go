package diarize

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sample draws n frames from a Gaussian with independent dimensions of the
// given means and standard deviations.
func sample(rng *rand.Rand, n int, mean, sd float64) gauss {
	var g gauss
	for range n {
		var x vec
		for i := range x {
			x[i] = mean + sd*rng.NormFloat64()*float64(i+1)/4
		}
		g.add(&x)
	}
	return g
}

func TestGaussStatistics(t *testing.T) {
	var g gauss
	for _, v := range []float64{1, 2, 3, 4} {
		var x vec
		for i := range x {
			x[i] = v * float64(i+1)
		}
		g.add(&x)
	}
	mu := g.mean()
	c := g.cov()
	for i := range featDim {
		k := float64(i + 1)
		if math.Abs(mu[i]-2.5*k) > 1e-12 {
			t.Errorf("mean[%d] = %v, want %v", i, mu[i], 2.5*k)
		}
		// Variance of {1,2,3,4} is 1.25, scaled by k².
		if math.Abs(c[i*featDim+i]-1.25*k*k) > 1e-9 {
			t.Errorf("var[%d] = %v, want %v", i, c[i*featDim+i], 1.25*k*k)
		}
	}
	// The frames are perfectly correlated: the covariance is singular and
	// only the floor keeps the log-determinant finite.
	if ld := g.logDet(); math.IsNaN(ld) || math.IsInf(ld, 0) {
		t.Errorf("logDet of singular statistics = %v", ld)
	}
}

func TestCholeskyAndLogLik(t *testing.T) {
	// A diagonal Gaussian: log-likelihood has a closed form.
	var g gauss
	rng := rand.New(rand.NewPCG(3, 3))
	for range 20000 {
		var x vec
		for i := range x {
			x[i] = float64(i) + math.Sqrt(float64(i+1))*rng.NormFloat64()
		}
		g.add(&x)
	}
	m := newModel(&g)
	var x vec
	var want float64
	for i := range x {
		x[i] = float64(i) + 1
		v := g.cov()[i*featDim+i]
		d := x[i] - g.mean()[i]
		want += -0.5 * (d*d/v + math.Log(v))
	}
	// Sample covariances are not exactly diagonal; allow for it.
	if got := m.logLik(&x); math.Abs(got-want) > 0.05*math.Abs(want)+0.1 {
		t.Errorf("logLik = %v, want about %v", got, want)
	}
	if math.Abs(m.logDet-g.logDet()) > 1e-9 {
		t.Errorf("model logDet %v != gauss logDet %v", m.logDet, g.logDet())
	}
	var sumLog float64
	for i := range featDim {
		sumLog += math.Log(float64(i + 1))
	}
	if math.Abs(g.logDet()-sumLog) > 0.1 {
		t.Errorf("logDet = %v, want about %v", g.logDet(), sumLog)
	}
}

func TestDeltaBICSign(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	tests := []struct {
		name      string
		a, b      gauss
		different bool
	}{
		{"same distribution", sample(rng, 300, 0, 1), sample(rng, 300, 0, 1), false},
		{"same distribution, unequal sizes", sample(rng, 1000, 0, 1), sample(rng, 120, 0, 1), false},
		{"shifted mean", sample(rng, 300, 0, 1), sample(rng, 300, 1.5, 1), true},
		{"wider spread", sample(rng, 300, 0, 1), sample(rng, 300, 0, 2), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := deltaBIC(&tt.a, &tt.b, tt.a.logDet(), tt.b.logDet(), 1)
			if (d > 0) != tt.different {
				t.Errorf("ΔBIC = %v; want two speakers: %v", d, tt.different)
			}
		})
	}
}

func TestMergeAddsStatistics(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	a, b := sample(rng, 50, 0, 1), sample(rng, 70, 3, 1)
	m := merged(&a, &b)
	if m.n != 120 {
		t.Fatalf("n = %v", m.n)
	}
	if a.n != 50 {
		t.Fatalf("merged changed its argument")
	}
	for i := range featDim {
		if math.Abs(m.sum[i]-a.sum[i]-b.sum[i]) > 1e-9 {
			t.Fatalf("sum[%d] not added", i)
		}
	}
}
