// Package textseg cuts text into words, sentences, paragraphs and pieces
// of bounded length, with one set of rules for every part of Earshot that
// speaks or reads text: the engine's streaming synthesis and its
// turn-based speak, its text intelligence, and the sessions.
//
// Every result is a byte span of the text it was given, so a caller can
// map it to word indices, audio marks or its own strings; the text between
// spans is white space only. Words are separated by white space (as
// unicode.IsSpace), and a full stop, exclamation or question mark of the
// CJK scripts, which are written without spaces, also ends a word.
//
// A sentence ends after a word that ends in ".", "!", "?", "..." or "…",
// unless the next word starts in lower case ("Stop!" he said) or the
// period belongs to an abbreviation: a title (Mr., Dr., St., vs., e.g.,
// i.e.), a number's (No. 5, Jan. 3), an initial (J.) or capital initials
// (U.S.). A CJK full stop, exclamation or question mark always ends one.
// Closing quotes and brackets after the mark stay with the sentence. A
// blank line ends a paragraph and so a sentence. A decimal such as 3.14
// ends nothing, as no white space follows its point.
//
// Text still arriving (a model's reply, a stream of Speak messages) is
// cut where it is complete: Complete after its last whole sentence,
// CompleteClause after a clause when it runs long with none. Text already
// cut into lines (captions) asks EndsInStop whether a line ends in a mark
// that ends sentences.
//
// Longer texts are cut into pieces of bounded length: Split for the
// engine's synthesis (a short first piece so audio starts fast), Chunks
// for a service's limit on characters per message. A sentence over the
// limit is cut at a clause end (a comma, semicolon, colon or dash), else
// between words.
//
// The package imports only the standard library, is safe for concurrent
// use (it has no state) and never panics, whatever bytes it is given.
package textseg
