package intelbench

import (
	"slices"
	"strings"
	"testing"
)

// reutersSample is written here in the form of the tm package's files; the
// stories are made up.
const reutersSample = `<?xml version="1.0"?>
<LEWIS>
<REUTERS TOPICS="YES" NEWID="7">
 <DATE>26-FEB-1987 15:51:17.84</DATE>
 <TEXT>
  <TITLE>ACME &lt;ACM&gt; BUYS WIDGET MAKER</TITLE>
  <DATELINE>NEW YORK, Feb 26 -</DATELINE>
  <BODY>Acme Corp &lt;ACM&gt; said it agreed to buy
a widget maker for 40 mln dlrs.
    The company&apos;s shares rose. &quot;It fits,&quot; a spokesman said.
 Reuter</BODY>
 </TEXT>
</REUTERS>
<REUTERS NEWID="8">
 <TEXT TYPE="BRIEF">
  <TITLE>BRIEF WITHOUT A BODY</TITLE>
 </TEXT>
</REUTERS>
<REUTERS NEWID="9"><TEXT><TITLE> TWO
 LINES </TITLE><BODY>One sentence. Reuter</BODY></TEXT></REUTERS>
</LEWIS>`

func TestParseReuters(t *testing.T) {
	got, err := ParseReuters(strings.NewReader(reutersSample))
	if err != nil {
		t.Fatal(err)
	}
	want := []Article{
		{ID: "7", Headline: "ACME <ACM> BUYS WIDGET MAKER",
			Body: `Acme Corp <ACM> said it agreed to buy a widget maker for 40 mln dlrs. The company's shares rose. "It fits," a spokesman said.`},
		{ID: "9", Headline: "TWO LINES", Body: "One sentence."},
	}
	if !slices.Equal(got, want) {
		t.Errorf("ParseReuters =\n%q\nwant\n%q", got, want)
	}
}

func TestParseReutersErrors(t *testing.T) {
	tests := map[string]string{
		"unclosed story": `<REUTERS NEWID="1"><TEXT><TITLE>X</TITLE>`,
		"bad entity":     `<REUTERS><TEXT><TITLE>&bogus;</TITLE></TEXT></REUTERS>`,
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseReuters(strings.NewReader(in)); err == nil {
				t.Error("no error")
			}
		})
	}
}

func FuzzParseReuters(f *testing.F) {
	f.Add(reutersSample)
	f.Add(`<REUTERS NEWID="1"><TEXT><TITLE>A</TITLE><BODY>B</BODY></TEXT></REUTERS>`)
	f.Add(`<REUTERS><REUTERS>`)
	f.Fuzz(func(t *testing.T, in string) {
		arts, err := ParseReuters(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, a := range arts {
			if a.Headline == "" || a.Body == "" {
				t.Fatalf("story %+v has an empty part", a)
			}
		}
	})
}

func TestParseLabelled(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Labelled
		wantErr bool
	}{
		{"fixture form", `[{"text":"Great phone.","class":1},{"text":" Broke in a day.  ","class":0},{"text":"","class":null}]`,
			[]Labelled{{"Great phone.", true}, {"Broke in a day.", false}}, false},
		{"missing class skipped", `[{"text":"x"}]`, []Labelled{}, false},
		{"class out of range", `[{"text":"x","class":2}]`, nil, true},
		{"not an array", `{"text":"x"}`, nil, true},
		{"truncated", `[{"text":"x",`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLabelled(strings.NewReader(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if !tt.wantErr && !slices.Equal(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func FuzzParseLabelled(f *testing.F) {
	f.Add(`[{"text":"Great phone.","class":1},{"text":"","class":null}]`)
	f.Add(`[{"text":1}]`)
	f.Add(`[`)
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ParseLabelled(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, l := range got {
			if strings.TrimSpace(l.Text) != l.Text || l.Text == "" {
				t.Fatalf("text %q not trimmed or empty", l.Text)
			}
		}
	})
}

func TestSentences(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"abbreviations", "Mr. Smith went to Washington. He met the U.S. President. It was 3 p.m. today.",
			[]string{"Mr. Smith went to Washington.", "He met the U.S. President.", "It was 3 p.m. today."}},
		{"quotes and marks", `She said "Stop." Then she left! Why? 40 people saw it`,
			[]string{`She said "Stop."`, "Then she left!", "Why?", "40 people saw it"}},
		{"lower case after stop", "Sales rose 5.5 pct. to 3 mln dlrs.", []string{"Sales rose 5.5 pct. to 3 mln dlrs."}},
		{"company names", "Acme Inc. said so. Bolt Corp. agreed.", []string{"Acme Inc. said so.", "Bolt Corp. agreed."}},
		{"empty", "  ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sentences(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("Sentences = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLead(t *testing.T) {
	text := "One. Two is here. Three! Four?"
	tests := []struct {
		n    int
		want string
	}{{0, ""}, {1, "One."}, {3, "One. Two is here. Three!"}, {9, text}}
	for _, tt := range tests {
		if got := Lead(text, tt.n); got != tt.want {
			t.Errorf("Lead(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func FuzzSentences(f *testing.F) {
	f.Add("Mr. Smith went. He \"left.\" U.S. Then")
	f.Add(". . ! ?")
	f.Fuzz(func(t *testing.T, in string) {
		got := Sentences(in)
		if strings.Join(got, " ") != strings.Join(strings.Fields(in), " ") {
			t.Fatalf("sentences %q do not rejoin to the text", got)
		}
	})
}
