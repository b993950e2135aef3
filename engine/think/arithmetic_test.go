package think

import (
	"errors"
	"testing"
)

// TestParseExpr reads expressions into trees: what the tree says back,
// and what it is worth.
func TestParseExpr(t *testing.T) {
	for _, tt := range []struct {
		in, said string
		value    float64
	}{
		{"2+3*4", "two plus three times four", 14},
		{"two plus three times four", "two plus three times four", 14},
		{"(2+3)*4", "open bracket two plus three close bracket times four", 20},
		{"open brackets two plus three closed bracket times four", "open bracket two plus three close bracket times four", 20},
		{"2*(3+4)", "two times open bracket three plus four close bracket", 14},
		{"[2+3]/5", "open bracket two plus three close bracket divided by five", 1},
		{"10-3-2", "ten minus three minus two", 5},
		{"10-(3-2)", "ten minus open bracket three minus two close bracket", 9},
		{"12/2/3", "twelve divided by two divided by three", 2},
		{"12/(2/3)", "twelve divided by open bracket two divided by three close bracket", 18},
		{"2^3^2", "two to the power of three to the power of two", 512},
		{"(2^3)^2", "open bracket two to the power of three close bracket to the power of two", 64},
		{"2 to the power of -1", "two to the power of minus one", 0.5},
		{"-2 squared", "minus two squared", -4},
		{"(-2) squared", "open bracket minus two close bracket squared", 4},
		{"(2+3) cubed", "open bracket two plus three close bracket cubed", 125},
		{"square root of 9 plus 7", "the square root of nine plus seven", 10},
		{"square root of (9 plus 7)", "the square root of open bracket nine plus seven close bracket", 4},
		{"(square root of 9) squared", "open bracket the square root of nine close bracket squared", 9},
		{"√81", "the square root of eighty-one", 9},
		{"cube root of 27", "the cube root of twenty-seven", 3},
		{"15 % of 80", "fifteen percent of eighty", 12},
		{"10 per cent of 50 percent of 200", "ten percent of fifty percent of two hundred", 10},
		{"100 divided by 50 percent of 10", "one hundred divided by fifty percent of ten", 20},
		{"(1 + 1) percent of 50", "open bracket one plus one close bracket percent of fifty", 1},
		{"minus minus five", "minus minus five", 5},
		{"negative five times 2", "minus five times two", -10},
		{"2x3", "two times three", 6},
		{"0x10", "zero times ten", 0},
		{"6 ÷ 3 × 2", "six divided by three times two", 4},
		{"ten over four", "ten divided by four", 2.5},
		{"two thousand three hundred and six", "two thousand three hundred and six", 2306},
		{"two million three hundred thousand and six", "2300006", 2300006},
		{"a hundred and one", "one hundred and one", 101},
		{"a million", "1000000", 1e6},
		{"five million", "5000000", 5e6},
		{"5 thousand", "five thousand", 5000},
		{"twenty five", "twenty-five", 25},
		{"three point one four", "3.14", 3.14},
		{"point five", "0.5", 0.5},
		{".5", "0.5", 0.5},
		{"1,000,000", "1000000", 1e6},
		{"zero", "zero", 0},
	} {
		e, ok := parseExpr(mathTokens(tt.in))
		if !ok {
			t.Errorf("%q not read", tt.in)
			continue
		}
		v, err := e.value()
		if got := e.say(); got != tt.said || err != nil || v != tt.value {
			t.Errorf("%q says %q and is %v (%v); want %q and %v", tt.in, got, v, err, tt.said, tt.value)
		}
	}
	// Not read in full: nothing is answered from a part.
	for _, in := range []string{"", "2 +", "+ 2", "(2+3", "2+3)", "2 3", "five twenty", "two and three", "x 2",
		"two plus three apples", "plus", "2 plus plus 3", "one hundred hundred", "a thousand thousand", "two zero",
		"percent of 5", "5 percent", "squared", "square root of", "1.2.3", "inf", "nan", "1e999",
		"twenty-twenty", "one three", "point", "open bracket close bracket"} {
		if e, ok := parseExpr(mathTokens(in)); ok {
			t.Errorf("%q read as %q", in, e.say())
		}
	}
}

// TestExprErrors: what has no value says why.
func TestExprErrors(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want error
	}{
		{"1/0", errDivideByZero},
		{"0/0", errDivideByZero},
		{"5 / (2 - 2)", errDivideByZero},
		{"0 to the power of -1", errDivideByZero},
		{"square root of -4", errNotReal},
		{"(-8) to the power of 0.5", errNotReal},
		{"10^100", errTooLarge},
		{"1e300 * 1e300", errTooLarge},
		{"1e20", errTooLarge},
	} {
		e, ok := parseExpr(mathTokens(tt.in))
		if !ok {
			t.Errorf("%q not read", tt.in)
			continue
		}
		if _, err := e.value(); !errors.Is(err, tt.want) {
			t.Errorf("%q: %v, want %v", tt.in, err, tt.want)
		}
	}
}

func TestSayResult(t *testing.T) {
	for _, tt := range []struct {
		v     float64
		said  string
		about bool
	}{
		{14, "fourteen", false},
		{-3, "minus three", false},
		{2.5, "2.5", false},
		{0.1 + 0.2, "0.3", false},
		{1.0 / 3, "0.3333", true},
		{-2.0 / 3, "minus 0.6667", true},
		{22.0 / 7, "3.1429", true},
		{1e6 / 3, "333333.3333", true},
		{0.000001, "0.000001", false},
		{1e-9 / 3, "zero", true},
		{9e6, "9000000", false},
	} {
		if said, about := sayResult(tt.v); said != tt.said || about != tt.about {
			t.Errorf("sayResult(%v) = %q, %v; want %q, %v", tt.v, said, about, tt.said, tt.about)
		}
	}
}

// FuzzExpression: the parser never panics, and what it reads says back
// as words that read as the same expression.
func FuzzExpression(f *testing.F) {
	for _, s := range []string{"2+3*4", "(2+3)*4", "what's 15% of 80", "minus two squared", "square root of (9 plus 7)",
		"2^3^2", "open bracket one close bracket", "two thousand and five", "three point one four", "1e300*1e300",
		"((((((((1))))))))", "- - - 1", "√√16", "1,000,000.5", "twenty-five percent of 4 cubed"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = arithmetic(s)
		_ = looksLikeArithmetic(s)
		e, ok := parseExpr(mathTokens(s))
		if !ok {
			return
		}
		v, err := e.value()
		said := e.say()
		again, ok := parseExpr(mathTokens(said))
		if !ok {
			t.Fatalf("%q says %q, which does not read back", s, said)
		}
		if got := again.say(); got != said {
			t.Fatalf("%q says %q, which reads back as %q", s, said, got)
		}
		if v2, err2 := again.value(); v2 != v && !(v != v && v2 != v2) || !errors.Is(err2, err) && err2 != err {
			t.Fatalf("%q is %v (%v); read back, %v (%v)", s, v, err, v2, err2)
		}
	})
}
