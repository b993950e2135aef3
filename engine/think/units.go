package think

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Unit conversions: "how many kilometres in five miles", "convert 3 feet
// to centimetres", "what is 100 fahrenheit in celsius".

// dimension is what a unit measures.
type dimension int

const (
	length dimension = iota
	mass
	volume
	temperature
	duration
	speed
	area
	data
)

// dimensionNames say a dimension after "one is" or "the other".
var dimensionNames = map[dimension]string{
	length: "a length", mass: "a mass", volume: "a volume", temperature: "a temperature",
	duration: "a time", speed: "a speed", area: "an area", data: "an amount of data",
}

// unit is a unit of measure. A value in it is value*factor+offset in the
// dimension's base unit (metre, kilogram, litre, kelvin, second, metre
// per second, square metre, byte).
type unit struct {
	singular, plural string
	dim              dimension
	factor, offset   float64
	// alias is what a unit said on its own may also mean: an ounce, a
	// mass, is a fluid ounce next to a volume.
	alias *unit
}

func (u *unit) name(v float64) string {
	if v == 1 {
		return u.singular
	}
	return u.plural
}

var fluidOunce = &unit{singular: "fluid ounce", plural: "fluid ounces", dim: volume, factor: 0.0295735295625}

// units are the units known, with the ways each is said or written.
// "metre" and "litre" are also found spelled "meter" and "liter".
var units = []struct {
	u       *unit
	phrases []string
}{
	{&unit{singular: "millimetre", plural: "millimetres", dim: length, factor: 0.001}, []string{"mm", "millimetre", "millimetres"}},
	{&unit{singular: "centimetre", plural: "centimetres", dim: length, factor: 0.01}, []string{"cm", "cms", "centimetre", "centimetres"}},
	{&unit{singular: "metre", plural: "metres", dim: length, factor: 1}, []string{"m", "metre", "metres"}},
	{&unit{singular: "kilometre", plural: "kilometres", dim: length, factor: 1000}, []string{"km", "kms", "kilometre", "kilometres", "klick", "klicks"}},
	{&unit{singular: "inch", plural: "inches", dim: length, factor: 0.0254}, []string{"inch", "inches"}},
	{&unit{singular: "foot", plural: "feet", dim: length, factor: 0.3048}, []string{"ft", "foot", "feet"}},
	{&unit{singular: "yard", plural: "yards", dim: length, factor: 0.9144}, []string{"yd", "yds", "yard", "yards"}},
	{&unit{singular: "mile", plural: "miles", dim: length, factor: 1609.344}, []string{"mi", "mile", "miles"}},
	{&unit{singular: "nautical mile", plural: "nautical miles", dim: length, factor: 1852}, []string{"nmi", "nautical mile", "nautical miles"}},

	{&unit{singular: "milligram", plural: "milligrams", dim: mass, factor: 1e-6}, []string{"mg", "milligram", "milligrams", "milligramme", "milligrammes"}},
	{&unit{singular: "gram", plural: "grams", dim: mass, factor: 0.001}, []string{"g", "gm", "gram", "grams", "gramme", "grammes"}},
	{&unit{singular: "kilogram", plural: "kilograms", dim: mass, factor: 1}, []string{"kg", "kgs", "kilo", "kilos", "kilogram", "kilograms", "kilogramme", "kilogrammes"}},
	{&unit{singular: "tonne", plural: "tonnes", dim: mass, factor: 1000}, []string{"t", "tonne", "tonnes", "metric ton", "metric tons", "ton", "tons"}},
	{&unit{singular: "ounce", plural: "ounces", dim: mass, factor: 0.028349523125, alias: fluidOunce}, []string{"oz", "ounce", "ounces"}},
	{&unit{singular: "pound", plural: "pounds", dim: mass, factor: 0.45359237}, []string{"lb", "lbs", "pound", "pounds"}},
	{&unit{singular: "stone", plural: "stone", dim: mass, factor: 6.35029318}, []string{"st", "stone", "stones"}},

	{&unit{singular: "millilitre", plural: "millilitres", dim: volume, factor: 0.001}, []string{"ml", "millilitre", "millilitres"}},
	{&unit{singular: "litre", plural: "litres", dim: volume, factor: 1}, []string{"l", "litre", "litres"}},
	{&unit{singular: "cubic metre", plural: "cubic metres", dim: volume, factor: 1000}, []string{"m3", "cubic metre", "cubic metres"}},
	{&unit{singular: "US gallon", plural: "US gallons", dim: volume, factor: 3.785411784}, []string{"gal", "gallon", "gallons", "us gallon", "us gallons"}},
	{&unit{singular: "imperial gallon", plural: "imperial gallons", dim: volume, factor: 4.54609}, []string{"imperial gallon", "imperial gallons", "uk gallon", "uk gallons"}},
	{&unit{singular: "US pint", plural: "US pints", dim: volume, factor: 0.473176473}, []string{"pt", "pint", "pints", "us pint", "us pints"}},
	{&unit{singular: "imperial pint", plural: "imperial pints", dim: volume, factor: 0.56826125}, []string{"imperial pint", "imperial pints", "uk pint", "uk pints"}},
	{&unit{singular: "cup", plural: "cups", dim: volume, factor: 0.2365882365}, []string{"cup", "cups"}},
	{fluidOunce, []string{"fl oz", "floz", "fluid ounce", "fluid ounces"}},
	{&unit{singular: "teaspoon", plural: "teaspoons", dim: volume, factor: 0.00492892159375}, []string{"tsp", "tsps", "teaspoon", "teaspoons"}},
	{&unit{singular: "tablespoon", plural: "tablespoons", dim: volume, factor: 0.01478676478125}, []string{"tbsp", "tbsps", "tablespoon", "tablespoons"}},

	{&unit{singular: "degree Celsius", plural: "degrees Celsius", dim: temperature, factor: 1, offset: 273.15},
		[]string{"c", "celsius", "centigrade", "degree celsius", "degrees celsius", "degree c", "degrees c", "degrees centigrade"}},
	{&unit{singular: "degree Fahrenheit", plural: "degrees Fahrenheit", dim: temperature, factor: 5.0 / 9, offset: 459.67 * 5 / 9},
		[]string{"f", "fahrenheit", "degree fahrenheit", "degrees fahrenheit", "degree f", "degrees f"}},
	{&unit{singular: "kelvin", plural: "kelvin", dim: temperature, factor: 1}, []string{"k", "kelvin", "kelvins", "degrees kelvin"}},

	{&unit{singular: "millisecond", plural: "milliseconds", dim: duration, factor: 0.001}, []string{"ms", "millisecond", "milliseconds"}},
	{&unit{singular: "second", plural: "seconds", dim: duration, factor: 1}, []string{"s", "sec", "secs", "second", "seconds"}},
	{&unit{singular: "minute", plural: "minutes", dim: duration, factor: 60}, []string{"min", "mins", "minute", "minutes"}},
	{&unit{singular: "hour", plural: "hours", dim: duration, factor: 3600}, []string{"h", "hr", "hrs", "hour", "hours"}},
	{&unit{singular: "day", plural: "days", dim: duration, factor: 86400}, []string{"day", "days"}},
	{&unit{singular: "week", plural: "weeks", dim: duration, factor: 604800}, []string{"wk", "wks", "week", "weeks"}},

	{&unit{singular: "kilometre per hour", plural: "kilometres per hour", dim: speed, factor: 1 / 3.6},
		[]string{"km / h", "km / hr", "kmh", "kph", "kmph", "kilometre per hour", "kilometres per hour", "kilometre an hour", "kilometres an hour", "km per hour", "kms per hour"}},
	{&unit{singular: "mile per hour", plural: "miles per hour", dim: speed, factor: 0.44704},
		[]string{"mph", "mile per hour", "miles per hour", "mile an hour", "miles an hour"}},
	{&unit{singular: "metre per second", plural: "metres per second", dim: speed, factor: 1},
		[]string{"m / s", "metre per second", "metres per second", "metre a second", "metres a second"}},
	{&unit{singular: "knot", plural: "knots", dim: speed, factor: 1852 / 3600.0}, []string{"kn", "kt", "kts", "knot", "knots"}},

	{&unit{singular: "square centimetre", plural: "square centimetres", dim: area, factor: 1e-4}, []string{"cm2", "sq cm", "square cm", "square centimetre", "square centimetres"}},
	{&unit{singular: "square metre", plural: "square metres", dim: area, factor: 1}, []string{"m2", "sq m", "square m", "square metre", "square metres"}},
	{&unit{singular: "square foot", plural: "square feet", dim: area, factor: 0.09290304}, []string{"sq ft", "square foot", "square feet"}},
	{&unit{singular: "square yard", plural: "square yards", dim: area, factor: 0.83612736}, []string{"sq yd", "square yard", "square yards"}},
	{&unit{singular: "hectare", plural: "hectares", dim: area, factor: 1e4}, []string{"ha", "hectare", "hectares"}},
	{&unit{singular: "acre", plural: "acres", dim: area, factor: 4046.8564224}, []string{"acre", "acres"}},
	{&unit{singular: "square kilometre", plural: "square kilometres", dim: area, factor: 1e6}, []string{"km2", "sq km", "square km", "square kilometre", "square kilometres"}},
	{&unit{singular: "square mile", plural: "square miles", dim: area, factor: 2589988.110336}, []string{"sq mi", "square mile", "square miles"}},

	{&unit{singular: "bit", plural: "bits", dim: data, factor: 0.125}, []string{"bit", "bits"}},
	{&unit{singular: "byte", plural: "bytes", dim: data, factor: 1}, []string{"byte", "bytes"}},
	{&unit{singular: "kilobyte", plural: "kilobytes", dim: data, factor: 1e3}, []string{"kb", "kilobyte", "kilobytes"}},
	{&unit{singular: "megabyte", plural: "megabytes", dim: data, factor: 1e6}, []string{"mb", "megabyte", "megabytes", "meg", "megs"}},
	{&unit{singular: "gigabyte", plural: "gigabytes", dim: data, factor: 1e9}, []string{"gb", "gigabyte", "gigabytes", "gig", "gigs"}},
	{&unit{singular: "terabyte", plural: "terabytes", dim: data, factor: 1e12}, []string{"tb", "terabyte", "terabytes"}},
	{&unit{singular: "kibibyte", plural: "kibibytes", dim: data, factor: 1 << 10}, []string{"kib", "kibibyte", "kibibytes"}},
	{&unit{singular: "mebibyte", plural: "mebibytes", dim: data, factor: 1 << 20}, []string{"mib", "mebibyte", "mebibytes"}},
	{&unit{singular: "gibibyte", plural: "gibibytes", dim: data, factor: 1 << 30}, []string{"gib", "gibibyte", "gibibytes"}},
}

// unitPhrases maps each way of saying a unit, as words separated by
// spaces, to the unit.
var unitPhrases = func() map[string]*unit {
	m := map[string]*unit{}
	for _, x := range units {
		for _, p := range x.phrases {
			m[p] = x.u
			m[strings.ReplaceAll(strings.ReplaceAll(p, "metre", "meter"), "litre", "liter")] = x.u
		}
	}
	return m
}()

// maxConversionWords is the most words a question about units has.
const maxConversionWords = 30

// maxUnitWords is the most words a unit is said in.
const maxUnitWords = 4

// unitAt reads the longest unit that starts words: the unit and the
// words it took.
func unitAt(words []string) (*unit, int) {
	for n := min(maxUnitWords, len(words)); n > 0; n-- {
		if u, ok := unitPhrases[strings.Join(words[:n], " ")]; ok {
			return u, n
		}
	}
	return nil, 0
}

// quantity is an amount of a unit.
type quantity struct {
	value float64
	u     *unit
}

// quantityAt reads a quantity that is all of words: a number and a unit
// ("five miles", "a pound", "minus forty celsius"); with bare, a unit
// alone is one of it.
func quantityAt(words []string, bare bool) (quantity, bool) {
	sign := 1.0
	if len(words) > 0 && (words[0] == "minus" || words[0] == "-" || words[0] == "negative") {
		sign, words = -1, words[1:]
	}
	for n := len(words) - 1; n >= 0; n-- {
		u, took := unitAt(words[n:])
		if u == nil || n+took != len(words) {
			continue
		}
		if n == 0 {
			return quantity{sign, u}, bare && sign > 0
		}
		if n == 1 && (words[0] == "a" || words[0] == "an") {
			return quantity{sign, u}, true
		}
		if v, ok := parseNumber(words[:n]); ok {
			return quantity{sign * v, u}, true
		}
	}
	return quantity{}, false
}

// fillers are words that may come before or between the parts of a
// conversion and mean nothing to it.
var fillers = map[string]bool{
	"what": true, "what's": true, "whats": true, "is": true, "are": true, "there": true, "convert": true, "change": true,
	"please": true, "can": true, "could": true, "would": true, "you": true, "tell": true, "me": true, "how": true,
	"much": true, "so": true, "do": true, "does": true, "it": true, "make": true, "makes": true, "equal": true,
	"equals": true, "exactly": true, "roughly": true, "about": true, "approximately": true, "hey": true, "and": true,
}

// connectors join the quantity to the unit it is converted to.
var connectors = map[string]bool{"in": true, "to": true, "into": true, "as": true, "is": true, "are": true, "equals": true, "make": true, "makes": true}

// thousands matches a digit group separator: "1,000".
var thousands = regexp.MustCompile(`(\d),(\d\d\d)`)

// digitsAndUnit matches a number written against its unit: "10km".
var digitsAndUnit = regexp.MustCompile(`^(\d+(?:\.\d+)?)([a-z]+\d?)$`)

// unitWords are the words of a question about units, the number and
// unit written together ("10km") taken apart.
func unitWords(text string) []string {
	var out []string
	for _, w := range tokens(withoutThousands(text)) {
		if m := digitsAndUnit.FindStringSubmatch(w); m != nil && unitPhrases[m[2]] != nil {
			out = append(out, m[1], m[2])
			continue
		}
		out = append(out, w)
	}
	return out
}

// convertUnits answers a question that converts a quantity to another
// unit.
func convertUnits(text string) (string, bool) {
	words := unitWords(text)
	if len(words) > maxConversionWords {
		return "", false
	}
	for len(words) > 0 && (words[len(words)-1] == "please" || words[len(words)-1] == "exactly") {
		words = words[:len(words)-1]
	}
	if from, to, ok := howMany(words); ok {
		return conversion(from, to), true
	}
	if from, to, ok := quantityToUnit(words); ok {
		return conversion(from, to), true
	}
	return "", false
}

// howMany reads "how many ounces [are there] in a pound".
func howMany(words []string) (quantity, *unit, bool) {
	for i := 0; i+2 < len(words); i++ {
		if words[i] != "how" || words[i+1] != "many" && words[i+1] != "much" {
			continue
		}
		if !allFillers(words[:i]) {
			return quantity{}, nil, false
		}
		to, took := unitAt(words[i+2:])
		if to == nil {
			return quantity{}, nil, false
		}
		rest := words[i+2+took:]
		for len(rest) > 0 && (fillers[rest[0]] || connectors[rest[0]]) {
			if _, ok := quantityAt(rest, false); ok {
				break
			}
			rest = rest[1:]
		}
		from, ok := quantityAt(rest, true)
		return from, to, ok
	}
	return quantity{}, nil, false
}

// quantityToUnit reads "[convert] 3 feet to centimetres", "what is 100
// fahrenheit in celsius", "5 miles is how many km".
func quantityToUnit(words []string) (quantity, *unit, bool) {
	for start := 0; start < len(words); start++ {
		if !allFillers(words[:start]) {
			break
		}
		for mid := start + 1; mid < len(words); mid++ {
			if !connectors[words[mid]] {
				continue
			}
			from, ok := quantityAt(words[start:mid], false)
			if !ok {
				continue
			}
			rest := words[mid+1:]
			if len(rest) >= 2 && rest[0] == "how" && (rest[1] == "many" || rest[1] == "much") {
				rest = rest[2:]
			}
			if to, took := unitAt(rest); to != nil && took == len(rest) {
				return from, to, true
			}
		}
	}
	return quantity{}, nil, false
}

func allFillers(words []string) bool {
	for _, w := range words {
		if !fillers[w] {
			return false
		}
	}
	return true
}

// Measures are said in digits from minMeasure to maxMeasure.
const (
	minMeasure = 1e-9
	maxMeasure = 1e15
)

// conversion says a quantity in another unit, or why it cannot.
func conversion(from quantity, to *unit) string {
	fu := from.u
	if fu.dim != to.dim {
		switch {
		case fu.alias != nil && fu.alias.dim == to.dim:
			fu = fu.alias
		case to.alias != nil && to.alias.dim == fu.dim:
			to = to.alias
		default:
			return "I cannot convert " + fu.plural + " to " + to.plural + ": one is " + dimensionNames[fu.dim] + " and the other " + dimensionNames[to.dim] + "."
		}
	}
	base := from.value*fu.factor + fu.offset
	v := (base - to.offset) / to.factor
	if math.IsInf(v, 0) || math.IsNaN(v) || math.Abs(v) >= maxMeasure || math.Abs(from.value) >= maxMeasure {
		return "That is too large a number for me to convert."
	}
	if v != 0 && math.Abs(v) < minMeasure {
		return "In " + to.plural + " that is too small to say."
	}
	said, exact := sayMeasure(v)
	is := " is about "
	if exact {
		is = " is "
	}
	shown := v
	if !exact {
		shown = roundSignificant(v, 3)
	}
	return sentence(sayNumber(from.value) + " " + fu.name(from.value) + is + said + " " + to.name(shown) + ".")
}

// sayMeasure says a measure: whole numbers in words (as spell does);
// other numbers exactly when they are short (an inch is 2.54
// centimetres, zero kelvin minus 273.15 degrees Celsius), others to
// three significant digits. exact is false when the number
// said was rounded.
func sayMeasure(v float64) (said string, exact bool) {
	clean := roundSignificant(v, 12) // float noise: 212 °F is 100 °C, not 99.99999999999997
	if clean == math.Trunc(clean) && math.Abs(clean) < 1e15 {
		return spell(clean), true
	}
	if digits, decimals := significantDigits(clean); digits <= 4 || digits <= 6 && decimals <= 2 {
		return decimal(clean), true
	}
	r := roundSignificant(v, 3)
	if r == math.Trunc(r) {
		return spell(r), false
	}
	return decimal(r), false
}

// sayNumber says a number as it was given: whole numbers in words.
func sayNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return spell(v)
	}
	return decimal(v)
}

// decimal writes a number that is not whole in digits, "minus" for its
// sign.
func decimal(v float64) string {
	if v < 0 {
		return "minus " + decimal(-v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// roundSignificant rounds v to n significant digits.
func roundSignificant(v float64, n int) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', n, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// significantDigits counts the significant digits of v, and its digits
// after the point, in the shortest decimal that reads back as v.
func significantDigits(v float64) (digits, decimals int) {
	s := strconv.FormatFloat(math.Abs(v), 'e', -1, 64)
	mantissa, exp, _ := strings.Cut(s, "e")
	digits = len(strings.ReplaceAll(mantissa, ".", ""))
	e, _ := strconv.Atoi(exp)
	return digits, max(0, digits-1-e)
}
