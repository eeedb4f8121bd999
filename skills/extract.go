package skills

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Extracted holds the values Extract found in a request's text. Empty
// fields were not found; nothing is guessed.
type Extracted struct {
	// OrderID is the first order id ("ORD-1004"); OrderIDs lists every
	// distinct one in order of appearance, so a plan can refuse a request
	// that names several orders instead of silently picking one.
	OrderID  string
	OrderIDs []string

	// AmountMinor is the first amount, in the currency's minor units.
	// Currency is its ISO 4217 code, or "" for a bare decimal after
	// "refund"/"amount" ("refund 35.50"), read with two decimals; the plan
	// takes the currency from the order.
	AmountMinor *int64
	Currency    string

	// Emails are the distinct e-mail addresses, in order of appearance.
	// The demo skills never send to them: recipients come from the order.
	Emails []string

	// Change is the requested change, from its verb to the end of the
	// sentence, without order ids: "change the delivery address to 12 Elm St".
	Change string
	// Reason is why the customer asks: a short noun phrase for well-known
	// cases ("a duplicate charge", see reasonCues) or the clause after
	// "because"/"since"/"due to".
	Reason string
	// Message is what to tell the customer: the text after "that",
	// "saying" or ":" following a verb such as "email" or "tell".
	Message string
}

// Order ids: "ORD-1004", "ord_1004", "ORD1004", and "order 1004",
// "order #1004", "order no. 1004", "order number: 1004". A number not
// preceded by "order" is not an order id.
var (
	ordRe       = regexp.MustCompile(`(?i)\bord[-_]?(\d{3,12})\b`)
	orderWordRe = regexp.MustCompile(`(?i)\border\s*(?:(?:no\.?|nr\.?|number|num|id)\s*)?[#:]?\s*(\d{3,12})\b`)
)

const numberRe = `\d{1,3}(?:[.,]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?`

var (
	// An amount carries a currency: a symbol or ISO code before it, or a
	// symbol, code or currency word after it.
	amountRe = regexp.MustCompile(`(?i)(\b(?:us|ca|c|au|a|nz|mx)\$|[$€£¥₹₩]|\b(?:usd|eur|gbp|jpy|chf|cad|aud|nzd|sek|nok|dkk|pln|czk|inr|mxn|krw))\s?(` + numberRe + `)` +
		`|(` + numberRe + `)\s?([$€£¥₹₩]|(?:usd|eur|gbp|jpy|chf|cad|aud|nzd|sek|nok|dkk|pln|czk|inr|mxn|krw|dollars?|bucks|euros?|pounds?|quid|yen)\b)`)
	// A bare decimal right after "refund" or "amount" is an amount too.
	bareAmountRe = regexp.MustCompile(`(?i)\b(?:refund|amount)(?:\s+of)?\s+(\d{1,3}(?:,\d{3})+\.\d{2}|\d+[.,]\d{2})\b`)
	emailRe      = regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}`)
)

var (
	changeVerbRe = regexp.MustCompile(`(?i)\b(?:change|update|switch|modify|move|upgrade|downgrade|swap|replace|add|remove|correct|edit|amend|reschedule|redirect|(?:deliver|ship|send)\s+(?:it\s+|them\s+|the\s+(?:order|parcel|package)\s+)?to)\b`)
	// An order reference inside a phrase, with the preposition that ties
	// it in: "for ORD-1001", "on order #1001", "ORD-1001".
	orderRefRe  = regexp.MustCompile(`(?i)(?:\s*\b(?:for|on|of|in|from|with)\s+(?:the\s+|my\s+|their\s+|this\s+|our\s+)?)?(?:\border\s*(?:(?:no\.?|nr\.?|number|num|id)\s*)?[#:]?\s*(?:ord[-_]?)?\d{3,12}\b|\bord[-_]?\d{3,12}\b)`)
	becauseRe   = regexp.MustCompile(`(?i)\b(?:because|since|due to)\s+(.+)`)
	messageVerb = regexp.MustCompile(`(?i)\b(?:e-?mail|mail|write|tell|notify|inform|let|message|contact|reply|send)\b`)
	messageLead = regexp.MustCompile(`(?i)(?:\b(?:that|saying|to say)\b\s*|:\s+)`) // not the colon of "10:30"
)

// reasonCues map common complaint wordings to the reason a plan states.
// keys are lower-case substrings one of which the text must contain before
// the (slower) regexp is tried.
var reasonCues = []struct {
	keys   []string
	re     *regexp.Regexp
	reason string
}{
	{[]string{"twice", "two times", "2 times", "double", "duplicate", "again"},
		regexp.MustCompile(`(?i)\b(?:charged|billed|paid)\s+(?:twice|two times|2 times|double)|\bdouble[- ]?(?:charged|charge|billed|payment)|\bduplicate\s+(?:charge|payment|transaction)|\bcharged\s+again\b`), "a duplicate charge"},
	{[]string{"overcharge", "over-charge", "too much", "wrong amount"},
		regexp.MustCompile(`(?i)\bover-?charged?\b|\bcharged too much\b|\bwrong amount\b`), "an overcharge"},
	{[]string{"damaged", "broken", "defective", "faulty", "cracked", "smashed"},
		regexp.MustCompile(`(?i)\b(?:damaged|broken|defective|faulty|cracked|smashed)\b`), "a damaged item"},
	{[]string{"arrive", "receive", "come", "came", "delivered", "get", "got", "shown up", "lost in"},
		regexp.MustCompile(`(?i)\b(?:never|not|didn'?t|did not|hasn'?t|has not)\s+(?:arrived?|received?|come|came|delivered|get|got|shown up)\b|\blost in (?:transit|the post|the mail)\b`), "an order that never arrived"},
	{[]string{"wrong"},
		regexp.MustCompile(`(?i)\bwrong\s+(?:item|size|colou?r|product|model|thing)\b`), "the wrong item"},
	{[]string{"late", "delayed"},
		regexp.MustCompile(`(?i)\b(?:arrived late|late delivery|delivered late|too late|delayed)\b`), "a late delivery"},
	{[]string{"cancel"},
		regexp.MustCompile(`(?i)\bcancel(?:l?ed|l?ing|lation)?\b`), "a cancelled order"},
}

// Lower-case substrings that must be present before the corresponding
// regexp can match; they keep Extract fast on the common request that has
// no amount, no change and no message.
var (
	currencyKeys   = []string{"$", "€", "£", "¥", "₹", "₩", "usd", "eur", "gbp", "jpy", "chf", "cad", "aud", "nzd", "sek", "nok", "dkk", "pln", "czk", "inr", "mxn", "krw", "dollar", "buck", "pound", "quid", "yen"}
	changeKeys     = []string{"chang", "updat", "switch", "modif", "move", "upgrad", "downgrad", "swap", "replac", "add", "remov", "correct", "edit", "amend", "reschedul", "redirect", "deliver", "ship", "send"}
	messageKeys    = []string{"mail", "writ", "tell", "notif", "inform", "let", "messag", "contact", "repl", "send"}
	becauseKeys    = []string{"because", "since", "due to"}
	bareAmountKeys = []string{"refund", "amount"}
)

func containsAny(lower string, keys []string) bool {
	for _, k := range keys {
		if strings.Contains(lower, k) {
			return true
		}
	}
	return false
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

// Extract finds order ids, amounts, e-mail addresses, the requested
// change, the reason and a message in text. It is deterministic and calls
// nothing.
func Extract(text string) Extracted {
	var ex Extracted
	// lower is only ever searched for keys, never indexed into: lower-casing
	// can change byte lengths.
	lower := strings.ToLower(text)
	if hasDigit(text) {
		ex.OrderIDs = orderIDs(text, lower)
		if len(ex.OrderIDs) > 0 {
			ex.OrderID = ex.OrderIDs[0]
		}
		if minor, cur, ok := firstAmount(text, lower); ok {
			ex.AmountMinor, ex.Currency = &minor, cur
		}
	}
	if strings.Contains(text, "@") {
		for _, e := range emailRe.FindAllString(text, -1) {
			if !slices.ContainsFunc(ex.Emails, func(seen string) bool { return strings.EqualFold(seen, e) }) {
				ex.Emails = append(ex.Emails, e)
			}
		}
	}
	if containsAny(lower, changeKeys) {
		ex.Change = changePhrase(text)
	}
	ex.Reason = reason(text, lower)
	ex.Message = message(text, lower)
	return ex
}

// NormalizeOrderID returns the canonical form of an order id written as
// "ORD-1004", "ord1004" or "1004", or "" when s is not one.
func NormalizeOrderID(s string) string {
	s = strings.TrimSpace(s)
	if m := ordRe.FindStringSubmatch(s); m != nil && len(m[0]) == len(s) {
		return "ORD-" + m[1]
	}
	if len(s) >= 3 && len(s) <= 12 && strings.Trim(s, "0123456789") == "" {
		return "ORD-" + s
	}
	return ""
}

type span struct {
	start int
	id    string
}

func orderIDs(text, lower string) []string {
	var res []*regexp.Regexp
	if strings.Contains(lower, "ord") {
		res = append(res, ordRe)
	}
	if strings.Contains(lower, "order") {
		res = append(res, orderWordRe)
	}
	var found []span
	for _, re := range res {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			if numberContinues(text, m[1]) {
				continue // a date, phone number or decimal, not an id
			}
			found = append(found, span{m[0], "ORD-" + text[m[2]:m[3]]})
		}
	}
	slices.SortStableFunc(found, func(a, b span) int { return a.start - b.start })
	var ids []string
	for _, f := range found {
		if !slices.Contains(ids, f.id) {
			ids = append(ids, f.id)
		}
	}
	return ids
}

// numberContinues reports whether the number ending at i goes on: a
// separator followed by another digit ("2024-05-01", "555-1234", "12.5").
func numberContinues(text string, i int) bool {
	if i+1 >= len(text) {
		return false
	}
	switch text[i] {
	case '-', '/', '.', ',', ':':
		return text[i+1] >= '0' && text[i+1] <= '9'
	}
	return false
}

// numberPreceded reports whether the number starting at i is the tail of
// something else: an id ("ORD-1004"), a word ("A1004") or another number.
func numberPreceded(text string, i int) bool {
	if i == 0 {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(text[:i])
	return unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_./,:+#", r)
}

func firstAmount(text, lower string) (int64, string, bool) {
	if !containsAny(lower, currencyKeys) {
		return bareAmount(text, lower)
	}
	for _, m := range amountRe.FindAllStringSubmatchIndex(text, -1) {
		var sym, num string
		var numEnd int
		if m[2] >= 0 { // symbol or code first
			sym, num, numEnd = text[m[2]:m[3]], text[m[4]:m[5]], m[5]
		} else {
			num, sym, numEnd = text[m[6]:m[7]], text[m[8]:m[9]], m[7]
			if numberPreceded(text, m[6]) {
				continue
			}
		}
		if numberContinues(text, numEnd) {
			continue
		}
		code := currencyCode(sym)
		exp, ok := exponent(code)
		if !ok {
			continue
		}
		if minor, ok := parseAmount(num, exp); ok {
			return minor, code, true
		}
	}
	return bareAmount(text, lower)
}

// bareAmount reads a decimal without a currency right after "refund" or
// "amount" ("refund 35.50").
func bareAmount(text, lower string) (int64, string, bool) {
	if !containsAny(lower, bareAmountKeys) || !strings.ContainsAny(text, ".,") {
		return 0, "", false
	}
	if m := bareAmountRe.FindStringSubmatchIndex(text); m != nil && !numberContinues(text, m[3]) {
		if minor, ok := parseAmount(text[m[2]:m[3]], 2); ok {
			return minor, "", true
		}
	}
	return 0, "", false
}

func currencyCode(sym string) string {
	s := strings.ToLower(sym)
	if code, ok := symbolCurrency[s]; ok {
		return code
	}
	return strings.ToUpper(s)
}

// sentenceEnd returns the index where the sentence containing text[i:]
// ends: at ".", "!", "?" or ";" followed by space or the end, or a newline.
func sentenceEnd(text string, i int) int {
	for j := i; j < len(text); j++ {
		switch text[j] {
		case '\n':
			return j
		case '.', '!', '?', ';':
			if j+1 == len(text) || text[j+1] == ' ' || text[j+1] == '\n' || text[j+1] == '\t' {
				return j
			}
		}
	}
	return len(text)
}

func changePhrase(text string) string {
	loc := changeVerbRe.FindStringIndex(text)
	if loc == nil {
		return ""
	}
	return cleanPhrase(text[loc[0]:sentenceEnd(text, loc[0])])
}

// cleanPhrase removes order references and polite tails from a phrase and
// lower-cases its first letter so it reads inside a sentence.
func cleanPhrase(s string) string {
	if hasDigit(s) {
		s = orderRefRe.ReplaceAllString(s, "")
	}
	s = strings.TrimRight(trimPoliteTail(strings.Join(strings.Fields(s), " ")), " ,;:.!?-")
	s = strings.TrimLeft(s, " ,;:-")
	if r, n := utf8.DecodeRuneInString(s); n > 0 && unicode.IsUpper(r) && !isAcronym(s) {
		s = string(unicode.ToLower(r)) + s[n:]
	}
	return truncate(s, 200)
}

// politeWords end a request without adding to it.
var politeWords = []string{"please", "pls", "thanks", "thank you", "thx", "asap", "if possible"}

// trimPoliteTail removes trailing courtesies and the punctuation around
// them: "switch to express shipping, thanks!" → "switch to express
// shipping". Text that ends otherwise is returned as it is.
func trimPoliteTail(s string) string {
	for {
		t := strings.TrimRight(s, " ,;:.!?-")
		lower := strings.ToLower(t)
		trimmed := false
		for _, w := range politeWords {
			if !strings.HasSuffix(lower, w) {
				continue
			}
			rest := t[:len(t)-len(w)]
			if r, _ := utf8.DecodeLastRuneInString(rest); rest == "" || !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				s, trimmed = strings.TrimRight(rest, " ,;:-"), true
				break
			}
		}
		if !trimmed {
			return s
		}
	}
}

func isAcronym(s string) bool {
	w, _, _ := strings.Cut(s, " ")
	return len(w) > 1 && strings.ToUpper(w) == w
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

func reason(text, lower string) string {
	for _, c := range reasonCues {
		if containsAny(lower, c.keys) && c.re.MatchString(text) {
			return c.reason
		}
	}
	if containsAny(lower, becauseKeys) {
		if m := becauseRe.FindStringSubmatchIndex(text); m != nil {
			return cleanPhrase(text[m[2]:sentenceEnd(text, m[2])])
		}
	}
	return ""
}

// messageStart returns where the message in text begins: after "that",
// "saying" or ":" following a verb such as "email" or "tell"; -1 if there
// is none.
func messageStart(text, lower string) int {
	if !containsAny(lower, messageKeys) {
		return -1
	}
	v := messageVerb.FindStringIndex(text)
	if v == nil {
		return -1
	}
	lead := messageLead.FindStringIndex(text[v[1]:])
	if lead == nil {
		return -1
	}
	return v[1] + lead[1]
}

func message(text, lower string) string {
	i := messageStart(text, lower)
	if i < 0 {
		return ""
	}
	msg := strings.TrimRight(trimPoliteTail(strings.TrimSpace(text[i:])), " ,;:")
	if msg == "" {
		return ""
	}
	r, n := utf8.DecodeRuneInString(msg)
	msg = string(unicode.ToUpper(r)) + msg[n:]
	if !strings.ContainsAny(msg[len(msg)-1:], ".!?") {
		msg += "."
	}
	return truncate(msg, 1000)
}
