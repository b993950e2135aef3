// Package entity finds entities in the local recogniser's words and redacts
// them, for detect_entities=true and redact=... on /v1/listen.
//
// Detection is rule-based and deterministic. It uses the number, date, time
// and address rules of package format (format.Scan) on the spoken words, so
// an entity's written value is exactly what smart formatting writes. It finds
// only what those rules recognise, with the service's upper-case labels:
//
//	CARDINAL       twenty five, a hundred, three point five, two; runs of
//	               single digits that are nothing more specific. A lone "one"
//	               is never a number ("one of them", "the one I want").
//	ORDINAL        third -> 3rd, twenty first -> 21st
//	MONEY          ten dollars -> $10, five dollars and fifty cents -> $5.50, euros
//	PERCENT        five percent -> 5%
//	DATE           month with day and/or year, "fourth of july", spoken years
//	               (nineteen eighty four -> 1984)
//	TIME           three thirty p m -> 3:30 PM, three o'clock, "at five thirty"
//	PHONE_NUMBER   7, 10, or 11 (leading 1) spoken digits
//	SSN            9 spoken digits after "social security", "ssn" or "s s n",
//	               or within eight words after another SSN
//	CREDIT_CARD    13 to 19 spoken digits that pass the Luhn check
//	EMAIL_ADDRESS  jane at example dot com
//	URL            example dot com (a fixed list of top-level domains)
//
// Not detected: names, organisations, places, addresses, dates of birth as
// such, card expiry dates and CVVs, account and other identifying numbers
// (beyond their being digit runs), health information, and anything in a
// language other than English.
//
// Entities index the spoken words: StartWord is the first word, EndWord one
// past the last, as the service sends them. Value is the written form and
// RawValue the spoken words; Unformatted gives the service's shape without
// formatting. Confidence is the lowest confidence of the entity's words.
//
// # Redaction
//
// ParsePolicy reads the redact values; Redact picks the detected entities
// they cover and returns format.Replacements, which format.Apply writes as
// one word each, "[TYPE_N]" as the service documents ("My social security
// number is [SSN_1] and his is [SSN_2]"), keeping the span's timing. N
// counts distinct values per type. Covered values:
//
//	pci                 CREDIT_CARD (not expiry dates or CVVs, which are not detected)
//	pii                 SSN, PHONE_NUMBER, EMAIL_ADDRESS, DATE, URL (not names or places)
//	numbers, true       DATE, PHONE_NUMBER, CREDIT_CARD and SSN, plus every other
//	                    number written with three or more digits
//	aggressive_numbers  every numeric entity, whatever its length
//	credit_card, ssn, phone_number, email_address, date, time, money, url
//	false               nothing
//
// Cardinals, ordinals and percentages redacted by the numbers policies are
// written [NUMERICAL_PII_N]: the service documents cardinal, ordinal and
// percent as invalid redact types and does not document a placeholder for
// bare numbers, so the engine uses its catch-all numeric type. Unknown
// values, including cardinal, ordinal and percent, give ErrUnknownRedaction;
// values the service accepts but the engine cannot honour (phi, name,
// location, cvv and the other documented types it does not detect) give
// ErrUnsupportedRedaction, so a request for redaction the engine cannot do
// fails instead of returning the data in clear. Both come wrapped in a
// *RedactionError naming the value; the server answers 400 with its text.
//
// # Use in the server
//
//	ents := entity.Detect(words, boundaries)            // spoken-word indexes
//	pol, err := entity.ParsePolicy(query["redact"])      // 400 on err
//	reps, ents := entity.Redact(ents, pol)               // placeholders in ents too
//	res := format.Apply(words, format.Options{..., Boundaries: boundaries, Replace: reps})
//	ents = res.RemapEntities(ents)                       // output-word indexes
//	if !smartFormat { ents = entity.Unformatted(ents) }
package entity
