package entity

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine/format"
)

// Redaction errors. A *RedactionError wraps one of them; the server answers
// either with 400 and the error's text.
var (
	// ErrUnknownRedaction: the value is not one the service accepts either
	// (including cardinal, ordinal and percent, which the service documents
	// as invalid redact values).
	ErrUnknownRedaction = errors.New("unknown redact value")
	// ErrUnsupportedRedaction: the service accepts the value, but the local
	// engine does not detect that kind of entity (names, places, health
	// information ...), so it refuses rather than return the data unredacted.
	ErrUnsupportedRedaction = errors.New("redact value not supported by the local engine")
)

// RedactionError reports the redact value that could not be used.
type RedactionError struct {
	Value string
	Err   error
}

// Error implements error.
func (e *RedactionError) Error() string {
	return fmt.Sprintf("redact=%s: %v", e.Value, e.Err)
}

// Unwrap returns ErrUnknownRedaction or ErrUnsupportedRedaction.
func (e *RedactionError) Unwrap() error { return e.Err }

// singleLabels are the entity types that may be named in redact.
var singleLabels = map[string]string{
	"credit_card":   LabelCreditCard,
	"ssn":           LabelSSN,
	"phone_number":  LabelPhoneNumber,
	"email_address": LabelEmailAddress,
	"date":          LabelDate,
	"time":          LabelTime,
	"money":         LabelMoney,
	"url":           LabelURL,
}

// groups are the redaction groups, restricted to the entity types Detect
// finds.
var groups = map[string][]string{
	"pci": {LabelCreditCard},
	"pii": {LabelSSN, LabelPhoneNumber, LabelEmailAddress, LabelDate, LabelURL},
}

// unsupported are redact values the service documents (the phi group and
// entity types) that need detection the local engine does not have.
var unsupported = map[string]bool{
	"phi": true, "account_number": true, "age": true, "bank_account": true, "blood_type": true,
	"condition": true, "credit_card_expiration": true, "cvv": true, "date_interval": true, "dob": true,
	"dose": true, "driver_license": true, "drug": true, "duration": true, "event": true, "filename": true,
	"gender_sexuality": true, "healthcare_number": true, "injury": true, "ip_address": true,
	"language": true, "location": true, "location_address": true, "location_city": true,
	"location_coordinate": true, "location_country": true, "location_state": true, "location_zip": true,
	"marital_status": true, "medical_process": true, "name": true, "name_family": true, "name_given": true,
	"name_medical_professional": true, "numerical_pii": true, "occupation": true, "organization": true,
	"organization_medical_facility": true, "origin": true, "passport_number": true, "password": true,
	"physical_attribute": true, "political_affiliation": true, "religion": true, "routing_number": true,
	"statistics": true, "username": true, "vehicle_id": true, "zodiac_sign": true,
}

// Policy is a parsed set of redact values. The zero Policy redacts nothing.
type Policy struct {
	labels     map[string]bool
	numbers    bool // numbers, true
	aggressive bool // aggressive_numbers
}

// ParsePolicy parses the redact query values (repeatable; a value may also
// list several separated by commas). Accepted: pci, pii, numbers, true,
// aggressive_numbers, false, and the entity types credit_card, ssn,
// phone_number, email_address, date, time, money and url. Other values give
// a *RedactionError wrapping ErrUnknownRedaction or ErrUnsupportedRedaction.
func ParsePolicy(values []string) (Policy, error) {
	var p Policy
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			name := strings.ToLower(strings.TrimSpace(part))
			switch {
			case name == "" || name == "false":
			case name == "true" || name == "numbers":
				p.numbers = true
			case name == "aggressive_numbers":
				p.aggressive = true
			case groups[name] != nil:
				for _, l := range groups[name] {
					p.add(l)
				}
			case singleLabels[name] != "":
				p.add(singleLabels[name])
			case unsupported[name]:
				return Policy{}, &RedactionError{Value: name, Err: ErrUnsupportedRedaction}
			default:
				return Policy{}, &RedactionError{Value: name, Err: ErrUnknownRedaction}
			}
		}
	}
	return p, nil
}

func (p *Policy) add(label string) {
	if p.labels == nil {
		p.labels = map[string]bool{}
	}
	p.labels[label] = true
}

// Enabled reports whether the policy redacts anything.
func (p Policy) Enabled() bool {
	return p.numbers || p.aggressive || len(p.labels) > 0
}

// numberRedactionAlways are the types the numbers group redacts whatever
// their length.
var numberRedactionAlways = map[string]bool{
	LabelDate: true, LabelPhoneNumber: true, LabelCreditCard: true, LabelSSN: true,
}

// selects reports whether the policy redacts e.
func (p Policy) selects(e api.Entity) bool {
	numeric := e.Label != LabelEmailAddress && e.Label != LabelURL
	switch {
	case p.labels[e.Label]:
		return true
	case p.aggressive && numeric:
		return true
	case p.numbers && numeric:
		return numberRedactionAlways[e.Label] || countDigits(e.Value) >= 3
	}
	return false
}

// countDigits counts the ASCII digits in s.
func countDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			n++
		}
	}
	return n
}

// placeholderLabel is the type name written in a placeholder. Cardinals,
// ordinals and percentages are not redaction types of the service, so the
// numbers policies write them as NUMERICAL_PII, the service's type for
// other identifying numbers.
func placeholderLabel(label string) string {
	switch label {
	case LabelCardinal, LabelOrdinal, LabelPercent:
		return "NUMERICAL_PII"
	}
	return label
}

// Redact selects the entities the policy covers, from Detect's result on the
// same words, and returns the replacements to pass to format.Apply
// (Options.Replace) together with the entities, in which every redacted one
// has its Value (and RawValue, when present) replaced by its placeholder.
//
// Placeholders are "[TYPE_N]" as the service documents them: N counts the
// distinct values of each type in order of appearance, so a number spoken
// twice gets the same placeholder. Entities that overlap an earlier one or
// have an empty range are left alone.
func Redact(ents []api.Entity, p Policy) ([]format.Replacement, []api.Entity) {
	out := append([]api.Entity(nil), ents...)
	if !p.Enabled() {
		return nil, out
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return out[order[a]].StartWord < out[order[b]].StartWord })

	var reps []format.Replacement
	seen := map[string]map[string]int{}
	end := 0
	for _, i := range order {
		e := out[i]
		if e.StartWord < end || e.StartWord < 0 || e.EndWord <= e.StartWord || !p.selects(e) {
			continue
		}
		label := placeholderLabel(e.Label)
		if seen[label] == nil {
			seen[label] = map[string]int{}
		}
		n, ok := seen[label][e.Value]
		if !ok {
			n = len(seen[label]) + 1
			seen[label][e.Value] = n
		}
		ph := "[" + label + "_" + strconv.Itoa(n) + "]"
		reps = append(reps, format.Replacement{Span: format.Span{Start: e.StartWord, End: e.EndWord}, Text: ph})
		out[i].Value = ph
		if e.RawValue != "" {
			out[i].RawValue = ph
		}
		end = e.EndWord
	}
	return reps, out
}
