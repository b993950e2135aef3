package think

import (
	"path"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The time and the date: here, or in a place named by Go's time-zone
// database ("Tokyo", "New York", "UTC", "Europe/Paris"); today,
// tomorrow, yesterday, and the days of holidays on fixed dates. A place
// or a day the assistant does not know is refused, never answered with
// the time here or today's date.

// clockQuestion is a question about the time or a day.
type clockQuestion struct {
	time  bool   // the time; else a day
	place string // where, as it was said; "" for here
	day   string // the day asked about, as it was said: "today", "christmas"
}

// Questions about the time and days. politeLead and the words around
// are matched in any case; the place keeps the case it was written in.
var (
	// askTime: "what time is it [now] [in Tokyo]", "what's the time".
	askTime = regexp.MustCompile(`(?i)^` + politeLead + `(?:what(?:'s| is|s)? the (?:current |local )?time|what time is it|what time|(?:the )?(?:current |local )?time)(?: (?:now|right now|at the moment|currently))?(?: (?:in|at) (?P<place>.+?))?(?: (?:now|right now|at the moment|currently))?$`)
	// askDate: "what day is it [in Tokyo] [tomorrow]", "what is
	// today's date", "the date".
	askDate = regexp.MustCompile(`(?i)^` + politeLead + `(?:(?:what|which)(?:'s| is| was| will be|s)? (?:the )?(?:(?P<day>today|tomorrow|yesterday)(?:'s|s)? )?(?:day|date)(?: of the (?:week|month))?(?: (?:is|was|will be) it)?|(?:the )?(?:(?P<day2>today|tomorrow|yesterday)(?:'s|s)? )?date)(?: (?:in|at) (?P<place>.+?))?(?: (?P<day3>today|now|tomorrow|yesterday))?$`)
	// askDay: "what day is christmas", "when is new year's eve", "what
	// day does halloween fall on", "what is tomorrow".
	askDay   = regexp.MustCompile(`(?i)^` + politeLead + `(?:(?:what|which) (?:day|date)(?: of the (?:week|month))? (?:is|was|will|will be|does|did) |when(?:'s| is| was| will be| does| did|s) |what(?:'s| is|s) the date (?:of|for) )(?P<day>.+?)(?: (?:fall on|falls on|fall|land on|be on|be|on|this year))?$`)
	askToday = regexp.MustCompile(`(?i)^` + politeLead + `(?:what(?:'s| is| was|s) )?(?P<day>today|tomorrow|yesterday)$`)
)

// askedClock reads a question about the time or a day.
func askedClock(text string) (clockQuestion, bool) {
	text = strings.NewReplacer("’", "'", ",", " ", "?", " ", "!", " ", ";", " ").Replace(text)
	text = strings.TrimRight(strings.Join(strings.Fields(text), " "), ".")
	if m := askTime.FindStringSubmatch(text); m != nil {
		return clockQuestion{time: true, place: m[askTime.SubexpIndex("place")]}, true
	}
	for _, re := range []*regexp.Regexp{askDate, askDay, askToday} {
		m := re.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		q := clockQuestion{day: "today"}
		for i, name := range re.SubexpNames() {
			switch {
			case name == "place":
				q.place = m[i]
			case strings.HasPrefix(name, "day") && m[i] != "":
				q.day = strings.ToLower(m[i])
			}
		}
		return q, true
	}
	return clockQuestion{}, false
}

// clock answers a question about the time or a day; ok is false when
// the place or the day is not known.
func (a Assistant) clock(q clockQuestion) (answer string, ok bool) {
	now := a.now()
	where := ""
	if q.place != "" {
		loc, name, ok := zoneNamed(q.place)
		if !ok {
			return "", false
		}
		now, where = now.In(loc), "In "+name+" "
	}
	if q.time {
		if where == "" {
			return "It is " + now.Format("3:04 PM") + ".", true
		}
		return where + "it is " + now.Format("3:04 PM") + " on " + now.Format("Monday") + ".", true
	}
	const day = "Monday, 2 January 2006"
	if where != "" {
		where = where[:len(where)-1] + ", "
	}
	switch q.day {
	case "today", "now":
		return sentence(where + "today is " + now.Format(day) + "."), true
	case "tomorrow":
		return sentence(where + "tomorrow is " + now.AddDate(0, 0, 1).Format(day) + "."), true
	case "yesterday":
		return sentence(where + "yesterday was " + now.AddDate(0, 0, -1).Format(day) + "."), true
	}
	h, ok := holidayNamed(q.day)
	if !ok {
		return "", false
	}
	this := time.Date(now.Year(), h.month, h.day, 0, 0, 0, 0, now.Location())
	switch today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location()); {
	case this.Equal(today):
		return h.name + " is today, " + this.Format(day) + ".", true
	case this.After(today):
		return h.name + " is on " + this.Format(day) + ".", true
	}
	return h.name + " was on " + this.Format(day) + ". Next year it is on " + this.AddDate(1, 0, 0).Format(day) + ".", true
}

// clockRefusal says why a question about the time or a day is not
// answered.
func clockRefusal(q clockQuestion) string {
	if q.place != "" {
		if _, _, ok := zoneNamed(q.place); !ok {
			return "I do not know the time zone of " + q.place + ". I know cities such as Tokyo and New York, and zones such as UTC."
		}
	}
	return "I do not know when " + q.day + " is. I know today's date, and the days of holidays on fixed dates, such as Christmas."
}

// now is the assistant's clock.
func (a Assistant) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// holiday is a holiday on the same date every year.
type holiday struct {
	names []string // as asked, lower-case, without apostrophes
	name  string
	month time.Month
	day   int
}

var holidays = []holiday{
	{[]string{"christmas", "christmas day", "xmas"}, "Christmas Day", time.December, 25},
	{[]string{"christmas eve"}, "Christmas Eve", time.December, 24},
	{[]string{"boxing day"}, "Boxing Day", time.December, 26},
	{[]string{"new years eve"}, "New Year's Eve", time.December, 31},
	{[]string{"new years day", "new years", "new year"}, "New Year's Day", time.January, 1},
	{[]string{"valentines day", "valentines", "saint valentines day", "st valentines day"}, "Valentine's Day", time.February, 14},
	{[]string{"saint patricks day", "st patricks day", "st. patricks day"}, "Saint Patrick's Day", time.March, 17},
	{[]string{"april fools day", "april fools"}, "April Fools' Day", time.April, 1},
	{[]string{"halloween"}, "Halloween", time.October, 31},
}

func holidayNamed(said string) (holiday, bool) {
	said = strings.TrimPrefix(strings.ReplaceAll(strings.ToLower(said), "'", ""), "the ")
	for _, h := range holidays {
		for _, n := range h.names {
			if n == said {
				return h, true
			}
		}
	}
	return holiday{}, false
}

// zoneAreas are the areas of the time-zone database ("Asia" in
// Asia/Tokyo), in the order a city is looked for in them.
var zoneAreas = []string{"Europe", "America", "Asia", "Africa", "Australia", "Pacific", "Atlantic", "Indian",
	"Antarctica", "Arctic", "America/Argentina", "America/Indiana", "America/Kentucky", "America/North_Dakota"}

// zoneName is what a zone's name may be; it keeps paths such as
// "../x" from the loader.
var zoneName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z][A-Za-z0-9_+-]*)*$`)

// notPlaces are names the loader knows that name no place.
var notPlaces = set("local", "factory", "posixrules")

// linkWords are the small words of cities' names, written lower-case
// in the database: Dar_es_Salaam, Port-au-Prince.
var linkWords = set("es", "au", "de", "du", "la", "le", "of")

// zoneNamed finds the time zone of a place named as the database names
// it: a zone ("Europe/Paris", "UTC", "Japan") or a zone's city ("Paris",
// "new york", "buenos aires"). name is the place as said: the city.
func zoneNamed(place string) (loc *time.Location, name string, ok bool) {
	place = strings.TrimSpace(strings.NewReplacer("'", "", ".", "").Replace(place))
	if len(place) > 4 && strings.EqualFold(place[:4], "the ") {
		place = place[4:]
	}
	for _, c := range zoneCandidates(place) {
		if !zoneName.MatchString(c) || notPlaces[strings.ToLower(path.Base(c))] {
			continue
		}
		if loc, err := time.LoadLocation(c); err == nil {
			return loc, strings.ReplaceAll(path.Base(c), "_", " "), true
		}
	}
	if n := len(place); n > 5 && strings.EqualFold(place[n-5:], " city") {
		return zoneNamed(place[:n-5]) // New York City
	}
	return nil, "", false
}

// zoneCandidates are the database's names a place may be said for.
func zoneCandidates(place string) []string {
	if strings.Contains(place, "/") {
		parts := strings.Split(place, "/")
		for i, p := range parts {
			parts[i] = joinTitled(strings.FieldsFunc(p, func(r rune) bool { return r == '_' || r == ' ' }), "_", false)
		}
		return []string{place, strings.Join(parts, "/")}
	}
	words := strings.FieldsFunc(place, func(r rune) bool { return r == '_' || r == ' ' })
	if len(words) == 0 {
		return nil
	}
	names := []string{joinTitled(words, "_", false), joinTitled(words, "_", true), joinTitled(words, "-", true)}
	if len(words) == 1 && len(words[0]) <= 5 {
		names = append(names, strings.ToUpper(words[0])) // UTC, GMT, EST
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		for _, c := range append([]string{n}, prefixed(zoneAreas, n)...) {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

func prefixed(areas []string, name string) []string {
	out := make([]string, len(areas))
	for i, a := range areas {
		out[i] = a + "/" + name
	}
	return out
}

// joinTitled joins words with sep, each with a capital; with link, the
// linking words lower-case.
func joinTitled(words []string, sep string, link bool) string {
	out := make([]string, len(words))
	for i, w := range words {
		w = strings.ToLower(w)
		if !link || !linkWords[w] || i == 0 {
			r, n := utf8.DecodeRuneInString(w)
			w = string(unicode.ToUpper(r)) + w[n:]
		}
		out[i] = w
	}
	return strings.Join(out, sep)
}
