package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// The world corpus (testdata/corpus_world.jsonl) measures the detectors on
// personal data of many countries and scripts, and on clean operational
// text full of brands, products, places and companies that must stay
// readable (issue 28). It is generated here with a fixed seed, from value
// generators with their own checksum code (Verhoeff, mod 11, ISO 7064),
// written apart from the detectors and their unit tests. Regenerate with
//
//	go test ./platform/redact -run TestGenerateWorldCorpus -update-corpus
//
// Each planted value names its kind and language; Parts are the pieces of
// it that must not survive either (the halves of a value split across two
// JSON fields, the words of a written-out e-mail address). Entries whose
// source is "json" are redacted with JSON, the others with String.

// A worldEntry is one text of the world corpus.
type worldEntry struct {
	ID     int            `json:"id"`
	Source string         `json:"source"` // text or json
	Lang   string         `json:"lang"`
	Text   string         `json:"text"`
	PII    []worldPlanted `json:"pii"`
	Keep   []worldPlanted `json:"keep"`
}

type worldPlanted struct {
	Kind  string   `json:"kind"`
	Value string   `json:"value"`
	Parts []string `json:"parts,omitempty"`
}

func TestGenerateWorldCorpus(t *testing.T) {
	if !*updateCorpus {
		t.Skip("run with -update-corpus to rewrite testdata/corpus_world.jsonl")
	}
	g := &gen{rng: rand.New(rand.NewPCG(2028, 28))}
	var out bytes.Buffer
	id := 0
	write := func(e worldEntry) {
		id++
		e.ID = id
		b, _ := json.Marshal(e)
		out.Write(b)
		out.WriteByte('\n')
	}
	for round := 0; round < 12; round++ {
		for _, tp := range worldTemplates {
			write(g.worldFill(tp))
		}
	}
	for round := 0; round < 18; round++ {
		for _, tp := range cleanTemplates {
			write(g.worldFill(tp))
		}
	}
	if err := os.WriteFile("testdata/corpus_world.jsonl", out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d entries", id)
}

// A wv is one generated value: kind "" is a clean value to keep.
type wv struct {
	value string
	kind  string
	parts []string
}

func (g *gen) worldFill(tp template) worldEntry {
	e := worldEntry{Source: tp.source, Lang: tp.lang, PII: []worldPlanted{}, Keep: []worldPlanted{}}
	isJSON := tp.source == "json"
	pending := "" // the second half of a value split across two fields
	e.Text = placeholder.ReplaceAllStringFunc(tp.text, func(m string) string {
		name := m[1 : len(m)-1]
		if name == "split2" {
			return pending
		}
		f, ok := worldGenerators[name]
		if !ok {
			panic("world corpus: no generator for " + m)
		}
		v := f(g, tp.lang)
		if v.kind == "" {
			e.Keep = append(e.Keep, worldPlanted{Kind: name, Value: v.value})
		} else {
			e.PII = append(e.PII, worldPlanted{Kind: v.kind, Value: v.value, Parts: v.parts})
		}
		if a, b, ok := strings.Cut(v.value, "\x00"); ok {
			e.PII[len(e.PII)-1].Value = a + " " + b
			pending = b
			return a
		}
		if isJSON {
			b, _ := json.Marshal(v.value)
			return string(b[1 : len(b)-1])
		}
		return v.value
	})
	return e
}

// Checksums, written for the generator.

var (
	verhoeffD = [10][10]int{
		{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4, 0, 6, 7, 8, 9, 5}, {2, 3, 4, 0, 1, 7, 8, 9, 5, 6},
		{3, 4, 0, 1, 2, 8, 9, 5, 6, 7}, {4, 0, 1, 2, 3, 9, 5, 6, 7, 8}, {5, 9, 8, 7, 6, 0, 4, 3, 2, 1},
		{6, 5, 9, 8, 7, 1, 0, 4, 3, 2}, {7, 6, 5, 9, 8, 2, 1, 0, 4, 3}, {8, 7, 6, 5, 9, 3, 2, 1, 0, 4},
		{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}}
	verhoeffP = [8][10]int{
		{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 5, 7, 6, 2, 8, 3, 0, 9, 4}, {5, 8, 0, 3, 7, 9, 6, 1, 4, 2},
		{8, 9, 1, 6, 0, 4, 3, 5, 2, 7}, {9, 4, 5, 3, 1, 2, 6, 8, 7, 0}, {4, 2, 8, 6, 5, 7, 3, 9, 0, 1},
		{2, 7, 9, 3, 8, 0, 6, 4, 1, 5}, {7, 0, 4, 6, 9, 1, 3, 2, 5, 8}}
	verhoeffInv = [10]int{0, 4, 3, 2, 1, 5, 6, 7, 8, 9}
)

func genVerhoeff(payload string) byte {
	c := 0
	for i := 0; i < len(payload); i++ {
		c = verhoeffD[c][verhoeffP[(i+1)%8][payload[len(payload)-1-i]-'0']]
	}
	return byte('0' + verhoeffInv[c])
}

func (g *gen) aadhaar() string {
	p := fmt.Sprint(g.n(2, 9)) + g.digits(10)
	d := p + string(genVerhoeff(p))
	switch g.rng.IntN(4) {
	case 0:
		return d
	case 1:
		return d[:4] + "-" + d[4:8] + "-" + d[8:]
	}
	return d[:4] + " " + d[4:8] + " " + d[8:]
}

func (g *gen) cpf() string {
	var d []int
	for {
		d = d[:0]
		for range 9 {
			d = append(d, g.rng.IntN(10))
		}
		if d[0] != d[1] || d[1] != d[2] {
			break
		}
	}
	for _, n := range []int{9, 10} {
		sum := 0
		for i := 0; i < n; i++ {
			sum += d[i] * (n + 1 - i)
		}
		c := sum * 10 % 11 % 10
		d = append(d, c)
	}
	s := ""
	for _, x := range d {
		s += fmt.Sprint(x)
	}
	if g.rng.IntN(3) == 0 {
		return s
	}
	return s[:3] + "." + s[3:6] + "." + s[6:9] + "-" + s[9:]
}

// steuerID is a German tax identification number: ten digits, the first
// not 0, one digit used twice and one not at all, and an ISO 7064 MOD
// 11,10 check digit.
func (g *gen) steuerID() string {
	var d []int
	for {
		perm := g.rng.Perm(10)
		d = append(d[:0], perm[:9]...)
		d = append(d, d[g.rng.IntN(9)])
		g.rng.Shuffle(10, func(i, j int) { d[i], d[j] = d[j], d[i] })
		if d[0] != 0 {
			break
		}
	}
	product := 10
	for _, x := range d {
		sum := (x + product) % 10
		if sum == 0 {
			sum = 10
		}
		product = sum * 2 % 11
	}
	check := 11 - product
	if check == 10 {
		check = 0
	}
	d = append(d, check)
	s := ""
	for _, x := range d {
		s += fmt.Sprint(x)
	}
	if g.rng.IntN(3) == 0 {
		return s[:2] + " " + s[2:5] + " " + s[5:8] + " " + s[8:]
	}
	return s
}

func (g *gen) panIN() string {
	return g.chars(genUpper, 3) + g.chars("PCHFATBLJG", 1) + g.chars(genUpper, 1) + fmt.Sprintf("%04d", g.n(1, 9999)) + g.chars(genUpper, 1)
}

func (g *gen) ssnBare() string {
	for {
		s := fmt.Sprintf("%03d%02d%04d", g.n(1, 899), g.n(1, 99), g.n(1, 9999))
		if s[:3] != "666" {
			return s
		}
	}
}

func (g *gen) ninoLower() string {
	n := g.nino()
	if g.rng.IntN(4) == 0 {
		return strings.ToUpper(n[:1]) + strings.ToLower(n[1:])
	}
	return strings.ToLower(n)
}

// Names.

var (
	worldGivenEN   = []string{"john", "mary", "peter", "sarah", "david", "emma", "james", "laura", "michael", "anna", "thomas", "olivia", "daniel", "sophie", "robert", "helen"}
	worldSurnameEN = []string{"smith", "garcia", "müller", "khan", "patel", "johnson", "brown", "novak", "rossi", "dubois", "kowalski", "andersson", "nguyen", "okafor", "fischer", "silva"}
	worldCommon    = [][2]string{{"Will", "Page"}, {"Hope", "Bishop"}, {"Mark", "Cook"}, {"Grace", "Hunter"}, {"Bill", "Price"},
		{"Rose", "Baker"}, {"Joy", "Fisher"}, {"Faith", "Mason"}, {"June", "Carter"}, {"Dawn", "Walker"}, {"Summer", "Hill"},
		{"Penny", "Wood"}, {"Rich", "Young"}, {"Art", "Brown"}, {"Chase", "Bell"}, {"Drew", "Church"}, {"Pat", "Long"},
		{"Ray", "Sharp"}, {"Holly", "Field"}, {"Amber", "Stone"}}
	worldRU = [][2]string{{"Иван", "Петров"}, {"Ольга", "Смирнова"}, {"Дмитрий", "Соколов"}, {"Анна", "Кузнецова"},
		{"Сергей", "Попов"}, {"Екатерина", "Волкова"}, {"Алексей", "Морозов"}, {"Наталья", "Лебедева"}, {"Михаил", "Новиков"},
		{"Татьяна", "Козлова"}, {"Андрей", "Егоров"}, {"Елена", "Павлова"}, {"Владимир", "Семёнов"}, {"Юлия", "Голубева"}}
	worldZH = []string{"王伟", "李娜", "张伟", "刘洋", "陈静", "杨磊", "黄敏", "赵丽", "吴强", "周杰", "徐明", "孙丽娟", "马超", "朱红", "胡斌", "郭晓燕"}
	worldJA = []string{"山田太郎", "佐藤花子", "鈴木一郎", "高橋美咲", "田中健", "渡辺陽子", "伊藤翔", "中村由美", "小林大輔", "加藤恵", "吉田拓也", "山本彩"}
	worldKO = []string{"김민준", "이서연", "박지훈", "최수빈", "정하은", "강도윤", "조민서", "윤지우", "장서준", "임하린"}
	worldAR = []string{"محمد العلي", "فاطمة الزهراء", "أحمد حسن", "خالد الراشد", "مريم السيد", "عمر الفاروق", "ليلى منصور", "يوسف إبراهيم", "نور الهدى", "علي عبد الله"}
	worldVI = []string{"Nguyễn Văn An", "Trần Thị Mai", "Lê Hoàng Nam", "Phạm Minh Tuấn", "Hoàng Thị Lan", "Vũ Đức Anh",
		"Đặng Thu Trang", "Bùi Quang Huy", "Đỗ Thị Hương", "Ngô Thanh Sơn", "Dương Ngọc Linh", "Huỳnh Văn Phúc"}
)

func (g *gen) lowerName() wv {
	n := g.pick(worldGivenEN...) + " " + g.pick(worldSurnameEN...)
	return wv{n, "name_lower", nil}
}

// Addresses: the street line and the postcode are planted; the city and
// the region stay readable by design.

func (g *gen) streetBR() string {
	return g.pick("Rua das Flores", "Rua Augusta", "Av. Paulista", "Avenida Brasil", "Rua XV de Novembro", "Rua da Consolação",
		"Avenida Atlântica", "Rua Oscar Freire", "Travessa do Comércio", "Alameda Santos", "Rua Sete de Setembro", "Estrada do Coco") +
		", " + fmt.Sprint(g.n(1, 3999))
}

func (g *gen) cep() string {
	s := fmt.Sprintf("%05d-%03d", g.n(1000, 99999), g.n(0, 999))
	if g.rng.IntN(5) == 0 {
		return strings.ReplaceAll(s, "-", "")
	}
	return s
}

func (g *gen) streetIN() string {
	switch g.rng.IntN(4) {
	case 0:
		return fmt.Sprintf("%d %s", g.n(1, 400), g.pick("MG Road", "Brigade Road", "Linking Road", "Park Street", "Anna Salai", "Residency Road", "Nehru Marg", "Station Road"))
	case 1:
		return fmt.Sprintf("H.No. %d-%d-%d, %s", g.n(1, 12), g.n(1, 9), g.n(10, 999), g.pick("Banjara Hills", "Jubilee Hills", "Ameerpet"))
	case 2:
		return fmt.Sprintf("Flat %d%s, %s", g.n(1, 40), g.pick("A", "B", "C"), g.pick("Sunrise Apartments", "Shanti Residency", "Green Park Towers", "Lakeview Enclave"))
	}
	return fmt.Sprintf("Plot %d, Sector %d", g.n(1, 300), g.n(1, 90))
}

func (g *gen) pinIN() string {
	s := fmt.Sprintf("%d%05d", g.n(1, 8), g.n(0, 99999))
	if g.rng.IntN(5) == 0 {
		return s[:3] + " " + s[3:]
	}
	return s
}

func (g *gen) postJP() string { return fmt.Sprintf("%03d-%04d", g.n(100, 999), g.n(0, 9999)) }

func (g *gen) streetJP() string {
	return g.pick("神宮前", "千代田", "銀座", "梅田", "栄", "天神", "南船場", "西新宿", "本町", "中之島") +
		g.pick(fmt.Sprintf("%d-%d-%d", g.n(1, 6), g.n(1, 30), g.n(1, 20)), fmt.Sprintf("%d丁目%d番%d号", g.n(1, 6), g.n(1, 30), g.n(1, 20)))
}

func (g *gen) streetJPRomaji() string {
	return fmt.Sprintf("%d-%d-%d %s", g.n(1, 6), g.n(1, 30), g.n(1, 20), g.pick("Jingumae", "Ginza", "Nishishinjuku", "Umeda", "Sakae", "Roppongi"))
}

func (g *gen) otherAddress() (street, post, full string) {
	switch g.rng.IntN(9) {
	case 0:
		street = fmt.Sprintf("%s %d", g.pick("Keizersgracht", "Prinsengracht", "Damrak", "Kalverstraat", "Laan van Meerdervoort", "Coolsingel"), g.n(1, 400))
		post = fmt.Sprintf("%d %s", g.n(1000, 9999), g.chars("ABCEGHJKLMNPRSTVWXZ", 2))
		return street, post, street + ", " + post + " " + g.pick("Amsterdam", "Rotterdam", "Den Haag")
	case 1:
		street = fmt.Sprintf("%s %d", g.pick("Via Roma", "Via Garibaldi", "Corso Buenos Aires", "Piazza Navona", "Viale Monza"), g.n(1, 200))
		post = fmt.Sprintf("%05d", g.n(10, 98168))
		return street, post, street + ", " + post + " " + g.pick("Milano", "Roma", "Torino")
	case 2:
		street = fmt.Sprintf("ul. %s %d", g.pick("Marszałkowska", "Piotrkowska", "Długa", "Floriańska", "Mickiewicza"), g.n(1, 150))
		post = fmt.Sprintf("%02d-%03d", g.n(0, 99), g.n(0, 999))
		return street, post, street + ", " + post + " " + g.pick("Warszawa", "Kraków", "Łódź")
	case 3:
		street = fmt.Sprintf("%s %d", g.pick("Drottninggatan", "Storgatan", "Kungsvägen", "Vesterbrogade", "Karl Johans gate"), g.n(1, 120))
		post = fmt.Sprintf("%d %02d", g.n(100, 999), g.n(10, 99))
		return street, post, street + ", " + post + " " + g.pick("Stockholm", "Göteborg", "Uppsala")
	case 4:
		street = fmt.Sprintf("%d %s", g.n(1, 9999), g.pick("Queen St W", "Yonge Street", "Rue Sherbrooke", "Granville St", "Jasper Ave"))
		post = fmt.Sprintf("%s%d%s %d%s%d", g.chars("ABCEGHJKLMNPRSTVXY", 1), g.n(0, 9), g.chars("ABCEGHJKLMNPRSTVWXYZ", 1), g.n(0, 9), g.chars("ABCEGHJKLMNPRSTVWXYZ", 1), g.n(0, 9))
		return street, post, street + ", " + g.pick("Toronto, ON", "Vancouver, BC", "Montréal, QC") + " " + post
	case 5:
		street = fmt.Sprintf("%d %s", g.n(1, 500), g.pick("George Street", "Collins St", "Queen Street", "Hay St", "Elizabeth Street"))
		post = fmt.Sprintf("%04d", g.n(2000, 7999))
		return street, post, street + ", " + g.pick("Sydney NSW", "Melbourne VIC", "Brisbane QLD", "Perth WA") + " " + post
	case 6:
		street = fmt.Sprintf("%d %s", g.n(1, 200), g.pick("Grafton Street", "O'Connell Street", "Baggot Street", "Dame Street"))
		post = fmt.Sprintf("D%02d %s%d%s%d", g.n(1, 24), g.chars("ACDEFHKNPRTVWXY", 1), g.n(0, 9), g.chars("ACDEFHKNPRTVWXY", 1), g.n(0, 9))
		return street, post, street + ", Dublin, " + post
	case 7:
		street = fmt.Sprintf("ул. %s, д. %d", g.pick("Тверская", "Арбат", "Ленина", "Пушкина", "Невский проспект"), g.n(1, 120))
		post = fmt.Sprintf("%d%05d", g.n(1, 6), g.n(0, 99999))
		return street, post, post + ", " + g.pick("Москва", "Санкт-Петербург", "Казань") + ", " + street
	}
	street = fmt.Sprintf("Av. %s %d", g.pick("Insurgentes Sur", "Reforma", "Juárez", "Revolución"), g.n(1, 3000))
	post = fmt.Sprintf("%05d", g.n(1000, 99999))
	return street, post, street + ", Col. " + g.pick("Roma Norte", "Condesa", "Del Valle") + ", " + post + " Ciudad de México"
}

// Dates of birth in more languages.

func (g *gen) dobWorld(lang string) string {
	y, m, d := g.n(1940, 2005), g.n(1, 12), g.n(1, 28)
	pl := []string{"stycznia", "lutego", "marca", "kwietnia", "maja", "czerwca", "lipca", "sierpnia", "września", "października", "listopada", "grudnia"}
	ru := []string{"января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа", "сентября", "октября", "ноября", "декабря"}
	it := []string{"gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre", "ottobre", "novembre", "dicembre"}
	pt := []string{"janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro", "novembro", "dezembro"}
	nl := []string{"januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus", "september", "oktober", "november", "december"}
	switch lang {
	case "pl":
		return g.pick(fmt.Sprintf("%02d.%02d.%d", d, m, y), fmt.Sprintf("%d %s %d", d, pl[m-1], y), fmt.Sprintf("%d %s %d r.", d, pl[m-1], y))
	case "ru":
		return g.pick(fmt.Sprintf("%02d.%02d.%d", d, m, y), fmt.Sprintf("%d %s %d г.", d, ru[m-1], y), fmt.Sprintf("%d %s %d", d, ru[m-1], y))
	case "ja", "zh":
		return g.pick(fmt.Sprintf("%d年%d月%d日", y, m, d), fmt.Sprintf("%d/%02d/%02d", y, m, d))
	case "ko":
		return g.pick(fmt.Sprintf("%d.%02d.%02d", y, m, d), fmt.Sprintf("%d년 %d월 %d일", y, m, d))
	case "it":
		return g.pick(fmt.Sprintf("%02d/%02d/%d", d, m, y), fmt.Sprintf("%d %s %d", d, it[m-1], y))
	case "pt":
		return g.pick(fmt.Sprintf("%02d/%02d/%d", d, m, y), fmt.Sprintf("%d de %s de %d", d, pt[m-1], y))
	case "nl":
		return g.pick(fmt.Sprintf("%02d-%02d-%d", d, m, y), fmt.Sprintf("%d %s %d", d, nl[m-1], y))
	case "tr":
		return fmt.Sprintf("%02d.%02d.%d", d, m, y)
	case "de":
		return g.pick(fmt.Sprintf("%02d.%02d.%d", d, m, y), fmt.Sprintf("%d.%d.%d", d, m, y))
	case "fr", "es":
		return fmt.Sprintf("%02d/%02d/%d", d, m, y)
	}
	return g.pick(fmt.Sprintf("%02d/%02d/%d", m, d, y), fmt.Sprintf("%d-%02d-%02d", y, m, d), fmt.Sprintf("%02d/%02d/%d", d, m, y))
}

// Written-out e-mail addresses.
func (g *gen) spelledEmail(lang string) wv {
	f, l := g.pick(firstNames...), g.pick(lastNames...)
	dom := g.pick("example", "gmail", "acme-mail", "posteo", "yahoo", "outlook", "correo", "mailbox")
	tld := g.pick("com", "de", "co dot uk", "org", "net", "fr", "es", "com dot br", "in", "io")
	at, dot := " at ", " dot "
	switch g.rng.IntN(5) {
	case 0:
		at, dot = " (at) ", " (dot) "
	case 1:
		at, dot = " [at] ", " [dot] "
	case 2:
		at, dot = " AT ", " DOT "
	}
	if lang == "es" || lang == "pt" {
		at, dot = g.pick(" arroba ", " at "), g.pick(" punto ", " dot ", " ponto ")
	}
	local := f + dot + l
	if g.rng.IntN(3) == 0 {
		local = f + "." + l
	}
	v := local + at + dom + dot + strings.ReplaceAll(tld, " dot ", dot)
	return wv{v, "email_spelled", []string{f, l}}
}

// Values split across two sibling fields of a JSON object.
func (g *gen) splitCard() wv {
	d, groups := g.cardDigits()
	s := group(d, groups, " ")
	k := 4 + g.rng.IntN(2)*5
	a, b := strings.TrimSpace(s[:k]), strings.TrimSpace(s[k:])
	return wv{a + "\x00" + b, "card_split", []string{a, b}}
}

func (g *gen) splitIBAN() wv {
	s := printIBAN(g.ibanRaw(g.pick("de", "fr", "es", "nl", "it")))
	k := 10
	a, b := strings.TrimSpace(s[:k]), strings.TrimSpace(s[k:])
	return wv{a + "\x00" + b, "iban_split", []string{a, b}}
}

func (g *gen) splitPhone() wv {
	cc := g.pick("+44", "+49", "+33", "+1", "+34", "+55", "+91")
	n := g.pick(g.digits(3)+" "+g.digits(3)+" "+g.digits(4), g.digits(2)+" "+g.digits(4)+" "+g.digits(4))
	return wv{cc + "\x00" + n, "phone_split", []string{cc + " " + n, n}}
}

func pii(kind string, f func(g *gen, lang string) string) func(g *gen, lang string) wv {
	return func(g *gen, lang string) wv { return wv{f(g, lang), kind, nil} }
}

func keepV(f func(g *gen, lang string) string) func(g *gen, lang string) wv {
	return func(g *gen, lang string) wv { return wv{f(g, lang), "", nil} }
}

func keepPick(xs ...string) func(g *gen, lang string) wv {
	return func(g *gen, _ string) wv { return wv{g.pick(xs...), "", nil} }
}

var worldGenerators = map[string]func(g *gen, lang string) wv{
	// Identity numbers.
	"aadhaar":    pii("aadhaar", func(g *gen, _ string) string { return g.aadhaar() }),
	"pan_in":     pii("pan_in", func(g *gen, _ string) string { return g.panIN() }),
	"cpf":        pii("cpf", func(g *gen, _ string) string { return g.cpf() }),
	"steuerid":   pii("steuerid", func(g *gen, _ string) string { return g.steuerID() }),
	"ssn_bare":   pii("ssn_bare", func(g *gen, _ string) string { return g.ssnBare() }),
	"nino_lower": pii("nino_lower", func(g *gen, _ string) string { return g.ninoLower() }),

	// Names.
	"name_lower": func(g *gen, _ string) wv { return g.lowerName() },
	"name_common": func(g *gen, _ string) wv {
		p := worldCommon[g.rng.IntN(len(worldCommon))]
		return wv{p[0] + " " + p[1], "name_common", nil}
	},
	"name_ru": func(g *gen, _ string) wv {
		p := worldRU[g.rng.IntN(len(worldRU))]
		return wv{p[0] + " " + p[1], "name_cyrillic", nil}
	},
	"name_zh": pii("name_cjk", func(g *gen, _ string) string { return g.pick(worldZH...) }),
	"name_ja": pii("name_cjk", func(g *gen, _ string) string { return g.pick(worldJA...) }),
	"name_ko": pii("name_cjk", func(g *gen, _ string) string { return g.pick(worldKO...) }),
	"name_ar": pii("name_arabic", func(g *gen, _ string) string { return g.pick(worldAR...) }),
	"name_vi": pii("name_vietnamese", func(g *gen, _ string) string { return g.pick(worldVI...) }),

	// Addresses.
	"street_br":     pii("street_br", func(g *gen, _ string) string { return g.streetBR() }),
	"cep":           pii("postcode_br", func(g *gen, _ string) string { return g.cep() }),
	"street_in":     pii("street_in", func(g *gen, _ string) string { return g.streetIN() }),
	"pin_in":        pii("postcode_in", func(g *gen, _ string) string { return g.pinIN() }),
	"street_jp":     pii("street_jp", func(g *gen, _ string) string { return g.streetJP() }),
	"street_jp_lat": pii("street_jp", func(g *gen, _ string) string { return g.streetJPRomaji() }),
	"post_jp":       pii("postcode_jp", func(g *gen, _ string) string { return g.postJP() }),

	// Dates of birth.
	"dob_w": pii("dob", func(g *gen, l string) string { return g.dobWorld(l) }),

	// Written-out e-mail addresses and split values.
	"email_spelled": func(g *gen, l string) wv { return g.spelledEmail(l) },
	"card_split":    func(g *gen, _ string) wv { return g.splitCard() },
	"iban_split":    func(g *gen, _ string) wv { return g.splitIBAN() },
	"phone_split":   func(g *gen, _ string) wv { return g.splitPhone() },

	// Clean values.
	"order":  keepV(func(g *gen, _ string) string { return g.pick("ORD-", "SO-", "PO-", "INV-") + g.digits(6) }),
	"amount": keepV(func(g *gen, l string) string { return g.amount(l) }),
	"qty":    keepV(func(g *gen, _ string) string { return fmt.Sprint(g.n(1, 48)) }),
	"tracking00": keepV(func(g *gen, _ string) string {
		// SSCC / DHL parcel numbers start with 00.
		return g.pick("00"+g.digits(18), "003404"+g.digits(14), "00 3404 "+g.digits(4)+" "+g.digits(4)+" "+g.digits(4), "JJD00"+g.digits(16))
	}),
	"tracking": keepV(func(g *gen, _ string) string {
		return g.pick("1Z"+g.chars(genUpper+genDigits, 16), g.chars(genUpper, 2)+g.digits(9)+"GB", "LX"+g.digits(9)+"CN")
	}),
	"sku": keepV(func(g *gen, _ string) string {
		return g.pick("SKU-", "ART-", "") + g.chars(genUpper, 3) + "-" + g.digits(4)
	}),
	"brand_person": keepPick("Ralph Lauren", "Hugo Boss", "Dr. Martens", "Calvin Klein", "Tommy Hilfiger", "Louis Vuitton",
		"Ted Baker", "Paul Smith", "Kate Spade", "Michael Kors", "Tory Burch", "Marc Jacobs", "Giorgio Armani", "Christian Dior",
		"Yves Saint Laurent", "Jimmy Choo", "Stella McCartney", "Vera Wang", "Karl Lagerfeld", "Tom Ford", "Estée Lauder",
		"John Deere", "Harley-Davidson", "Levi Strauss", "Ben Sherman", "Fred Perry", "Charles Tyrwhitt", "Jack Wolfskin",
		"Vivienne Westwood", "Alexander McQueen", "Max Mara", "Carolina Herrera", "Oscar de la Renta", "Salvatore Ferragamo"),
	"product_person": keepPick("Earl Grey", "Granny Smith", "Lady Finger biscuits", "Lady Grey", "Eggs Benedict", "Beef Wellington",
		"Peach Melba", "Caesar salad", "Tom Collins", "Bloody Mary", "Shirley Temple", "Mary Jane shoes", "Jack Russell leash",
		"Pink Lady apples", "Victoria sponge", "Sally Lunn buns", "Dr Pepper", "Jack Daniel's", "Johnnie Walker", "Jim Beam",
		"Mr. Clean", "Mr Muscle", "Dr. Oetker", "Uncle Ben's rice", "Sara Lee cheesecake", "Lady Fingers"),
	"company_person": keepPick("Goldman Sachs", "Charles Schwab", "Morgan Stanley", "Merrill Lynch", "Wells Fargo",
		"Edward Jones", "Raymond James", "Lehman Brothers", "Dow Jones", "Johnson Controls", "Walt Disney", "Warner Bros",
		"Ernst & Young", "Marks & Spencer", "Procter & Gamble", "Ben & Jerry's", "Dolce & Gabbana", "Louis Dreyfus",
		"Thomas Cook", "John Lewis", "Sainsbury's", "Roche", "Siemens", "Porsche", "Boeing"),
	"hub": keepPick("São Paulo Cajamar", "Osaka Kansai", "Frankfurt Hahn", "London Heathrow", "Paris Charles de Gaulle",
		"New York JFK", "Leipzig/Halle", "Liège Airport", "Cologne Bonn", "Memphis", "Louisville Worldport", "Tokyo Narita",
		"Incheon", "Shanghai Pudong", "Hong Kong Chek Lap Kok", "Dubai World Central", "Singapore Changi", "Guarulhos",
		"Viracopos Campinas", "Mumbai Bhiwandi", "Delhi Gurugram", "Chennai Sriperumbudur", "Madrid Barajas", "Milan Malpensa",
		"Rotterdam Maasvlakte", "Antwerp", "Felixstowe", "East Midlands", "Hamburg Altenwerder", "Nagoya Chubu"),
	"carrier": keepPick("DHL", "UPS", "FedEx", "DPD", "Royal Mail", "Correios", "Yamato", "Sagawa", "Delhivery", "Blue Dart",
		"La Poste", "Hermes", "GLS", "PostNL", "Canada Post", "Australia Post", "Japan Post", "SF Express"),
	"item": keepPick("polo shirts", "suit", "boots", "handbag", "perfume", "watch", "sunglasses", "jeans", "tea", "apples",
		"biscuits", "whisky", "jacket", "trainers", "wallet", "belt", "scarf", "cologne", "hoodie", "dress"),
	"place": keepPick("Manchester", "Bengaluru", "São Paulo", "Osaka", "Lyon", "Rotterdam", "Curitiba", "Hyderabad", "Nagoya",
		"Kraków", "Porto Alegre", "Pune", "Sapporo", "Belo Horizonte", "Chennai", "Fukuoka", "Marseille", "Seville", "Glasgow", "Leeds"),
}

// worldTemplates plant personal data; cleanTemplates hold none.
var worldTemplates = []template{
	// Identity numbers, with a cue and without.
	{"text", "en", "KYC for order {order}: Aadhaar {aadhaar}, PAN {pan_in}; customer in {place}."},
	{"text", "en", "Customer uploaded ID {aadhaar} and wants the refund of {amount} to go out today."},
	{"text", "en", "Please verify {pan_in} against the invoice {order} before we ship to {place}."},
	{"text", "hi", "ग्राहक का आधार नंबर {aadhaar} है, पैन {pan_in}. ऑर्डर {order}."},
	{"text", "pt", "Cliente com CPF {cpf} pediu reembolso de {amount} do pedido {order}."},
	{"text", "pt", "Nota fiscal {order} emitida para {cpf}; envio via {carrier}."},
	{"text", "en", "Brazilian customer, tax number {cpf}, asked about {order}."},
	{"text", "de", "Steuer-IdNr. {steuerid} für die Rechnung {order} hinterlegt."},
	{"text", "de", "Bitte die Steuer-ID {steuerid} prüfen, Betrag {amount}."},
	{"text", "de", "Der Kunde hat {steuerid} als Identifikationsnummer angegeben (Bestellung {order})."},
	{"text", "en", "For the W-9 the customer gave {ssn_bare} as their social, order {order}."},
	{"text", "en", "taxpayer id {ssn_bare} on file for {order}."},
	{"text", "en", "SSN: {ssn_bare}; refund {amount} approved."},
	{"text", "en", "Employee record updated: NI number {nino_lower}, payroll ref {order}."},
	{"text", "en", "my national insurance is {nino_lower} can you fix the payslip for {order}"},
	{"json", "en", `{"model":"gpt-4o","messages":[{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"verify_identity","arguments":"{\"ssn\":\"{ssn_bare}\",\"order\":\"{order}\"}"}}]}]}`},
	{"json", "en", `{"role":"assistant","tool_calls":[{"function":{"name":"kyc_check","arguments":"{\"tax_id\": \"{ssn_bare}\", \"note\": \"customer social {ssn_bare}\"}"}}]}`},
	{"json", "en", `{"tool":"kyc","arguments":{"document":"aadhaar","number":"{aadhaar}","pan":"{pan_in}"}}`},
	{"json", "pt", `{"tool":"emitir_nota","arguments":{"cliente_doc":"{cpf}","pedido":"{order}","valor":"{amount}"}}`},

	// Names.
	{"text", "en", "customer {name_lower} asked for a refund of {amount} on {order}."},
	{"text", "en", "hi {name_lower}, your {brand_person} {item} shipped via {carrier}."},
	{"text", "en", "my name is {name_lower} and my parcel {tracking} is late"},
	{"text", "en", "Name: {name_lower}\nOrder: {order}"},
	{"text", "en", "Refund of {amount} approved for {name_common} ({order})."},
	{"text", "en", "{name_common} called about the {brand_person} {item} on {order}."},
	{"text", "en", "Summary: agent proposes a refund of {amount} on {order} for {name_common}."},
	{"text", "en", "Approval needed: replace the {product_person} in {order}, ship to {name_common} in {place}."},
	{"text", "ru", "Клиент {name_ru} просит вернуть {amount} за заказ {order}."},
	{"text", "ru", "С уважением,\n{name_ru}"},
	{"text", "ru", "Меня зовут {name_ru}, посылка {tracking} не пришла."},
	{"text", "ru", "Заказ {order} оформил {name_ru}, доставка через {carrier}."},
	{"text", "zh", "客户{name_zh}要求退款{amount}，订单{order}。"},
	{"text", "zh", "收件人：{name_zh}，快递{carrier}，单号{tracking}。"},
	{"text", "zh", "{name_zh}先生说包裹没到。"},
	{"text", "ja", "{name_ja}様、ご注文{order}は発送済みです。"},
	{"text", "ja", "氏名：{name_ja}　注文番号：{order}"},
	{"text", "ja", "担当の{name_ja}さんに確認しました。"},
	{"text", "ko", "{name_ko} 고객님, 주문 {order} 환불 {amount} 처리되었습니다."},
	{"text", "ko", "고객 {name_ko} 님이 배송 문의를 하셨습니다."},
	{"text", "ar", "العميل {name_ar} يطلب استرداد {amount} للطلب {order}."},
	{"text", "ar", "مع التحية، {name_ar}"},
	{"text", "ar", "السيد {name_ar} اتصل بخصوص الشحنة {tracking}."},
	{"text", "vi", "Khách hàng {name_vi} yêu cầu hoàn tiền {amount} cho đơn {order}."},
	{"text", "en", "Spoke with {name_vi} about {order}; refund {amount} pending."},
	{"text", "vi", "Người nhận: {name_vi}, giao qua {carrier}."},

	// Addresses.
	{"text", "pt", "Entregar em {street_br} - Centro, São Paulo - SP, CEP {cep}. Pedido {order}."},
	{"text", "pt", "Endereço novo: {street_br}, Curitiba - PR, {cep}."},
	{"text", "en", "Ship the {brand_person} {item} to {street_br}, Rio de Janeiro - RJ {cep}."},
	{"text", "en", "Deliver to {street_in}, Bengaluru, Karnataka {pin_in}. Order {order}."},
	{"text", "en", "New address: {street_in}, Hyderabad - {pin_in}, Telangana."},
	{"text", "en", "Customer moved to {street_in}, Pune {pin_in}; please update {order}."},
	{"text", "ja", "〒{post_jp} 東京都渋谷区{street_jp}　注文{order}"},
	{"text", "ja", "お届け先：大阪府大阪市中央区{street_jp}（〒{post_jp}）"},
	{"text", "en", "Deliver to {street_jp_lat}, Shibuya-ku, Tokyo {post_jp}, Japan."},
	{"text", "en", "Ship to {addr_other} by {carrier}. Order {order}."},
	{"text", "en", "Address change for {order}: {addr_other}"},

	// Dates of birth.
	{"text", "pl", "Data urodzenia: {dob_w}, zamówienie {order}."},
	{"text", "pl", "Klient ur. {dob_w}, zwrot {amount}."},
	{"text", "ru", "Дата рождения: {dob_w}. Заказ {order}."},
	{"text", "ru", "Покупатель родился {dob_w}, возврат {amount}."},
	{"text", "ja", "生年月日：{dob_w}　注文{order}"},
	{"text", "ja", "{dob_w}生まれのお客様から問い合わせ。"},
	{"text", "zh", "出生日期：{dob_w}，订单{order}。"},
	{"text", "ko", "생년월일: {dob_w}, 주문 {order}"},
	{"text", "en", "{dob_w} (date of birth) confirmed for {order}."},
	{"text", "en", "Verified {dob_w} as the customer's DOB for {order}."},
	{"text", "de", "{dob_w} (Geburtsdatum), Bestellung {order}."},
	{"text", "fr", "{dob_w} (date de naissance) vérifiée pour {order}."},
	{"text", "it", "Data di nascita: {dob_w}, ordine {order}."},
	{"text", "pt", "Data de nascimento {dob_w}; pedido {order}."},
	{"text", "nl", "Geboortedatum {dob_w}, bestelling {order}."},
	{"text", "tr", "Doğum tarihi: {dob_w}, sipariş {order}."},
	{"text", "es", "{dob_w} es su fecha de nacimiento; pedido {order}."},

	// Written-out e-mail addresses.
	{"text", "en", "Reply to {email_spelled} about {order}."},
	{"text", "en", "customer says write to {email_spelled} not the old one"},
	{"text", "es", "Mi correo es {email_spelled}, pedido {order}."},
	{"text", "pt", "Meu e-mail: {email_spelled}"},
	{"text", "de", "Bitte an {email_spelled} schreiben, Bestellung {order}."},

	// Values split across two fields of a JSON object.
	{"json", "en", `{"tool":"charge","arguments":{"card_part_1":"{card_split}","card_part_2":"{split2}","order":"{order}"}}`},
	{"json", "en", `{"tool":"payout","arguments":{"iban_start":"{iban_split}","iban_rest":"{split2}","amount":"{amount}"}}`},
	{"json", "en", `{"tool":"sms","arguments":{"country_code":"{phone_split}","number":"{split2}","text":"Your {carrier} parcel is on its way"}}`},
}

var cleanTemplates = []template{
	{"text", "en", "Order {order}: {qty} × {brand_person} {item} at {amount}, shipping from {hub} via {carrier}, tracking {tracking00}."},
	{"text", "en", "Refund {amount} for the {product_person} in {order}; the {hub} hub confirmed the return."},
	{"text", "en", "Payout of {amount} to {company_person} for invoice {order} is scheduled."},
	{"text", "en", "The {brand_person} {item} ({sku}) left {hub} and is with {carrier}, tracking {tracking00}."},
	{"text", "en", "Restock {qty} cases of {product_person} at the {place} store; supplier {company_person}."},
	{"text", "en", "{brand_person} returns are handled in {hub}; ticket {order} closed."},
	{"text", "en", "Approve the wire of {amount} from {company_person} for {order}?"},
	{"text", "en", "Customer wants the {brand_person} {item} instead of the {product_person}; price difference {amount}."},
	{"text", "en", "Parcel {tracking} is held at {hub}; {carrier} expects delivery to {place} tomorrow."},
	{"text", "en", "Shipment {tracking00} ({qty} items, {amount}) was scanned at {hub}."},
	{"json", "en", `{"tool":"create_order","arguments":{"sku":"{sku}","product":"{brand_person} {item}","qty":{qty},"warehouse":"{hub}","tracking":"{tracking00}"}}`},
	{"json", "en", `{"tool":"pay_vendor","arguments":{"vendor":"{company_person}","amount":"{amount}","reference":"{order}"}}`},
	{"text", "de", "Bestellung {order}: {qty} × {brand_person} {item} für {amount}, Versand ab {hub} mit {carrier}, Sendungsnummer {tracking00}."},
	{"text", "fr", "Commande {order} : {brand_person} {item}, expédiée depuis {hub} par {carrier} ({amount})."},
	{"text", "es", "Pedido {order}: {product_person}, enviado desde {hub}, seguimiento {tracking00}."},
	{"text", "pt", "Pedido {order} com {brand_person} {item} saiu do centro {hub} pela {carrier}; rastreio {tracking00}."},
	{"text", "ja", "注文{order}の{brand_person}の商品は{hub}から{carrier}で発送されました。追跡番号{tracking00}。"},
	{"text", "en", "Summary: refund {amount} on {order} for the {brand_person} {item}; the customer keeps the {product_person}."},
	{"text", "en", "Agent proposes to reship {order} from {hub} instead of {place}; cost {amount}."},
	{"text", "en", "Invoice {order} from {company_person} covers {qty} pallets of {product_person} ({amount})."},
	{"text", "en", "The {carrier} driver left parcel {tracking00} at the {place} depot; customer ordered {brand_person} {item}."},
	{"text", "en", "Cancel {order}? It holds a {brand_person} {item} and {qty} boxes of {product_person}, total {amount}."},
	{"text", "en", "Stock check: {brand_person} {item} ({sku}) is out in {hub}, {qty} left in {place}."},
	{"text", "en", "Escalation: {company_person} disputes charge {order} of {amount}."},
	{"json", "en", `{"tool":"track","arguments":{"carrier":"{carrier}","number":"{tracking00}","hub":"{hub}"}}`},
	{"json", "en", `{"summary":"Refund {amount} for {brand_person} {item} on {order}","from":"{hub}"}`},
	{"text", "de", "Rückerstattung {amount} für {product_person} aus Auftrag {order}; Lager {hub}."},
	{"text", "fr", "Le virement de {amount} à {company_person} pour la facture {order} est prévu."},
	{"text", "es", "Devolución de {amount} por {brand_person} {item}, pedido {order}, almacén {hub}."},
	{"text", "pt", "Reembolso de {amount} para {product_person} no pedido {order}; centro {hub}."},
	{"text", "it", "Ordine {order}: {brand_person} {item} spedito da {hub} con {carrier}, tracking {tracking00}."},
	{"text", "zh", "订单{order}：{brand_person}商品从{hub}经{carrier}发出，运单号{tracking00}，金额{amount}。"},
}

// The addr_other generator plants the street line and the postcode of an
// address from one of nine more countries.
func init() {
	worldGenerators["addr_other"] = func(g *gen, _ string) wv {
		street, post, full := g.otherAddress()
		return wv{full, "address_other", []string{street, post}}
	}
}
