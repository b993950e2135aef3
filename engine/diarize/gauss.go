package diarize

import "math"

// featDim is the number of cepstra the clustering models: c1..c12. c0
// (overall loudness) is left out because it follows the speaker's distance
// from the microphone and the gain, not the voice; the higher cepstra add
// covariance parameters faster than they add speaker information.
const featDim = 12

// vec is one feature frame (or a mean).
type vec = [featDim]float64

// mat is a featDim x featDim matrix, row-major; symmetric matrices keep
// only their lower triangle.
type mat = [featDim * featDim]float64

// gauss accumulates the sufficient statistics of a full-covariance Gaussian
// over feature frames: count, sum and sum of outer products. Merging two
// clusters is adding their statistics, which keeps agglomerative
// clustering cheap.
type gauss struct {
	n     float64
	sum   vec
	outer mat // lower triangle
}

func (g *gauss) add(x *vec) {
	g.n++
	for i := 0; i < featDim; i++ {
		g.sum[i] += x[i]
		row := g.outer[i*featDim : i*featDim+i+1]
		xi := x[i]
		for j := range row {
			row[j] += xi * x[j]
		}
	}
}

func (g *gauss) merge(o *gauss) {
	g.n += o.n
	for i := range g.sum {
		g.sum[i] += o.sum[i]
	}
	for i := range g.outer {
		g.outer[i] += o.outer[i]
	}
}

func merged(a, b *gauss) gauss {
	m := *a
	m.merge(b)
	return m
}

// varFloor bounds every variance from below so that a cluster of a few
// near-identical frames (digital silence, a pure tone) still has a usable
// covariance. Cepstral variances of speech are of order 1 to 100.
const varFloor = 1e-2

func (g *gauss) mean() vec {
	var mu vec
	if g.n > 0 {
		for i := range mu {
			mu[i] = g.sum[i] / g.n
		}
	}
	return mu
}

// cov returns the maximum-likelihood covariance (lower triangle) with the
// diagonal floored.
func (g *gauss) cov() mat {
	var c mat
	mu := g.mean()
	for i := 0; i < featDim; i++ {
		for j := 0; j <= i; j++ {
			if g.n > 0 {
				c[i*featDim+j] = g.outer[i*featDim+j]/g.n - mu[i]*mu[j]
			}
		}
		c[i*featDim+i] = math.Max(c[i*featDim+i], varFloor)
	}
	return c
}

// cholesky replaces the symmetric positive-definite matrix in a's lower
// triangle by its Cholesky factor L (a = L Lᵀ). A pivot that is not
// positive (only degenerate statistics give one) is floored rather than
// failing, so that callers always get a usable model.
func cholesky(a *mat) {
	for j := 0; j < featDim; j++ {
		d := a[j*featDim+j]
		for k := 0; k < j; k++ {
			d -= a[j*featDim+k] * a[j*featDim+k]
		}
		d = math.Sqrt(math.Max(d, varFloor*1e-3))
		a[j*featDim+j] = d
		for i := j + 1; i < featDim; i++ {
			s := a[i*featDim+j]
			for k := 0; k < j; k++ {
				s -= a[i*featDim+k] * a[j*featDim+k]
			}
			a[i*featDim+j] = s / d
		}
	}
}

// logDet is the log-determinant of the cluster's covariance.
func (g *gauss) logDet() float64 {
	c := g.cov()
	cholesky(&c)
	var s float64
	for i := 0; i < featDim; i++ {
		s += math.Log(c[i*featDim+i])
	}
	return 2 * s
}

// bicParams is the number of free parameters of a full-covariance
// Gaussian, the model-size term of the BIC.
const bicParams = featDim + featDim*(featDim+1)/2

// deltaBIC is the Bayesian information criterion in favour of modelling
// a and b as two Gaussians rather than one (Chen and Gopalakrishnan,
// 1998): positive means two speakers, negative one. ldA and ldB are the
// clusters' log-determinants (callers cache them); lambda weighs the
// penalty for the extra parameters.
func deltaBIC(a, b *gauss, ldA, ldB, lambda float64) float64 {
	m := merged(a, b)
	glr := 0.5 * (m.n*m.logDet() - a.n*ldA - b.n*ldB)
	return glr - lambda*0.5*bicParams*math.Log(m.n)
}

// model is a Gaussian ready for scoring frames: mean, Cholesky factor of
// the covariance and log-determinant.
type model struct {
	mu     vec
	chol   mat
	logDet float64
}

func newModel(g *gauss) model {
	m := model{mu: g.mean(), chol: g.cov()}
	cholesky(&m.chol)
	for i := 0; i < featDim; i++ {
		m.logDet += 2 * math.Log(m.chol[i*featDim+i])
	}
	return m
}

// logLik is the log-likelihood of frame x, up to the constant
// -featDim/2·log 2π, which cancels wherever likelihoods are compared.
func (m *model) logLik(x *vec) float64 {
	// Solve L y = x - mu by forward substitution; |y|² is the squared
	// Mahalanobis distance.
	var y vec
	var d2 float64
	for i := 0; i < featDim; i++ {
		s := x[i] - m.mu[i]
		row := m.chol[i*featDim : i*featDim+i]
		for k, l := range row {
			s -= l * y[k]
		}
		y[i] = s / m.chol[i*featDim+i]
		d2 += y[i] * y[i]
	}
	return -0.5 * (d2 + m.logDet)
}
