package redact

import (
	"encoding/base64"
	"math"
	"strings"
)

// letters handles a word starting with a letter or '_' at s[i]; s[i:j] is
// the word.
func (sc *scanner) letters(i, j int) int {
	s := sc.s
	if e := sc.prefixed(i); e > 0 {
		sc.add(i, e, KindSecret, "")
		return e
	}
	if (s[i] == 'B' || s[i] == 'b') && (j-i == 5 || j-i == 6) {
		if e := sc.scheme(i, j); e > 0 {
			return e
		}
	}
	if j-i >= 4 && isAlpha(s[i]) && isAlpha(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) {
		if e := sc.iban(i); e > 0 {
			return e
		}
	}
	if j-i <= 4 && j < len(s) && s[j] == ':' && allHex(s[i:j]) {
		if e := sc.ipv6(i); e > 0 {
			return e
		}
	}
	if j < len(s) {
		switch s[j] {
		case ':', '=', '"', '\'', '-', '.', '\\':
			if e := sc.keyValue(i); e > 0 {
				return e
			}
		case ' ':
			if c := s[i] | 0x20; j-i >= 3 && j-i <= 10 && (c == 'p' || c == 'k' || c == 's') {
				if e := sc.passwordIs(i, j); e > 0 {
					return e
				}
			}
		}
	}
	if j-i < minEntropyLen && (j == len(s) || class[s[j]]&clBody == 0) {
		return j // too short, and nothing joins it to what follows
	}
	return sc.entropy(i, j)
}

// body says which bytes a prefixed secret's body is made of.
type body uint8

const (
	bodyAlnum body = iota // [A-Za-z0-9]
	bodyURL               // [A-Za-z0-9_-], base64url
	bodyWord              // [A-Za-z0-9_]
	bodyDash              // [A-Za-z0-9-]
	bodyUpper             // [A-Z0-9]
	bodyHex               // [0-9a-f]
	bodyPath              // [A-Za-z0-9_/-], a URL path
)

func (b body) has(c byte) bool {
	switch b {
	case bodyAlnum:
		return isAlnum(c)
	case bodyURL:
		return isAlnum(c) || c == '_' || c == '-'
	case bodyWord:
		return isWord(c)
	case bodyDash:
		return isAlnum(c) || c == '-'
	case bodyUpper:
		return isDigit(c) || 'A' <= c && c <= 'Z'
	case bodyHex:
		return isDigit(c) || 'a' <= c && c <= 'f'
	case bodyPath:
		return isAlnum(c) || c == '_' || c == '-' || c == '/'
	}
	return false
}

// A prefixRule is a kind of credential recognised by its prefix.
type prefixRule struct {
	prefix   string
	body     body
	min, max int // body length; max 0 means unbounded
}

// prefixRules are the credentials recognised by prefix: Warden's virtual
// keys and the keys of common providers. A body must be at least min
// bytes long, and unless its length is exact it must contain a digit or
// mix cases, so that words such as "sk-learn-pipeline" survive.
var prefixRules = func() (t [256][]prefixRule) {
	for _, r := range []prefixRule{
		{"wk_", bodyURL, 12, 0},                                        // Warden virtual key
		{"sk-", bodyURL, 20, 0},                                        // OpenAI, Anthropic (sk-ant-), DeepSeek, ...
		{"sk_live_", bodyAlnum, 10, 0}, {"sk_test_", bodyAlnum, 10, 0}, // Stripe
		{"rk_live_", bodyAlnum, 10, 0}, {"rk_test_", bodyAlnum, 10, 0},
		{"whsec_", bodyURL, 20, 0},
		{"ghp_", bodyAlnum, 20, 0}, {"gho_", bodyAlnum, 20, 0}, {"ghu_", bodyAlnum, 20, 0}, // GitHub
		{"ghs_", bodyAlnum, 20, 0}, {"ghr_", bodyAlnum, 20, 0}, {"github_pat_", bodyWord, 20, 0},
		{"glpat-", bodyURL, 20, 0}, {"glptt-", bodyURL, 20, 0}, {"gldt-", bodyURL, 20, 0}, // GitLab
		{"glrt-", bodyURL, 20, 0}, {"glsoat-", bodyURL, 20, 0}, {"glcbt-", bodyURL, 20, 0},
		{"xoxb-", bodyDash, 10, 0}, {"xoxp-", bodyDash, 10, 0}, {"xoxa-", bodyDash, 10, 0}, // Slack
		{"xoxr-", bodyDash, 10, 0}, {"xoxs-", bodyDash, 10, 0}, {"xoxe-", bodyDash, 10, 0},
		{"xapp-", bodyDash, 10, 0}, {"xkeysib-", bodyDash, 20, 0},
		{"AKIA", bodyUpper, 16, 16}, {"ASIA", bodyUpper, 16, 16}, {"AGPA", bodyUpper, 16, 16}, // AWS
		{"AIDA", bodyUpper, 16, 16}, {"AROA", bodyUpper, 16, 16}, {"AIPA", bodyUpper, 16, 16},
		{"ANPA", bodyUpper, 16, 16}, {"ANVA", bodyUpper, 16, 16}, {"APKA", bodyUpper, 16, 16},
		{"AIza", bodyURL, 30, 0},                                 // Google API key
		{"ya29.", bodyURL, 20, 0},                                // Google OAuth access token
		{"hf_", bodyAlnum, 20, 0},                                // Hugging Face
		{"npm_", bodyAlnum, 30, 0},                               // npm
		{"pypi-", bodyURL, 40, 0},                                // PyPI
		{"gsk_", bodyAlnum, 20, 0},                               // Groq
		{"r8_", bodyAlnum, 20, 0},                                // Replicate
		{"pplx-", bodyAlnum, 20, 0},                              // Perplexity
		{"tvly-", bodyURL, 20, 0},                                // Tavily
		{"lin_api_", bodyAlnum, 20, 0},                           // Linear
		{"secret_", bodyAlnum, 30, 0},                            // Notion
		{"ntn_", bodyAlnum, 30, 0},                               // Notion
		{"dop_v1_", bodyHex, 64, 64},                             // DigitalOcean
		{"dapi", bodyHex, 32, 32},                                // Databricks
		{"shpat_", bodyHex, 32, 32}, {"shpss_", bodyHex, 32, 32}, // Shopify
		{"shpca_", bodyHex, 32, 32}, {"shppa_", bodyHex, 32, 32},
		{"SK", bodyHex, 32, 32},     // Twilio API key
		{"key-", bodyAlnum, 32, 32}, // Mailgun
		{"sq0atp-", bodyURL, 20, 0}, // Square
		{"sq0csp-", bodyURL, 40, 0},
		{"EAA", bodyAlnum, 60, 0},                              // Meta
		{"https://hooks.slack.com/services/", bodyPath, 20, 0}, // Slack webhook URL
		{"https://hooks.slack.com/workflows/", bodyPath, 20, 0},
		{"https://discord.com/api/webhooks/", bodyPath, 20, 0}, // Discord webhook URL
		{"https://discordapp.com/api/webhooks/", bodyPath, 20, 0},
	} {
		t[r.prefix[0]] = append(t[r.prefix[0]], r)
	}
	return t
}()

// prefixed returns the end of a prefixed credential, a JWT or a SendGrid
// key starting at s[i], or 0.
func (sc *scanner) prefixed(i int) int {
	s := sc.s
	switch s[i] {
	case 'e':
		if strings.HasPrefix(s[i:], "eyJ") {
			return jwtEnd(s, i)
		}
	case 'S':
		if strings.HasPrefix(s[i:], "SG.") {
			p := runEnd(s, i+3, bodyURL, probe)
			if p-(i+3) >= 16 && p+1 < len(s) && s[p] == '.' {
				if q := runEnd(s, p+1, bodyURL, 0); q-(p+1) >= 16 {
					return q
				}
			}
		}
	}
	for _, r := range prefixRules[s[i]] {
		if i+len(r.prefix) > len(s) || s[i+1] != r.prefix[1] || s[i:i+len(r.prefix)] != r.prefix {
			continue
		}
		p := i + len(r.prefix)
		q := runEnd(s, p, r.body, probe)
		n := q - p
		if n < r.min || r.max > 0 && (n > r.max || q < len(s) && isAlnum(s[q])) {
			continue
		}
		if r.max == 0 && !randomish(s[p:q]) {
			continue
		}
		if n == probe {
			q = runEnd(s, q, r.body, 0)
		}
		return q
	}
	return 0
}

// probe bounds how far a candidate credential is read before it is judged;
// real ones are shorter, and the bound keeps text such as "sk-sk-sk-..."
// linear. A candidate that reaches it and looks random is then read to
// its end.
const probe = 256

// runEnd returns the end of the run of b from s[p], reading at most limit
// bytes (0: no limit).
func runEnd(s string, p int, b body, limit int) int {
	end := len(s)
	if limit > 0 {
		end = min(end, p+limit)
	}
	for p < end && b.has(s[p]) {
		p++
	}
	return p
}

// randomish reports whether w has a digit or both cases, as generated
// keys nearly always do and words nearly never do.
func randomish(w string) bool {
	var up, lo bool
	for i := 0; i < len(w); i++ {
		c := class[w[i]]
		if c&clDigit != 0 {
			return true
		}
		up = up || c&clUpper != 0
		lo = lo || c&clLower != 0
	}
	return up && lo
}

// jwtEnd returns the end of a JSON Web Token at s[i]: three base64url
// parts, header and payload JSON objects (so starting "eyJ"), the
// signature possibly empty.
func jwtEnd(s string, i int) int {
	p := runEnd(s, i, bodyURL, probe)
	if p-i < 10 || p >= len(s) || s[p] != '.' {
		return 0
	}
	q := runEnd(s, p+1, bodyURL, 0)
	if q-(p+1) < 4 || q >= len(s) || s[q] != '.' {
		return 0
	}
	return runEnd(s, q+1, bodyURL, 0)
}

// scheme handles "Bearer <credential>" and "Basic <credential>" where
// s[i:j] is the scheme word; only the credential is replaced.
func (sc *scanner) scheme(i, j int) int {
	s := sc.s
	w := s[i:j]
	bearer := strings.EqualFold(w, "bearer")
	if !bearer && !strings.EqualFold(w, "basic") {
		return 0
	}
	p := j
	for p < len(s) && s[p] == ' ' && p-j < 3 {
		p++
	}
	if p == j {
		return 0
	}
	q := p
	for q < len(s) && (isWord(s[q]) || strings.IndexByte(".~+/=-", s[q]) >= 0) {
		q++
	}
	for q > p && (s[q-1] == '.' || s[q-1] == '-') {
		q--
	}
	cred := s[p:q]
	if len(cred) < 8 {
		return 0
	}
	if bearer && !randomish(cred) {
		return 0
	}
	if !bearer && !basicCredential(cred) {
		return 0
	}
	sc.add(p, q, KindSecret, "")
	return q
}

// basicCredential reports whether c is base64 of "user:password".
func basicCredential(c string) bool {
	b, err := base64.StdEncoding.DecodeString(c)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(c, "="))
	}
	if err != nil || len(b) < 2 {
		return false
	}
	colon := false
	for _, x := range b {
		if x < 0x20 || x == 0x7f {
			return false
		}
		colon = colon || x == ':'
	}
	return colon
}

// keyValue handles key=value and key: value where the key names a secret
// or personal data (password=hunter2, "api_key": "...", DOB: 1990-04-12).
// Keys naming kinds that have their own detector (e-mail, phone, card,
// IBAN, SSN, IP) are left to the detector, so that numbers failing their
// checks survive wherever they are written. A quoted value is replaced
// whole; an unquoted one up to the next space or delimiter, and then only
// for secrets, dates of birth, identifiers and account numbers.
func (sc *scanner) keyValue(i int) int {
	s := sc.s
	k := i
	for k < len(s) && k-i < maxFieldName && (isWord(s[k]) || s[k] == '-' || s[k] == '.') {
		k++
	}
	ke := k
	for ke > i && (s[ke-1] == '-' || s[ke-1] == '.') {
		ke--
	}
	p := ke
	if p < len(s) && (s[p] == '"' || s[p] == '\'') {
		p++
	} else if p+1 < len(s) && s[p] == '\\' && s[p+1] == '"' {
		p += 2
	}
	if p < len(s) && s[p] == ' ' {
		p++
	}
	if p+1 >= len(s) || (s[p] != ':' && s[p] != '=') || s[p+1] == '=' || s[p] == ':' && s[p+1] == '/' {
		return sc.passwordIs(i, ke)
	}
	kind := sc.r.fieldKind(s[i:ke])
	if kind == "" || detected(kind) {
		return 0
	}
	p++
	for q := p; q < len(s) && q-p < 4 && s[q] == ' '; q++ {
		p = q + 1
	}
	vs, ve, next := sc.value(p, kind)
	if vs == ve {
		return 0
	}
	if !skipValue(s[vs:ve]) {
		sc.add(vs, ve, kind, "")
	}
	return next
}

// passwordIs handles prose such as "my password is hunter2" or "PIN ist
// 4821": a word naming a password, a verb, and a value that looks like a
// password rather than a word (a digit, a symbol, mixed case, or long).
// s[i:ke] is the word.
func (sc *scanner) passwordIs(i, ke int) int {
	s := sc.s
	if !oneOfFold(s[i:ke], "password", "passwort", "passwd", "passcode", "passphrase", "pin", "kennwort", "senha") {
		return 0
	}
	p := ke
	for _, verb := range []string{" is ", " ist ", " es ", " est ", " é ", " è ", " was "} {
		if strings.HasPrefix(s[p:], verb) {
			p += len(verb)
			e := p
			for e < len(s) && s[e] > ' ' && s[e] != '"' && s[e] != '\'' && s[e] != '\\' {
				e++
			}
			for e > p && strings.IndexByte(".,!?;:)", s[e-1]) >= 0 {
				e--
			}
			if v := s[p:e]; passwordLike(v) && !skipValue(v) {
				sc.add(p, e, KindSecret, "")
				return e
			}
			return 0
		}
	}
	return 0
}

// passwordLike reports whether w, after "password is", is a password
// rather than the rest of a sentence ("is incorrect", "is required").
func passwordLike(w string) bool {
	if w == "" || len(w) > 128 {
		return false
	}
	letters := 0
	for i := 0; i < len(w); i++ {
		if isAlpha(w[i]) {
			letters++
		}
	}
	return letters < len(w) || randomish(w) || len(w) >= 10
}

// value finds the value starting at s[p]: its span and where to go on.
func (sc *scanner) value(p int, kind string) (vs, ve, next int) {
	s := sc.s
	if p >= len(s) {
		return p, p, p
	}
	switch {
	case s[p] == '"' || s[p] == '\'':
		q := s[p]
		for e := p + 1; e < len(s) && e-p < 4096; e++ {
			if s[e] == '\\' {
				e++
				continue
			}
			if s[e] == q {
				return p + 1, e, e + 1
			}
		}
	case s[p] == '\\' && p+1 < len(s) && s[p+1] == '"':
		if e := strings.Index(s[p+2:min(len(s), p+4096)], `\"`); e >= 0 {
			return p + 2, p + 2 + e, p + 4 + e
		}
	}
	if e := tokenEnd(s, p); e > 0 {
		return p, e, e
	}
	if kind == KindAddress || kind == KindName {
		return p, p, p // free text after "address:" has no clear end
	}
	e := p
	for e < len(s) && !valueStop(s[e]) {
		e++
	}
	for e > p && (s[e-1] == '.' || s[e-1] == ',') {
		e--
	}
	if kind == KindSecret && e < len(s) && s[e] == ' ' && isAuthScheme(s[p:e]) {
		c := e + 1
		if te := tokenEnd(s, c); te > 0 {
			return c, te, te
		}
		f := c
		for f < len(s) && !valueStop(s[f]) {
			f++
		}
		return c, f, f
	}
	return p, e, e
}

func valueStop(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', ';', '&', '"', '\'', ')', '}', ']', '>', '<', '|', '\\':
		return true
	}
	return false
}

// skipValue reports whether a value under a sensitive key holds nothing to
// hide: empty, already a token, a literal such as null, or a mask.
func skipValue(v string) bool {
	v = strings.TrimSpace(v)
	if sp := strings.IndexByte(v, ' '); sp > 0 && isAuthScheme(v[:sp]) {
		v = strings.TrimSpace(v[sp+1:])
	}
	if v == "" || isToken(v) || strings.Trim(v, "*•x#.-_") == "" {
		return true
	}
	if oneOfFold(v, "true", "false", "null", "nil", "none", "undefined", "redacted", "[redacted]",
		"<redacted>", "[filtered]", "n/a", "omitted", "hidden", "secret", "password") {
		return true
	}
	return strings.HasPrefix(v, "${") || strings.HasPrefix(v, "{{") || strings.HasPrefix(v, "<") && strings.HasSuffix(v, ">")
}

// userinfo handles the part after "://": a password in user:password@host
// is replaced, the user name kept.
func (sc *scanner) userinfo(p int) int {
	s := sc.s
	e := p
	for e < len(s) && e-p < 256 {
		c := s[e]
		if c == '@' || c == '/' || c == '?' || c == '#' || c <= ' ' || c == '"' || c == '\'' || c == '<' || c == '>' || c == '\\' {
			break
		}
		e++
	}
	if e >= len(s) || s[e] != '@' {
		return p
	}
	c := strings.IndexByte(s[p:e], ':')
	if c < 0 || p+c+1 == e {
		return p
	}
	if !skipValue(s[p+c+1 : e]) {
		sc.add(p+c+1, e, KindSecret, "")
	}
	return e + 1
}

// dash handles a PEM private-key block.
func (sc *scanner) dash(i int) int {
	s := sc.s
	const begin = "-----BEGIN "
	if !strings.HasPrefix(s[i:], begin) {
		return i + 1
	}
	h := strings.Index(s[i+len(begin):min(len(s), i+len(begin)+64)], "-----")
	if h < 0 || !strings.Contains(s[i+len(begin):i+len(begin)+h], "PRIVATE KEY") {
		return i + len(begin)
	}
	e := len(s)
	if k := strings.Index(s[i+len(begin):], "-----END "); k >= 0 {
		end := i + len(begin) + k + len("-----END ")
		if m := strings.Index(s[end:min(len(s), end+64)], "-----"); m >= 0 {
			e = end + m + len("-----")
		}
	}
	sc.add(i, e, KindSecret, "")
	return e
}

// minEntropyLen is the shortest string the entropy check considers;
// shorter random strings are too often ids.
const minEntropyLen = 20

// entropy handles a word that may be a long random string: an API key
// without a known prefix, a session secret, an opaque token. A word that
// is a path (a '/' between readable parts, ids or numbers) is judged one
// part at a time.
func (sc *scanner) entropy(i, j int) int {
	s := sc.s
	if i < sc.entEnd {
		return j
	}
	k := i
	for k < len(s) && class[s[k]]&clBody != 0 {
		k++
	}
	for k > i && s[k-1] == '.' { // the end of a sentence
		k--
	}
	if pad := k; pad < len(s) && s[pad] == '=' {
		for pad < len(s) && s[pad] == '=' && pad-k < 2 {
			pad++
		}
		if pad >= len(s) || class[s[pad]]&clBody == 0 && s[pad] != '=' {
			k = pad
		}
	}
	sc.entEnd = k
	if k-i < minEntropyLen {
		return j
	}
	w := s[i:k]
	if strings.IndexByte(w, '/') >= 0 && pathLike(w) {
		found := false
		for p := i; p < k; {
			q := p
			for q < k && s[q] != '/' {
				q++
			}
			if q-p >= minEntropyLen && secretLike(s[p:q]) {
				sc.add(p, q, KindSecret, "")
				found = true
			}
			p = q + 1
		}
		if found {
			return k
		}
		return j
	}
	if secretLike(w) {
		sc.add(i, k, KindSecret, "")
		return k
	}
	return j
}

// pathLike reports whether a word with '/' in it is a path rather than
// base64: one of its parts is a lower-case word, a number, a hex id or a
// ULID.
func pathLike(w string) bool {
	for _, part := range strings.Split(w, "/") {
		core := part
		if u := strings.LastIndexAny(part, "._"); u >= 0 && len(part)-u > 8 {
			core = part[u+1:]
		}
		switch {
		case len(part) >= 3 && lowerWord(strings.Trim(part, ".-_")):
			return true
		case part != "" && strings.Trim(part, "0123456789.") == "":
			return true
		case len(core) >= 8 && hexOrUUID(core) || ulid(core):
			return true
		}
	}
	return false
}

// secretLike reports whether w looks generated rather than written: long,
// mixing upper case, lower case and digits, switching between them often
// (random text does at about 0.6 of its positions), of high Shannon
// entropy, and not made of words: camelCase and kebab-case identifiers
// keep most of their letters in lower-case runs of three or more with
// vowels, random text about a tenth. Hex strings are not secrets here: they are commit
// hashes, digests and trace ids far more often than keys, and UUIDs and
// ULIDs are ids. A key in hex is still caught by its prefix or by the key
// it is written under.
func secretLike(w string) bool {
	w = strings.TrimRight(w, "=")
	w = strings.TrimRight(w, "-_/+")
	if d := strings.LastIndexByte(w, '.'); d >= 0 && len(w)-d <= 6 && lowerWord(w[d+1:]) {
		w = w[:d] // a file name: 4cfd800b-....jsonl
	}
	if len(w) < minEntropyLen {
		return false
	}
	core := w
	if u := strings.IndexByte(w, '_'); u >= 2 && u <= 12 && lowerWord(w[:u]) {
		core = w[u+1:] // req_01HZ..., act_3f9a...
	}
	if hexOrUUID(core) || ulid(core) {
		return false
	}
	var (
		up, lo, di, trans int
		prev              uint8
		run, wordy        int // current lower-case run; letters in runs of 3 or more
		inSimple          int // alnum bytes in word-like segments
		segStart          int
		counts            [128]uint16
	)
	endSeg := func(end int) {
		seg := w[segStart:end]
		if len(seg) >= 3 && simpleSegment(seg) {
			inSimple += len(seg)
		}
	}
	vowels := 0 // in the current run
	endRun := func() {
		if run >= 3 && vowels*5 >= run { // written words are about 40% vowels, random text 20%
			wordy += run
		}
		run, vowels = 0, 0
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		counts[c&0x7f]++
		cl := class[c] & (clUpper | clLower | clDigit)
		switch cl {
		case clUpper:
			up++
			endRun()
		case clLower:
			lo++
			run++
			if strings.IndexByte("aeiouy", c) >= 0 {
				vowels++
			}
		case clDigit:
			di++
			endRun()
		default:
			endRun()
			endSeg(i)
			segStart = i + 1
			continue
		}
		if prev != 0 && cl != prev {
			trans++
		}
		prev = cl
	}
	endRun()
	endSeg(len(w))
	alnum := up + lo + di
	if inSimple*10 >= alnum*6 {
		return false // an identifier made of words
	}
	if up+lo > 0 && wordy*5 >= (up+lo)*3 {
		return false // camelCase and other written words
	}
	minTrans := 0.3
	switch {
	case up > 0 && lo > 0 && di > 0:
	case up > 0 && lo > 0: // both cases, no digit
		minTrans = 0.42
	case len(w) >= 32 && di > 0: // one case and digits
		minTrans = 0.4
	default:
		return false
	}
	if alnum < 2 || float64(trans)/float64(alnum-1) < minTrans {
		return false
	}
	h := 0.0
	n := float64(len(w))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h >= entropyThreshold(len(w))
}

// entropyThreshold is the least Shannon entropy, in bits per byte, for a
// string of length n to count as random: about 85% of what a random
// base62 string of that length shows, capped for long strings.
func entropyThreshold(n int) float64 {
	return min(0.72*math.Log2(float64(n)), 4.2)
}

func lowerWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if class[w[i]]&clLower == 0 {
			return false
		}
	}
	return w != ""
}

// simpleSegment reports whether a part of an identifier between '-', '_'
// or '/' reads as written: a word (lower, UPPER or Capitalised), a number,
// or a word followed by a number (v2, page10).
func simpleSegment(w string) bool {
	i := 0
	if i < len(w) && class[w[i]]&clUpper != 0 {
		i++
		allUpper := true
		for k := i; k < len(w) && isAlpha(w[k]); k++ {
			allUpper = allUpper && class[w[k]]&clUpper != 0
		}
		if allUpper {
			for i < len(w) && class[w[i]]&clUpper != 0 {
				i++
			}
		}
	}
	for i < len(w) && class[w[i]]&clLower != 0 {
		i++
	}
	for i < len(w) && isDigit(w[i]) {
		i++
	}
	return i == len(w)
}

// hexOrUUID reports whether w is hex digits, possibly split by dashes
// (a UUID).
func hexOrUUID(w string) bool {
	for i := 0; i < len(w); i++ {
		if !isHex(w[i]) && w[i] != '-' {
			return false
		}
	}
	return true
}

// ulid reports whether w is a ULID: 26 characters of Crockford base32 in
// one case, the first at most 7.
func ulid(w string) bool {
	if len(w) != 26 || w[0] < '0' || w[0] > '7' {
		return false
	}
	var up, lo bool
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case isDigit(c):
		case 'A' <= c && c <= 'Z' && c != 'I' && c != 'L' && c != 'O' && c != 'U':
			up = true
		case 'a' <= c && c <= 'z' && c != 'i' && c != 'l' && c != 'o' && c != 'u':
			lo = true
		default:
			return false
		}
	}
	return !(up && lo)
}
