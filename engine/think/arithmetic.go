package think

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// Arithmetic: the whole question is read as one expression, with the
// usual precedence, or it is not answered. "What is two plus three times
// four" is fourteen; "what is two plus three apples" is not five.

// op is what an expression node does.
type op int

const (
	opNum op = iota
	opAdd
	opSub
	opMul
	opDiv
	opPercent // x percent of y
	opNeg
	opSqrt
	opCbrt
	opPow
	opSquare
	opCube
)

// expr is an arithmetic expression: a number, or an operation on x (and
// y for the binary ones).
type expr struct {
	op   op
	num  float64
	x, y *expr
}

// The ways each operation is said and written, longest first where one
// begins another.
var (
	plusWords    = phrases("plus", "+")
	minusWords   = phrases("minus", "-", "less")
	timesWords   = phrases("times", "*", "x", "×", "multiplied by")
	divideWords  = phrases("divided by", "over", "/", "÷")
	percentWords = phrases("percent of", "per cent of", "% of")
	negWords     = phrases("minus", "negative", "-")
	sqrtWords    = phrases("the square root of", "square root of", "√", "sqrt of", "sqrt")
	cbrtWords    = phrases("the cube root of", "cube root of")
	powerWords   = phrases("to the power of", "raised to the power of", "to the power", "raised to", "^")
	openWords    = phrases("(", "[", "open bracket", "open brackets", "open parenthesis", "open parentheses", "open paren", "left bracket", "left parenthesis")
	closeWords   = phrases(")", "]", "close bracket", "close brackets", "closed bracket", "close parenthesis", "close parentheses", "close paren", "right bracket", "right parenthesis")
)

// phrases splits each phrase into its words.
func phrases(ps ...string) [][]string {
	out := make([][]string, len(ps))
	for i, p := range ps {
		out[i] = strings.Fields(p)
	}
	return out
}

// maxExprWords bounds an expression, and so the parser's recursion.
const maxExprWords = 80

// parseExpr reads all of words as one expression; ok is false when any
// word is left over.
func parseExpr(words []string) (e *expr, ok bool) {
	if len(words) == 0 || len(words) > maxExprWords {
		return nil, false
	}
	p := &exprParser{words: words}
	e = p.sum()
	return e, e != nil && p.pos == len(words)
}

// exprParser is a recursive descent parser, one method per level of
// precedence; each returns nil when the words there are no expression.
type exprParser struct {
	words []string
	pos   int
}

// accept moves past the first of ps that comes next.
func (p *exprParser) accept(ps [][]string) bool {
	for _, ws := range ps {
		if len(p.words)-p.pos >= len(ws) && equal(p.words[p.pos:p.pos+len(ws)], ws) {
			p.pos += len(ws)
			return true
		}
	}
	return false
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// binary reads next { op next }, left to right, for the operators ops.
func (p *exprParser) binary(next func() *expr, ops map[op][][]string, order ...op) *expr {
	e := next()
	for e != nil {
		found := false
		for _, o := range order {
			if p.accept(ops[o]) {
				y := next()
				if y == nil {
					return nil
				}
				e, found = &expr{op: o, x: e, y: y}, true
				break
			}
		}
		if !found {
			return e
		}
	}
	return nil
}

func (p *exprParser) sum() *expr {
	return p.binary(p.product, map[op][][]string{opAdd: plusWords, opSub: minusWords}, opAdd, opSub)
}

func (p *exprParser) product() *expr {
	return p.binary(p.percent, map[op][][]string{opMul: timesWords, opDiv: divideWords}, opMul, opDiv)
}

// percent reads "fifteen percent of eighty"; it binds tighter than
// times, and from the right: ten percent of fifty percent of x.
func (p *exprParser) percent() *expr {
	return p.fromRight(p.factor, percentWords, opPercent, p.percent)
}

// factor reads a sign or a root and what it applies to, which runs on
// through powers: "minus two squared" is minus four.
func (p *exprParser) factor() *expr {
	for _, f := range []struct {
		op    op
		words [][]string
	}{{opNeg, negWords}, {opSqrt, sqrtWords}, {opCbrt, cbrtWords}} {
		if p.accept(f.words) {
			x := p.factor()
			if x == nil {
				return nil
			}
			return &expr{op: f.op, x: x}
		}
	}
	return p.power()
}

// power reads "two to the power of ten", from the right.
func (p *exprParser) power() *expr {
	return p.fromRight(p.postfix, powerWords, opPow, p.factor)
}

// fromRight reads next [ops rest]: an operation read from the right,
// its right side read by rest.
func (p *exprParser) fromRight(next func() *expr, ops [][]string, o op, rest func() *expr) *expr {
	e := next()
	if e != nil && p.accept(ops) {
		y := rest()
		if y == nil {
			return nil
		}
		return &expr{op: o, x: e, y: y}
	}
	return e
}

func (p *exprParser) postfix() *expr {
	e := p.primary()
	for e != nil {
		switch {
		case p.accept(phrases("squared")):
			e = &expr{op: opSquare, x: e}
		case p.accept(phrases("cubed")):
			e = &expr{op: opCube, x: e}
		default:
			return e
		}
	}
	return nil
}

// primary reads a number or an expression in brackets.
func (p *exprParser) primary() *expr {
	if p.accept(openWords) {
		e := p.sum()
		if e == nil || !p.accept(closeWords) {
			return nil
		}
		return e
	}
	v, n := numberAt(p.words[p.pos:])
	if n == 0 {
		return nil
	}
	p.pos += n
	return &expr{op: opNum, num: v}
}

// Why an expression has no value, said after the expression.
var (
	errDivideByZero = errors.New("has no answer: no number can be divided by zero")
	errNotReal      = errors.New("is not a real number")
	errTooLarge     = errors.New("is too large a number for me")
)

// maxNumber is the largest number worked out: above it, numbers are too long
// to listen to.
const maxNumber = 1e15

// value works the expression out.
func (e *expr) value() (float64, error) {
	if e.op == opNum {
		if e.num >= maxNumber {
			return 0, errTooLarge
		}
		return e.num, nil
	}
	x, err := e.x.value()
	if err != nil {
		return 0, err
	}
	var y float64
	if e.y != nil {
		if y, err = e.y.value(); err != nil {
			return 0, err
		}
	}
	var v float64
	switch e.op {
	case opAdd:
		v = x + y
	case opSub:
		v = x - y
	case opMul:
		v = x * y
	case opDiv:
		if y == 0 {
			return 0, errDivideByZero
		}
		v = x / y
	case opPercent:
		v = x / 100 * y
	case opNeg:
		v = -x
	case opSqrt:
		if x < 0 {
			return 0, errNotReal
		}
		v = math.Sqrt(x)
	case opCbrt:
		v = math.Cbrt(x)
	case opPow:
		if x == 0 && y < 0 {
			return 0, errDivideByZero
		}
		v = math.Pow(x, y)
	case opSquare:
		v = x * x
	case opCube:
		v = x * x * x
	}
	switch {
	case math.IsNaN(v):
		return 0, errNotReal // (-8) to the power of 0.5
	case math.IsInf(v, 0) || math.Abs(v) >= maxNumber:
		return 0, errTooLarge
	}
	return v, nil
}

// prec is how tightly the operation binds, as the parser reads it.
func (e *expr) prec() int {
	switch e.op {
	case opAdd, opSub:
		return 1
	case opMul, opDiv:
		return 2
	case opPercent:
		return 3
	case opNeg, opSqrt, opCbrt: // what they apply to runs on through powers
		return 4
	case opPow:
		return 5
	case opSquare, opCube:
		return 6
	}
	return 7
}

// say says the expression so that it reads back as the same one:
// brackets are said where precedence alone would read it otherwise.
func (e *expr) say() string { return e.sayAt(0) }

// sayAt says e where the parser reads only operations binding at least
// as tightly as min.
func (e *expr) sayAt(min int) string {
	if e.prec() < min {
		return "open bracket " + e.sayAt(0) + " close bracket"
	}
	switch e.op {
	case opAdd:
		return e.x.sayAt(1) + " plus " + e.y.sayAt(2)
	case opSub:
		return e.x.sayAt(1) + " minus " + e.y.sayAt(2)
	case opMul:
		return e.x.sayAt(2) + " times " + e.y.sayAt(3)
	case opDiv:
		return e.x.sayAt(2) + " divided by " + e.y.sayAt(3)
	case opPercent:
		return e.x.sayAt(4) + " percent of " + e.y.sayAt(3)
	case opNeg:
		return "minus " + e.x.sayAt(4)
	case opSqrt:
		return "the square root of " + e.x.sayAt(4)
	case opCbrt:
		return "the cube root of " + e.x.sayAt(4)
	case opPow:
		return e.x.sayAt(6) + " to the power of " + e.y.sayAt(4)
	case opSquare:
		return e.x.sayAt(6) + " squared"
	case opCube:
		return e.x.sayAt(6) + " cubed"
	}
	return sayNumber(e.num)
}

// sayResult says a result: whole numbers in words (as spell does),
// others in digits, rounded when they are long; about is true then.
func sayResult(v float64) (said string, about bool) {
	clean := roundSignificant(v, 12) // float noise: 0.1 plus 0.2 is 0.3
	if clean == math.Trunc(clean) {
		return spell(clean), false
	}
	if digits, decimals := significantDigits(clean); decimals <= 6 && digits < 12 {
		return decimal(clean), false
	}
	if math.Abs(v) < 1e-6 {
		return "zero", true
	}
	if math.Abs(v) < 1 {
		return decimal(roundSignificant(v, 4)), true
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 4, 64), 64)
	return decimal(r), true
}

// The words that may come before a sum ("what is", "can you work out")
// and after it ("equal", "come to"), and mean nothing to it.
var (
	sumLead = set("please", "hey", "so", "and", "ok", "okay", "well", "earshot", "can", "could", "would", "will",
		"you", "tell", "me", "what", "what's", "whats", "is", "are", "how", "much", "calculate", "compute", "work",
		"out", "evaluate", "solve", "figure", "does", "do", "know", "the", "answer", "result", "value", "to", "of", "then")
	sumTail = set("please", "equal", "equals", "make", "makes", "come", "to", "is", "exactly", "altogether", "then", "now")
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// sumForms are sums said as an instruction: "add five and six",
// "subtract three from ten".
var sumForms = []struct {
	verb  []string
	joins [][]string
	op    op
	swap  bool // the second operand comes first: subtract x from y
}{
	{[]string{"add"}, phrases("and", "to"), opAdd, false},
	{[]string{"sum", "of"}, phrases("and"), opAdd, false},
	{[]string{"subtract"}, phrases("from"), opSub, true},
	{[]string{"take"}, phrases("away from", "from"), opSub, true},
	{[]string{"multiply"}, phrases("by", "and"), opMul, false},
	{[]string{"product", "of"}, phrases("and"), opMul, false},
	{[]string{"divide"}, phrases("by"), opDiv, false},
}

// mathTokens are the words of a question about numbers: symbols apart,
// "1,000" one number.
func mathTokens(text string) []string {
	return split(withoutThousands(text), "+-*/×÷x%^()[]√")
}

// question reads a question that is all one arithmetic expression.
func question(text string) (*expr, bool) {
	words := mathTokens(text)
	for len(words) > 0 && sumLead[words[0]] {
		words = words[1:]
	}
	for len(words) > 0 && sumTail[words[len(words)-1]] {
		words = words[:len(words)-1]
	}
	if e, ok := readSum(words); ok {
		return e, true
	}
	// The engine's recogniser hears "what is" as "one is": one word
	// before "is" opens the question.
	if len(words) > 2 && words[1] == "is" {
		return readSum(words[2:])
	}
	return nil, false
}

// readSum reads words that are all one expression, or a sum said as an
// instruction.
func readSum(words []string) (*expr, bool) {
	if e, ok := parseExpr(words); ok {
		return e, e.op != opNum // a number alone asks nothing
	}
	for _, f := range sumForms {
		if len(words) <= len(f.verb) || !equal(words[:len(f.verb)], f.verb) {
			continue
		}
		rest := words[len(f.verb):]
		for i := 1; i < len(rest); i++ {
			for _, j := range f.joins {
				if len(rest)-i <= len(j) || !equal(rest[i:i+len(j)], j) {
					continue
				}
				x, okx := parseExpr(rest[:i])
				y, oky := parseExpr(rest[i+len(j):])
				if okx && oky {
					if f.swap {
						x, y = y, x
					}
					return &expr{op: f.op, x: x, y: y}, true
				}
			}
		}
	}
	return nil, false
}

// arithmetic answers a question that is an arithmetic expression, in
// words: "what is two plus three times four", "(2+3)*4", "what's 15% of
// 80", "the square root of two".
func arithmetic(text string) (string, bool) {
	e, ok := question(text)
	if !ok {
		return "", false
	}
	v, err := e.value()
	switch {
	case errors.Is(err, errTooLarge):
		return "That is too large a number for me to work out.", true
	case err != nil:
		return sentence(e.say() + " " + err.Error() + "."), true
	}
	said, about := sayResult(v)
	is := " is "
	if about {
		is = " is about "
	}
	return sentence(e.say() + is + said + "."), true
}

// arithmeticWords are words that ask for a calculation.
var arithmeticWords = set("plus", "minus", "times", "multiplied", "divided", "squared", "cubed", "root", "percent",
	"add", "subtract", "multiply", "divide", "sum", "product", "+", "*", "/", "×", "÷", "%", "^", "√")

// looksLikeArithmetic tells a question about numbers that was not read
// in full: it names a number and an operation.
func looksLikeArithmetic(text string) bool {
	number, operation := false, false
	words := mathTokens(text)
	for i, w := range words {
		if _, n := numberAt(words[i:]); n > 0 {
			number = true
		}
		operation = operation || arithmeticWords[w]
	}
	return number && operation
}
