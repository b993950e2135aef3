// Package format turns the local recogniser's bare words (lower case, with
// timings and confidences) into the formatted words, transcripts, paragraphs
// and utterances of the service's /v1/listen response: punctuate,
// smart_format, numerals, paragraphs and utterances.
//
// Everything here is rule-based and deterministic: no model, no data files.
// The rules are written for English as the CMU dictionary spells it. They
// are conservative: where a rule cannot tell, the words are left as spoken.
//
// # Word list shape
//
// The hosted service writes a formatted token made of several spoken words
// as one entry of the words array, timed from the first word's start to the
// last word's end, with the formatted text in word (lower case) and
// punctuated_word. A recorded nova-2 response shows
// {"word":"123-456-7890","punctuated_word":"123-456-7890."} for a spoken
// phone number, and the service's own documentation shows {"word":"123"}.
// Apply does the same, so with smart_format or numerals the output may have
// fewer words than the input; Result.Spans says which input words each output
// word came from, and Result.Map and Result.RemapEntities translate word
// indexes. Punctuation alone never changes the number of words. A merged
// word's confidence is the lowest of its words' confidences.
//
// # Sentences and punctuation (punctuate=true)
//
// A sentence ends at the end of a recogniser utterance (Options.Boundaries),
// before a pause of Options.SentencePause (default 0.6 s) or more, before a
// change of diarised speaker, and at the last word. Each sentence's first
// word is capitalised (formatted tokens such as e-mail addresses keep their
// case), as is the pronoun "i" with its contractions ("I'm", "I'll"). A
// sentence ends with a question mark when it opens with a wh-word followed
// by a verb ("what is", "where did", "how many"), a wh-contraction
// ("what's"), a lone wh-word ("Why?"), or subject-verb inversion ("is it",
// "can you", "is the shop", "do you"; do, have, may and similar need a
// pronoun after them, so "Do the dishes" and "Have a nice day" stay
// statements). Every other sentence ends with a period. No commas are
// inserted: pauses do not predict them reliably (the recorded response has
// commas after pauses of 0 s and none after a 0.38 s pause). No other
// capitalisation is attempted with punctuation alone.
//
// # Smart formatting (smart_format=true)
//
// Smart formatting implies punctuation and adds:
//
//   - Cardinals: "twenty five" -> 25, "one hundred and three" -> 103,
//     "a hundred" -> 100, "two thousand twenty four" -> 2024, "three point
//     five" -> 3.5; commas from 10,000 ("12,500"). The grammar is the usual
//     one (units, teens, tens, hundred, thousand ... trillion, decreasing
//     scales, "and" after hundred or a scale); words it does not allow
//     together stay separate numbers ("five six", "thirty forty" -> 30 40).
//   - Numbers below ten spoken as one word stay spelled out ("two cats",
//     "one of them", "wait a second", "the third time"), as style guides
//     write them and because "one", "first" and "second" are more often not
//     numbers. Ordinals from tenth are written 10th, 21st, 100th.
//   - Spoken years: a first half of fourteen to twenty followed by "oh N",
//     a teen or a tens word: "nineteen eighty four" -> 1984, "twenty twenty
//     four" -> 2024, "nineteen oh five" -> 1905. Lower halves ("eleven
//     thirty") are clock times as often as years and are left as numbers.
//   - Money and percentages: "ten dollars" -> $10, "five dollars and fifty
//     cents" -> $5.50, "ten euros" -> €10 (commas from $1,000); "five
//     percent" or "per cent" -> 5%.
//   - Times: hour, optional minutes and "a m"/"p m"/"am"/"pm" -> 3:30 PM,
//     11 AM, 9:05 AM; "three o'clock" -> 3 o'clock; hour and minutes after
//     at/by/until/till/around/from/before/after/since -> 5:30.
//   - Dates: "november second twenty twenty two" -> November 2 2022 (the
//     service's documented form, without a comma), "july four" -> July 4,
//     "july nineteen ninety" -> July 1990, "the fourth of july" -> the 4th of
//     July. "may" and "march" count as months only with an ordinal day or a
//     year after them.
//   - Runs of single digits ("oh" is zero inside a run, never first): 10
//     digits -> 555-212-9333, 11 starting with 1 -> 1-800-555-1212, 7 ->
//     555-1234; 9 after "social security"/"ssn" (or right after another such
//     number) -> 123-45-6789; 13 to 19 passing the Luhn check -> the digits;
//     other runs of three or more -> the digits ("nine one one" -> 911). A
//     run of two stays spelled out.
//   - E-mail addresses and domains: "jane at example dot com" ->
//     jane@example.com, "example dot co dot uk" -> example.co.uk, for a
//     fixed list of top-level domains; a local part that is a common word
//     before "at" ("look at example dot com") is not an address.
//   - Titles the dictionary spells as words: mr, mrs, ms, dr, jr, st -> Mr.,
//     Mrs., Ms., Dr., Jr., St.; the word after Mr./Mrs./Ms./Dr. is
//     capitalised as a name. Days of the week and the months that are not
//     also common words are capitalised.
//
// Not done: other proper nouns, commas, measurements and units other than
// money and percent, negative numbers, fractions, ranges, street addresses,
// spelled-out letters ("one z five"), and any language but English.
//
// # Numerals (numerals=true)
//
// Numerals writes numbers as digits without separators and changes nothing
// else: "twenty five" -> 25, "two cats" -> 2 cats, "ten dollars" -> 10
// dollars, and each digit of a run on its own ("nine two eight" -> 9 2 8,
// as the service documents). A lone "one" and ordinals below tenth stay
// words.
//
// # Paragraphs and utterances
//
// Paragraphs groups sentences into paragraphs after a pause of 1.5 s or
// more, on a speaker change, or when a paragraph has reached 60 words, and
// writes the service's transcript shape ("\n" first, "\n\n" between,
// "Speaker N: " where the speaker changes). The service turns paragraphs on
// with smart_format, and punctuation on with paragraphs; the server applies
// those implications, this package does not. Utterances splits words at
// pauses of utt_split (default 0.8 s) and on speaker changes.
//
// No phrase or sentence rule reaches across a recogniser boundary, a speaker
// change or a sentence pause (runs of single digits tolerate pauses up to
// 1.2 s, as people pause between the groups of a phone number).
package format
