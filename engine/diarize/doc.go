// Package diarize tells speakers apart in recognised speech: it labels every
// word with a speaker number and a confidence, as the service does when
// diarize_model is set on /v1/listen.
//
// It is a classical, model-free speaker clustering system, with no trained
// weights. Audio is 16 kHz mono float32 samples in [-1, 1]
// (see [SampleRate] and [FromInt16]). Speech regions come from the
// recogniser's word timings, so silence and noise between words never
// enter the speaker models. Each 25 ms frame (every 10 ms) becomes
// mel-frequency cepstral coefficients c1..c12 computed here (pre-emphasis
// 0.97, Hamming window, 512-point FFT, 40 mel filters from 20 Hz to
// 7.6 kHz, log, orthonormal DCT-II). c0 (loudness) is not used. No cepstral
// mean normalisation is applied because every statistic below is unchanged
// by a constant cepstral offset, which is what a fixed channel adds.
//
// Both versions model a stretch of speech as one full-covariance Gaussian
// over its cepstra and decide "same speaker or not" with the Bayesian
// information criterion (ΔBIC, Chen and Gopalakrishnan 1998): two
// stretches are one speaker when one Gaussian for both explains them
// better, after a penalty for the extra parameters of two. No threshold
// is needed beyond the penalty weight, which was calibrated on data (the
// calibration clips of testdata/generate.sh; see defaultParams in
// batch.go). The versions differ in how they search:
//
//   - v1 ([V1]) is single-pass: words are cut into word-aligned chunks of
//     about a second of speech, and each chunk, in time order, joins the
//     speaker heard so far with the lowest ΔBIC, or starts a new speaker
//     when every ΔBIC is positive. Decisions are never revisited. This is
//     the streaming model too: [Online] runs it across the final
//     utterances of a stream (streaming offers latest and v1, and latest
//     means v1 there), so speaker numbers never change once given.
//   - v2 ([V2], what "latest" means in batch) is global: segments are runs
//     of whole words split at pauses and at 2 s; they are clustered
//     bottom-up (agglomerative, lowest ΔBIC first, with a lighter penalty
//     so that clusters stay pure), and then resegmented: a Viterbi pass
//     over the segments with the clusters' Gaussians and a
//     speaker-change cost, the Gaussians re-estimated until stable, with
//     clusters that become too small dissolved and clusters that ΔBIC
//     (full penalty) now prefers as one merged, each followed by more
//     passes. A last Viterbi pass over words, with the models fixed, puts
//     each speaker change on the best word boundary.
//
// speaker_confidence is, in v1, a logistic of the per-frame ΔBIC margin
// between the chosen speaker and the nearest alternative (another speaker,
// or a new one), so 0.5 is a tie; in v2, the posterior of the chosen
// speaker among all speakers from the word's per-frame log-likelihoods,
// which is 1 when only one speaker was found.
//
// Both versions make every speaker run at least two words long (no
// single-word speaker flips) and number speakers from 0 in order of first
// appearance.
package diarize
