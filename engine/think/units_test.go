package think

import (
	"math"
	"testing"
)

func TestConvertUnits(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"how many kilometres in five miles", "Five miles is about 8.05 kilometres."},
		{"convert 3 feet to centimetres", "Three feet is 91.44 centimetres."},
		{"what is 100 fahrenheit in celsius", "One hundred degrees Fahrenheit is about 37.8 degrees Celsius."},
		{"two pounds in kilograms", "Two pounds is about 0.907 kilograms."},
		{"how many ounces in a pound", "One pound is sixteen ounces."},
		{"10 km to miles", "Ten kilometres is about 6.21 miles."},
		{"what's 5 litres in gallons", "Five litres is about 1.32 US gallons."},
		{"convert 5 kilograms to metres", "I cannot convert kilograms to metres: one is a mass and the other a length."},
		{"how many square feet in an acre", "One acre is forty-three thousand five hundred and sixty square feet."},
		// Spellings, abbreviations, plurals, numbers in words and digits.
		{"convert five meters to feet", "Five metres is about 16.4 feet."},
		{"What's 10km in miles?", "Ten kilometres is about 6.21 miles."},
		{"how many liters are there in a US gallon", "One US gallon is about 3.79 litres."},
		{"what is one hundred and twenty five grams in ounces", "One hundred and twenty-five grams is about 4.41 ounces."},
		{"12 stone in kg", "Twelve stone is about 76.2 kilograms."},
		{"1 nautical mile in metres", "One nautical mile is one thousand eight hundred and fifty-two metres."},
		{"convert 2.5 tbsp to tsp", "2.5 tablespoons is 7.5 teaspoons."},
		{"how many cups in 16 fluid ounces", "Sixteen fluid ounces is two cups."},
		{"how many cups in 8 ounces", "Eight fluid ounces is one cup."},
		{"how many ml in a pint", "One US pint is about four hundred and seventy-three millilitres."},
		{"how many seconds in a day", "One day is eighty-six thousand four hundred seconds."},
		{"what is 3 weeks in hours", "Three weeks is five hundred and four hours."},
		{"60 mph in km/h", "Sixty miles per hour is about 96.6 kilometres per hour."},
		{"10 m/s in knots", "Ten metres per second is about 19.4 knots."},
		{"what is 2 hectares in acres", "Two hectares is about 4.94 acres."},
		{"how many square kilometres in a square mile", "One square mile is about 2.59 square kilometres."},
		{"how many megabytes in a gigabyte", "One gigabyte is one thousand megabytes."},
		{"how many bytes in a kibibyte", "One kibibyte is one thousand and twenty-four bytes."},
		{"what is 212 fahrenheit in celsius", "Two hundred and twelve degrees Fahrenheit is one hundred degrees Celsius."},
		{"what is -40 c in f", "Minus forty degrees Celsius is minus forty degrees Fahrenheit."},
		{"convert minus 10 degrees celsius to fahrenheit", "Minus ten degrees Celsius is fourteen degrees Fahrenheit."},
		{"convert 0 kelvin to celsius", "Zero kelvin is minus 273.15 degrees Celsius."},
		{"what is 1,000 metres in miles", "One thousand metres is about 0.621 miles."},
		{"5 miles is how many km", "Five miles is about 8.05 kilometres."},
		{"how many kilometres is a mile", "One mile is about 1.61 kilometres."},
		{"convert 3 hours to kilograms", "I cannot convert hours to kilograms: one is a time and the other a mass."},
		{"how many acres in a gigabyte", "I cannot convert gigabytes to acres: one is an amount of data and the other an area."},
		{"convert 1e300 km to mm", "That is too large a number for me to convert."},
	} {
		got, ok := convertUnits(tt.in)
		if !ok || got != tt.want {
			t.Errorf("convertUnits(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
	for _, in := range []string{
		"what day is it today", "what time is it", "what is two plus two", "tell me about the weather in paris",
		"how many people live in paris", "convert dollars to euros", "what is 5 in 3", "how many", "how many miles",
		"what is a day in a week", "the 5 km race to the sea", "5 miles", "in km",
	} {
		if got, ok := convertUnits(in); ok {
			t.Errorf("convertUnits(%q) = %q; want no answer", in, got)
		}
	}
}

func TestSayMeasure(t *testing.T) {
	for _, tt := range []struct {
		v     float64
		said  string
		exact bool
	}{
		{16, "sixteen", true}, {2.54, "2.54", true}, {0.3048, "0.3048", true}, {-273.15, "minus 273.15", true},
		{8.04672, "8.05", false}, {1609.344, "one thousand six hundred and ten", false}, {99.99999999999997, "one hundred", true},
		{0.000621371, "0.000621", false}, {2589988.110336, "2590000", false}, {1e9, "1000000000", true},
	} {
		said, exact := sayMeasure(tt.v)
		if said != tt.said || exact != tt.exact {
			t.Errorf("sayMeasure(%v) = %q, %v; want %q, %v", tt.v, said, exact, tt.said, tt.exact)
		}
	}
}

func TestUnitFactors(t *testing.T) {
	for phrase, u := range unitPhrases {
		if u.factor <= 0 || u.singular == "" || u.plural == "" || dimensionNames[u.dim] == "" {
			t.Errorf("%q: %+v", phrase, u)
		}
	}
	for _, phrase := range []string{"kilometer", "kilometre", "liters", "litres", "square meters", "cubic meter"} {
		if unitPhrases[phrase] == nil {
			t.Errorf("%q is not a unit", phrase)
		}
	}
	// The temperatures meet where they should: 32 F, 0 C and 273.15 K.
	c, f, k := unitPhrases["celsius"], unitPhrases["fahrenheit"], unitPhrases["kelvin"]
	if v := 32*f.factor + f.offset; math.Abs(v-c.offset) > 1e-9 || math.Abs(v-273.15*k.factor) > 1e-9 {
		t.Errorf("32 F is %v K", v)
	}
}

func FuzzConvertUnits(f *testing.F) {
	for _, s := range []string{"how many kilometres in five miles", "convert -1e308 km to mm", "how many how many", "5 5 5 in in in", "minus minus 3 c to f", "a a a km to mi"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, ok := convertUnits(s); ok && got == "" {
			t.Fatalf("an empty answer to %q", s)
		}
	})
}
