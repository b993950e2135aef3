package document

import (
	"bytes"
	"strings"
	"unicode"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
)

// A legacy encoding is told by decoding a sample of the text with each
// candidate and scoring how much of what comes out beyond ASCII looks
// like text of the candidate's script: letters placed as that script
// places them, its common characters, its punctuation. Text in the wrong
// encoding decodes to letters of another script in the wrong places, to
// rare characters, or to invalid sequences.

// legacyCandidate is an encoding that guessLegacy may choose.
type legacyCandidate struct {
	name string
	enc  encoding.Encoding
	// typical reports whether t.rs[i], a rune beyond ASCII, is usual in
	// text of this encoding's languages.
	typical func(t *decoded, i int) bool
}

// legacyCandidates, in the order preferred when two score the same.
// KOI8-U is KOI8-R with the Ukrainian letters.
var legacyCandidates = []legacyCandidate{
	{"windows-1252", charmap.Windows1252, typicalLatin},
	{"windows-1251", charmap.Windows1251, typicalCyrillic},
	{"koi8-u", charmap.KOI8U, typicalCyrillic},
	{"ibm866", charmap.CodePage866, typicalCyrillic},
	{"shift_jis", japanese.ShiftJIS, typicalJapanese},
	{"euc-jp", japanese.EUCJP, typicalJapanese},
	{"gb18030", simplifiedchinese.GB18030, typicalIn(commonSimplified)},
	{"big5", traditionalchinese.Big5, typicalIn(commonTraditional)},
	{"euc-kr", korean.EUCKR, typicalIn(commonKorean)},
}

const (
	// legacySample is how much of a text is decoded to choose.
	legacySample = 256 << 10
	// legacyMinScore is the least share of typical runes for a guess to
	// be taken over Windows-1252.
	legacyMinScore = 0.2
	// maxWord is the most letters a Cyrillic word is taken to have:
	// East Asian text read as 8-bit gives long runs of letters.
	maxWord = 25
)

// guessLegacy chooses the encoding of text that is neither UTF-8 nor
// UTF-16, among the common 8-bit and East Asian encodings: Windows-1252
// when nothing fits better.
func guessLegacy(data []byte) legacyCandidate {
	sample := data
	if len(sample) > legacySample {
		sample = sample[:legacySample]
		// End at a line, not inside a multi-byte character.
		if i := bytes.LastIndexByte(sample, '\n'); i > 0 {
			sample = sample[:i+1]
		}
	}
	best, bestScore := legacyCandidates[0], -1.0
	for _, c := range legacyCandidates {
		out, err := c.enc.NewDecoder().Bytes(sample)
		if err != nil {
			continue
		}
		if s := legacyScore(newDecoded(string(out)), c.typical); s > bestScore {
			best, bestScore = c, s
		}
	}
	if bestScore < legacyMinScore {
		return legacyCandidates[0]
	}
	return best
}

// decoded is a sample as one candidate decodes it.
type decoded struct {
	rs []rune
	// start and word are, for each letter, where the run of letters it
	// is in starts and how many letters it holds.
	start, word []int32
}

func newDecoded(s string) *decoded {
	t := &decoded{rs: []rune(s)}
	t.start = make([]int32, len(t.rs))
	t.word = make([]int32, len(t.rs))
	for i := 0; i < len(t.rs); {
		j := i
		for j < len(t.rs) && unicode.IsLetter(t.rs[j]) {
			j++
		}
		for k := i; k < j; k++ {
			t.start[k], t.word[k] = int32(i), int32(j-i)
		}
		i = max(j, i+1)
	}
	return t
}

// bounds returns the runes before and after the run of letters that
// holds rs[i], a space at the ends.
func (t *decoded) bounds(i int) (before, after rune) {
	s, e := int(t.start[i]), int(t.start[i]+t.word[i])
	before, after = ' ', ' '
	if s > 0 {
		before = t.rs[s-1]
	}
	if e < len(t.rs) {
		after = t.rs[e]
	}
	return before, after
}

// neighbours returns the runes either side of rs[i], a space at the ends.
func (t *decoded) neighbours(i int) (prev, next rune) {
	prev, next = ' ', ' '
	if i > 0 {
		prev = t.rs[i-1]
	}
	if i+1 < len(t.rs) {
		next = t.rs[i+1]
	}
	return prev, next
}

// legacyScore is the share of runes beyond ASCII that typical accepts, or
// 0 when more than one in fifty of them is invalid or a control
// character: no text in the right encoding has those.
func legacyScore(t *decoded, typical func(*decoded, int) bool) float64 {
	beyond, bad, good := 0, 0, 0
	for i, r := range t.rs {
		if r < 0x80 {
			continue
		}
		beyond++
		switch {
		case r == unicode.ReplacementChar || unicode.IsControl(r) || (r >= 0xe000 && r <= 0xf8ff):
			bad++
		case typical(t, i):
			good++
		}
	}
	if beyond == 0 || bad*50 > beyond {
		return 0
	}
	return float64(good) / float64(beyond)
}

// asciiLetter reports whether r is a letter of ASCII.
func asciiLetter(r rune) bool { return r < 0x80 && isASCIILetter(byte(r)) }

// asciiOther reports whether r is ASCII but no letter: a space, a digit,
// punctuation.
func asciiOther(r rune) bool { return r < 0x80 && !isASCIILetter(byte(r)) }

// punct reports whether rs[i] is one of set, and if so whether it sits
// next to ASCII (a space, a letter), as punctuation in text does.
func (t *decoded) punct(i int, set string) (in, typical bool) {
	if !strings.ContainsRune(set, t.rs[i]) {
		return false, false
	}
	prev, next := t.neighbours(i)
	return true, prev < 0x80 || next < 0x80
}

// latinPunct is punctuation and signs of Western text beyond ASCII.
const latinPunct = "‘’“”–—…€«»°·©®™§¿¡\u00a0"

// typicalLatin: in a Latin script a letter beyond ASCII sits next to an
// ASCII letter ("café", "Größe") or is a word of its own ("à"), and
// punctuation next to ASCII. Text of another script read as Windows-1252
// gives runs of such letters and signs.
func typicalLatin(t *decoded, i int) bool {
	if in, typical := t.punct(i, latinPunct); in {
		return typical
	}
	r := t.rs[i]
	if !unicode.IsLetter(r) || r > 0x24f {
		return false
	}
	prev, next := t.neighbours(i)
	return asciiLetter(prev) || asciiLetter(next) || (asciiOther(prev) && asciiOther(next))
}

// cyrillicPunct is punctuation common in Cyrillic text beyond ASCII.
const cyrillicPunct = "«»„“”–—…№\u00a0"

// typicalCyrillic: most letters of running text are small letters, in
// words of ordinary length with no ASCII letter, between spaces and
// punctuation. Text in another Cyrillic encoding comes out in capitals;
// Latin text, with Cyrillic letters among ASCII ones; East Asian text,
// with long runs of letters among signs and box-drawing characters.
func typicalCyrillic(t *decoded, i int) bool {
	if in, typical := t.punct(i, cyrillicPunct); in {
		return typical
	}
	r := t.rs[i]
	if !unicode.Is(unicode.Cyrillic, r) || !unicode.IsLower(r) || t.word[i] > maxWord {
		return false
	}
	prev, next := t.neighbours(i)
	if asciiLetter(prev) || asciiLetter(next) {
		return false
	}
	bounds := func(n rune) bool { return asciiOther(n) || strings.ContainsRune(cyrillicPunct, n) }
	before, after := t.bounds(i)
	return bounds(before) && bounds(after)
}

// typicalJapanese: kana and Japanese punctuation make up much of any
// Japanese text; Chinese read as a Japanese encoding gives kanji or
// half-width katakana instead.
func typicalJapanese(t *decoded, i int) bool {
	r := t.rs[i]
	switch {
	case r >= 0x3000 && r <= 0x30ff: // punctuation, hiragana, katakana
		return true
	case r >= 0xff01 && r <= 0xff5e: // full-width ASCII
		return true
	}
	return false
}

// typicalIn accepts East Asian punctuation and the characters of common.
func typicalIn(common string) func(*decoded, int) bool {
	set := make(map[rune]bool)
	for _, r := range common {
		set[r] = true
	}
	return func(t *decoded, i int) bool {
		r := t.rs[i]
		return set[r] || (r >= 0x3000 && r <= 0x303f) || (r >= 0xff01 && r <= 0xff5e)
	}
}

// The most frequent characters of written Chinese and Korean: a large
// share of any text, and a small one of text decoded with the wrong
// table, which gives characters evenly spread over the whole table.
const (
	commonSimplified = "的一是不了在人有我他这个们中来上大为和国地到以说时要就出会可也你对生能而子那得于" +
		"着下自之年过发后作里用道行所然家种事成方多经么去法学如都同现当没动面起看定天分还" +
		"进好小部其些主样理心她本前开但因只从想实日军者意无力它与长把机十民第公此已工使情" +
		"明性知全三又关点正业外将两高间由问很最重并物手应战向头文体政美相见被利什二等产或" +
		"新己制身果加西斯月话合回特代内信表化老给世位次度门任常先海通教儿原东声提立及比员" +
		"解水名真论处走义各入几口认条平系气题活尔更别打女变四神总何电数安少报才结反受目太" +
		"量再感建务做接必场件计管期市直德资命山金指克许统区保至队形社便空决治展马科司五基" +
		"眼书非则听白却界达光放强即像难且权思王象完设式色路记南品住告类求据程北边死张该交" +
		"规万取拉格望觉术领共确传师观清今切院让识候带导争运笑飞风步改收根干造言联持组每济" +
		"车亲极林服快办议往元英士证近失转夫令准布始怎呢存未远叫台单影具罗字爱击流备兵连调" +
		"深商算质团集百需价花党华城石级整府离况亚请技际约示复病息究线似官火断精满支视消越" +
		"器容照须九增研写称企八功吗包片史委乎查轻易早曾除农找装广显吧阿李标谈吃图念六引历" +
		"首医局突专费号尽另周较注语仅考落青随选列武红响虽推势参希古众构房半节土投某案黑维" +
		"革划敢致陈律足态护七兴派孩验责营星够章音跟志底站严巴例防族供效续施留讲型料终答紧" +
		"黄绝奇察母京段依批群项故按河米围江织害斗双境客纪采举杀攻父苏密低朝友诉止细愿千值" +
		"仍男钱破网热助倒育属坐帝限船脸职速刻乐否刚威毛状率甚独球般普怕弹校苦创假久错承印" +
		"晚兰试股拿脑预谁益阳若哪微尼继送急血惊伤素药适波夜省初喜卫源食险待述陆习置居劳财" +
		"环排福纳欢雷警获模充负云停木游龙树疑层冷洲冲射略范竟句室异激汉村哈策演简卡罪判担" +
		"州静退既衣您宗积余痛检差富灵协角占配征修皮挥胜降阶审沉坚善妈刘读啊超免压银买皇养" +
		"伊怀执副乱抗犯追帮宣佛岁航优怪香著田铁控税左右份穿艺背阵草脚概恶块顿敌塔"
	commonTraditional = "的一是不了在人有我他這個們中來上大為和國地到以說時要就出會可也你對生能而子那得於" +
		"著下自之年過發後作裡用道行所然家種事成方多經麼去法學如都同現當沒動面起看定天分還" +
		"進好小部其些主樣理心她本前開但因只從想實日軍者意無力它與長把機十民第公此已工使情" +
		"明性知全三又關點正業外將兩高間由問很最重並物手應戰向頭文體政美相見被利什二等產或" +
		"新己制身果加西斯月話合回特代內信表化老給世位次度門任常先海通教兒原東聲提立及比員" +
		"解水名真論處走義各入幾口認條平系氣題活爾更別打女變四神總何電數安少報才結反受目太" +
		"量再感建務做接必場件計管期市直德資命山金指克許統區保至隊形社便空決治展馬科司五基" +
		"眼書非則聽白卻界達光放強即像難且權思王象完設式色路記南品住告類求據程北邊死張該交" +
		"規萬取拉格望覺術領共確傳師觀清今切院讓識候帶導爭運笑飛風步改收根乾造言聯持組每濟" +
		"車親極林服快辦議往元英士證近失轉夫令準布始怎呢存未遠叫台單影具羅字愛擊流備兵連調" +
		"深商算質團集百需價花黨華城石級整府離況亞請技際約示復病息究線似官火斷精滿支視消越" +
		"器容照須九增研寫稱企八功嗎包片史委乎查輕易早曾除農找裝廣顯吧阿李標談吃圖念六引歷" +
		"首醫局突專費號盡另周較注語僅考落青隨選列武紅響雖推勢參希古眾構房半節土投某案黑維" +
		"革劃敢致陳律足態護七興派孩驗責營星夠章音跟志底站嚴巴例防族供效續施留講型料終答緊" +
		"黃絕奇察母京段依批群項故按河米圍江織害鬥雙境客紀採舉殺攻父蘇密低朝友訴止細願千值" +
		"仍男錢破網熱助倒育屬坐帝限船臉職速刻樂否剛威毛狀率甚獨球般普怕彈校苦創假久錯承印" +
		"晚蘭試股拿腦預誰益陽若哪微尼繼送急血驚傷素藥適波夜省初喜衛源食險待述陸習置居勞財" +
		"環排福納歡雷警獲模充負雲停木遊龍樹疑層冷洲衝射略範竟句室異激漢村哈策演簡卡罪判擔" +
		"州靜退既衣您宗積餘痛檢差富靈協角佔配征修皮揮勝降階審沉堅善媽劉讀啊超免壓銀買皇養" +
		"伊懷執副亂抗犯追幫宣佛歲航優怪香田鐵控稅左右份穿藝背陣草腳概惡塊頓敵塔"
	commonKorean = "이다의는에하고을가지서한기로사도를리자수시어나아인대적일정게들주전있여국해부것으" +
		"요면상니과보제우라내만했와장던비거러그무스원성마화중동세위소치유구연조실경방할간" +
		"생모야합학운분습문까용공데된음되개선신관미래안물회때없같후말년통금당발결계명영터" +
		"업산행식체반현교입진차저설속직표점특단법월심역활건말력"
)
