package entity

import (
	"strings"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine/format"
)

// Entity labels, as the service writes them in entities[].label.
const (
	LabelCardinal     = "CARDINAL"
	LabelOrdinal      = "ORDINAL"
	LabelMoney        = "MONEY"
	LabelPercent      = "PERCENT"
	LabelDate         = "DATE"
	LabelTime         = "TIME"
	LabelPhoneNumber  = "PHONE_NUMBER"
	LabelCreditCard   = "CREDIT_CARD"
	LabelSSN          = "SSN"
	LabelEmailAddress = "EMAIL_ADDRESS"
	LabelURL          = "URL"
)

// labelOf maps a formatting phrase to its entity label.
var labelOf = map[format.Kind]string{
	format.KindCardinal:   LabelCardinal,
	format.KindDigits:     LabelCardinal,
	format.KindOrdinal:    LabelOrdinal,
	format.KindYear:       LabelDate,
	format.KindDate:       LabelDate,
	format.KindTime:       LabelTime,
	format.KindMoney:      LabelMoney,
	format.KindPercent:    LabelPercent,
	format.KindPhone:      LabelPhoneNumber,
	format.KindSSN:        LabelSSN,
	format.KindCreditCard: LabelCreditCard,
	format.KindEmail:      LabelEmailAddress,
	format.KindURL:        LabelURL,
}

// Detect finds the entities in the recogniser's spoken words of one
// alternative (detect_entities=true). boundaries are the indexes of words
// that end a recogniser utterance; no entity spans one.
//
// StartWord and EndWord index words, half-open as the service sends them
// (EndWord is one past the last word). Value is the written form ("$25",
// "555-212-9333") and RawValue the spoken words ("twenty five dollars").
// Confidence is the lowest confidence of the entity's words: an entity is
// only right if every one of its words is, so no single word's confidence
// can overstate it. The result is in word order and never overlaps.
func Detect(words []api.Word, boundaries []int) []api.Entity {
	out := []api.Entity{}
	for _, p := range format.Scan(words, boundaries) {
		label, ok := labelOf[p.Kind]
		if !ok || isLoneOne(words, p) {
			continue
		}
		span := words[p.Span.Start:p.Span.End]
		raw := make([]string, len(span))
		conf := span[0].Confidence
		for k, w := range span {
			raw[k] = w.Word
			conf = min(conf, w.Confidence)
		}
		out = append(out, api.Entity{
			Label:      label,
			Value:      p.Text,
			RawValue:   strings.Join(raw, " "),
			Confidence: conf,
			StartWord:  p.Span.Start,
			EndWord:    p.Span.End,
		})
	}
	return out
}

// isLoneOne reports whether a phrase is "one" on its own, which is far more
// often a pronoun or determiner ("one of them", "the one I want") than a
// count; "one hundred", "one dollar" and "one two three" still count.
func isLoneOne(words []api.Word, p format.Phrase) bool {
	return p.Kind == format.KindCardinal && p.Span.Len() == 1 && strings.EqualFold(words[p.Span.Start].Word, "one")
}

// Unformatted returns entities in the shape the service uses when
// formatting is off: Value is the spoken words and RawValue is absent.
func Unformatted(ents []api.Entity) []api.Entity {
	out := make([]api.Entity, len(ents))
	for i, e := range ents {
		if e.RawValue != "" {
			e.Value, e.RawValue = e.RawValue, ""
		}
		out[i] = e
	}
	return out
}
