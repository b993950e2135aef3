package document

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"
)

// Paragraphs written for these tests, one language each, to be encoded
// by iconv in the legacy encodings their readers use.
var legacyTexts = map[string]string{
	"ru": "Сегодня утром шёл дождь, поэтому совещание перенесли на вторую половину дня. Мы обсудили новую функцию записи и решили, что субтитры должны появляться быстрее. Следующая встреча во вторник.",
	"uk": "Сьогодні зранку йшов дощ, тому нараду перенесли на другу половину дня. Ми обговорили нову функцію запису і вирішили, що субтитри мають з'являтися швидше. Наступна зустріч у вівторок, о дев'ятій.",
	"ja": "今日は朝から雨が降っていたので、会議は午後に延期されました。新しい録音機能について、みんなで意見を出し合いました。次の打ち合わせは来週の火曜日です。",
	"zh": "今天上午我们讨论了新的录音功能。大家都认为这个工具很有用，但是还需要改进字幕的速度。下周二我们会再开一次会。",
	"tw": "今天上午我們討論了新的錄音功能。大家都認為這個工具很有用，但是還需要改進字幕的速度。下週二我們會再開一次會。",
	"ko": "오늘 아침에 비가 와서 회의는 오후로 미뤄졌습니다. 새로운 녹음 기능에 대해 모두 의견을 나누었습니다. 다음 회의는 다음 주 화요일입니다.",
	"fr": "Ce matin, la réunion a été repoussée à cet après-midi à cause de la pluie. Nous avons parlé des sous-titres et de la rapidité d’affichage ; tout le monde était d’accord.",
	"de": "Heute Morgen wurde die Besprechung wegen des Regens auf den Nachmittag verschoben. Wir haben über die Größe der Untertitel gesprochen und waren uns einig, dass sie schneller erscheinen müssen.",
	"es": "Esta mañana la reunión se aplazó a la tarde por la lluvia. Hablamos de los subtítulos y de cómo deberían aparecer más rápido; todos estuvimos de acuerdo.",
	"en": "The meeting’s notes are “final” now – thanks to everyone who came.",
	// Short ones: a greeting is all some files hold.
	"ru-short": "Привет, мир!",
	"ja-short": "こんにちは、世界。",
	"fr-short": "Ça va très bien, merci.",
}

// TestLegacyEncodings: text that is neither UTF-8 nor UTF-16 is read in
// the encoding it was written in, for the common 8-bit Western and
// Cyrillic encodings and the East Asian ones, and every character comes
// back.
func TestLegacyEncodings(t *testing.T) {
	cases := []struct{ lang, iconv, want string }{
		{"ru", "CP1251", "windows-1251"},
		{"ru", "KOI8-R", "koi8-u"},
		{"ru", "CP866", "ibm866"},
		{"uk", "CP1251", "windows-1251"},
		{"uk", "KOI8-U", "koi8-u"},
		{"ja", "SHIFT_JIS", "shift_jis"},
		{"ja", "EUC-JP", "euc-jp"},
		{"zh", "GB18030", "gb18030"},
		{"zh", "GBK", "gb18030"},
		{"tw", "BIG5", "big5"},
		{"ko", "EUC-KR", "euc-kr"},
		{"fr", "WINDOWS-1252", "windows-1252"},
		{"de", "WINDOWS-1252", "windows-1252"},
		{"es", "ISO-8859-1", "windows-1252"},
		{"en", "WINDOWS-1252", "windows-1252"},
		{"ru-short", "CP1251", "windows-1251"},
		{"ja-short", "SHIFT_JIS", "shift_jis"},
		{"fr-short", "WINDOWS-1252", "windows-1252"},
	}
	for _, c := range cases {
		t.Run(c.lang+"-"+c.iconv, func(t *testing.T) {
			text := legacyTexts[c.lang]
			data := run(t, []byte(text), "iconv", "-f", "UTF-8", "-t", c.iconv)
			got, name := decodeText(data)
			if name != c.want {
				t.Errorf("read as %s, want %s: %s", name, c.want, got)
			}
			if got != text {
				t.Errorf("text %q, want %q", got, text)
			}
		})
	}
}

// TestLegacyDocuments: a text file and a web page that do not say their
// encoding come out in their own script through Extract.
func TestLegacyDocuments(t *testing.T) {
	ru := legacyTexts["ru"]
	data := run(t, []byte("Заметки\n\n"+ru+"\n"), "iconv", "-f", "UTF-8", "-t", "CP1251")
	expect(t, "notes.txt", string(data), "", "Заметки", ru)

	page := "<html><body><main><h1>会議</h1><p>" + legacyTexts["ja"] + "</p></main></body></html>"
	data = run(t, []byte(page), "iconv", "-f", "UTF-8", "-t", "SHIFT_JIS")
	doc, err := Extract(context.Background(), "page.html", data)
	if err != nil {
		t.Fatal(err)
	}
	if text := doc.Text(); !strings.Contains(text, legacyTexts["ja"]) {
		t.Errorf("the Shift_JIS page without a charset reads %q", text)
	}

	// A page that names its charset is read in it, whatever it looks like.
	page = `<html><head><meta charset="koi8-r"></head><body><p>` + ru + `</p></body></html>`
	data = run(t, []byte(page), "iconv", "-f", "UTF-8", "-t", "KOI8-R")
	if doc, err = Extract(context.Background(), "page.html", data); err != nil {
		t.Fatal(err)
	}
	if text := doc.Text(); !strings.Contains(text, ru) {
		t.Errorf("the KOI8-R page reads %q", text)
	}
}

// TestLegacyGuessOnBytes: bytes that are no text come out as valid
// UTF-8 all the same, and a large text is judged on its beginning.
func TestLegacyGuessOnBytes(t *testing.T) {
	noise := make([]byte, 4096)
	for i := range noise {
		noise[i] = byte(i*7919 + i/3)
	}
	if got, _ := decodeText(noise); !utf8.ValidString(got) {
		t.Error("noise decoded to invalid UTF-8")
	}
	big := run(t, []byte(strings.Repeat(legacyTexts["ko"]+"\n", 4000)), "iconv", "-f", "UTF-8", "-t", "EUC-KR")
	if len(big) <= legacySample {
		t.Fatalf("the large text is %d bytes, not over the sample's %d", len(big), legacySample)
	}
	if got, name := decodeText(big); name != "euc-kr" || !strings.HasPrefix(got, legacyTexts["ko"]) {
		t.Errorf("a large EUC-KR text read as %s: %.80q", name, got)
	}
}
