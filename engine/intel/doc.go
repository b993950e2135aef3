// Package intel is the local engine's text intelligence: summaries,
// sentiment, topics and intents for POST /v1/read and for batch /v1/listen
// transcripts. It is English only, deterministic, runs in memory with no
// model files, and does in well-understood classical ways what the hosted
// service does with large models, so its output is useful but plainer.
//
// Words and sentences. Every feature works on strings.Fields(text); segment
// word indices are indices into that slice, so a transcript made of words
// joined by spaces maps straight back to word timings. Sentences end at
// ".", "!" or "?" (not after common abbreviations or initials, nor before a
// lower-case word) and are cut at 40 words, so unpunctuated transcripts
// still have usable units.
//
// Summary (SummaryModel). Extractive: the summary is sentences of the text,
// in their original order. Each sentence becomes a TF-IDF vector of stemmed
// content words; cosine similarities, computed through an inverted index
// and kept to each sentence's 24 strongest neighbours, form a graph that is
// ranked with PageRank (TextRank). The random walk teleports to earlier
// sentences more often (a 1/sqrt(position) prior), and the final score
// mixes centrality with that lead prior, because news and most reports put
// their point first. Very short sentences (fewer than 14 words) and very
// long ones are weighted down, and a candidate too similar (cosine > 0.5)
// to one already chosen is skipped. A text of n sentences gets
// ceil(0.6*sqrt(n)) of them: 2 for a paragraph, about 4 for a news article,
// 30 for a two-hour meeting. Nothing is rewritten, so pronouns may dangle.
//
// Sentiment (SentimentModel). VADER (Hutto and Gilbert, 2014), implemented
// here on the VADER lexicon (MIT licence, see NOTICE): each word's valence
// from the lexicon, adjusted by the preceding three words for boosters
// ("very", "slightly"), negation ("not", "never", "-n't"), "but" (the
// clause after it counts 1.5 times, the one before half), ALL-CAPS
// emphasis, "!" and repeated "?", and a few idioms; the sum is squashed
// into a compound score in -1..1. Each sentence is scored; sentences are
// grouped into segments of at least 8 words (a shorter sentence
// stands alone only if it carries sentiment), neighbouring segments with the
// same label are merged up to 60 words, and a segment's score is the
// word-weighted mean of its sentences. Labels use +-0.1 (VADER's +-0.05 is
// for single sentences; the wider band keeps mildly polite boilerplate
// neutral, as the service does). The average is word-weighted over the
// document. Emoji are not scored.
//
// Topics (TopicModel). Keyphrases, not a topic taxonomy: candidates are
// runs of content words between stop words and punctuation (RAKE), at most
// three words (the last three of a longer run, where English puts the
// head), plus each word alone; stems group "refund" and "refunds". A
// phrase scores count^0.7 times the sum of log(1+frequency) of its words,
// and only the top sqrt(content words)/3 (3 to 25) are kept, requiring two
// occurrences in longer texts; a word seen mostly inside a kept phrase is
// dropped. Each sentence lists the kept phrases in it (neighbouring
// sentences with the same list merge); confidence is the phrase's score
// relative to the best, mapped to 0.5..0.99, a ranking rather than a
// probability. Names are capitalised like "Refund" or "Phone upgrade";
// words only ever written capitalised keep their case.
//
// Intents (IntentModel). Verb-object patterns: one of about a hundred
// request verbs (cancel, upgrade, refund, schedule, ...) in a request frame
// ("I want to", "I'd like to", "can you", "please", a sentence-initial
// imperative), followed by an optional particle or preposition ("sign up
// for", "ask about") and an object noun phrase with determiners dropped;
// "questions about X" counts as "Ask about X". A negated frame ("I don't
// want to cancel") is no intent; a past tense after a subject ("I cancelled
// my order") is reported at low confidence. The name is "Verb object"
// ("Cancel subscription", "Upgrade phone"); confidence is a fixed weight per
// frame (0.55 to 0.92), not a probability. Requests phrased without such a
// verb ("my card doesn't work") are not found.
//
// Cost is linear in the text apart from the bounded similarity graph; a
// 50,000-word document with all four features takes well under a second
// on two cores (BenchmarkAnalyze50k). Analyze checks ctx in its loops.
package intel
