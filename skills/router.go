package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// DefaultThreshold is the lowest score at which Route accepts a skill.
//
// It was chosen on the tables in router_test.go. With the demo skills
// every realistic phrasing there (short, chatty, misspelt) scores at least
// 0.49 for its skill; input that shares no word with any skill scores 0,
// and text that merely mentions one skill word among many others ("a
// documentary about the history of shipping containers") at most 0.28.
// 0.40 sits between the two. TestThresholdMargin fails when either side
// comes within 0.05 of it, so a change to examples, stop words or scoring
// that erodes the gap is caught instead of silently mis-routing.
const DefaultThreshold = 0.40

// Router picks the skill for a request by lexical similarity: no network,
// no model, the same answer every time.
//
// Each skill's description and each of its examples is a document. Text is
// lower-cased, split into words, stripped of stop words, order ids and
// numbers, and stemmed ("charged", "charges" → "charg"); a word the
// skills do not know is matched to a known word one edit away (two for
// long words), so "refnud" and "adress" still count. Words are weighted by
// inverse document frequency over all documents, so "refund" says more
// than "customer". A skill's score is the mean of two measures, both in
// [0, 1]:
//
//   - similarity: the best cosine similarity between the request and one
//     of the skill's documents, which rewards phrasings close to an example;
//   - coverage: the share of the request's weight made of words the skill
//     knows at all, which rewards requests that mix words from several
//     examples.
//
// A word no skill knows still counts in the request, as much as a known
// word found in one document in eight (see unknownWeight): off-topic text
// scores 0, and a request about one skill that also names a street, a
// product or a person is diluted but still clearly about that skill. A few
// everyday verbs ("tell", "give", "check") count, but cannot route a
// request on their own (weakWords), and the words of a quoted message
// ("email the customer that their refund was issued") count a quarter.
//
// The router answers "which skill is this about", not "is this a
// legitimate request": text that uses a skill's key word ("how do I change
// my password") routes to that skill, whose plan then refuses it for want
// of an order id (ErrIncomplete) before any tool is called.
//
// A Router is immutable and safe for concurrent use.
type Router struct {
	threshold float64
	skills    []Skill
	byName    map[string]int

	terms    map[string]int // stem → term id
	termList []string       // term id → stem
	byLen    map[int][]int  // stem length → term ids, for typo matching
	idf      []float64
	weak     []bool      // term id → a generic word that cannot route alone
	postings [][]posting // term id → documents containing it
	docSkill []int       // document → skill index
	docNorm  []float64
	known    []map[int]bool // skill index → terms in any of its documents
}

type posting struct {
	doc    int
	weight float64
}

// unknownWeight is the weight in a request of a word no skill knows: the
// inverse document frequency of a word in one document in eight, ln(1+8).
// Lower, and off-topic text that happens to contain one skill word routes;
// higher, and chatty requests full of names and addresses do not.
var unknownWeight = math.Log(9)

// Match is one skill's score for a request.
type Match struct {
	Skill string
	Score float64
}

// NewRouter indexes skills for routing. threshold is the lowest score Route
// accepts, in (0, 1]; use DefaultThreshold unless you have measured
// otherwise on your own skills.
func NewRouter(skills []Skill, threshold float64) (*Router, error) {
	if !(threshold > 0 && threshold <= 1) {
		return nil, fmt.Errorf("routing threshold %v: want a number in (0, 1]", threshold)
	}
	r := &Router{
		threshold: threshold,
		skills:    slices.Clone(skills),
		byName:    map[string]int{},
		terms:     map[string]int{},
		byLen:     map[int][]int{},
	}
	var docs [][]int // document → term ids (with repeats)
	for i, s := range skills {
		if err := s.Validate(); err != nil {
			return nil, err
		}
		if _, dup := r.byName[s.Name]; dup {
			return nil, fmt.Errorf("two skills are named %s", s.Name)
		}
		r.byName[s.Name] = i
		r.known = append(r.known, map[int]bool{})
		for _, text := range append([]string{s.Description}, s.Examples...) {
			var doc []int
			for _, w := range words(text) {
				id, ok := r.terms[w]
				if !ok {
					id = len(r.termList)
					r.terms[w] = id
					r.termList = append(r.termList, w)
					r.byLen[len(w)] = append(r.byLen[len(w)], id)
				}
				doc = append(doc, id)
				r.known[i][id] = true
			}
			if len(doc) > 0 {
				docs = append(docs, doc)
				r.docSkill = append(r.docSkill, i)
			}
		}
	}
	df := make([]int, len(r.termList))
	for _, doc := range docs {
		for _, id := range uniq(doc) {
			df[id]++
		}
	}
	r.idf = make([]float64, len(df))
	r.weak = make([]bool, len(df))
	for id, n := range df {
		r.idf[id] = math.Log(1 + float64(len(docs))/float64(n))
		r.weak[id] = weakWords[r.termList[id]]
	}
	r.postings = make([][]posting, len(r.termList))
	r.docNorm = make([]float64, len(docs))
	for d, doc := range docs {
		tf := map[int]int{}
		for _, id := range doc {
			tf[id]++
		}
		var norm float64
		for _, id := range uniq(doc) {
			w := (1 + math.Log(float64(tf[id]))) * r.idf[id]
			r.postings[id] = append(r.postings[id], posting{d, w})
			norm += w * w
		}
		r.docNorm[d] = math.Sqrt(norm)
	}
	return r, nil
}

// Threshold returns the lowest score Route accepts.
func (r *Router) Threshold() float64 { return r.threshold }

// Names lists the skills the router knows, in the order they were given.
func (r *Router) Names() []string {
	out := make([]string, len(r.skills))
	for i, s := range r.skills {
		out[i] = s.Name
	}
	return out
}

// Skill returns the skill named name.
func (r *Router) Skill(name string) (Skill, bool) {
	i, ok := r.byName[name]
	if !ok {
		return Skill{}, false
	}
	return r.skills[i], true
}

// Route returns the skill for text and its score. A non-empty hint names
// the skill explicitly (the request's "skill" field): it is used as is,
// with score 1, or refused with ErrUnknownSkill. Otherwise the best-scoring
// skill wins if it reaches the threshold; ties go to the skill listed
// first. Nothing good enough is ErrNoRoute.
func (r *Router) Route(text, hint string) (Skill, float64, error) {
	return r.RouteWith(text, hint, Policy{})
}

// Policy is what a release changes in routing: the threshold (0 for the
// router's own) and the skills that may be routed to (nil for all).
type Policy struct {
	Threshold float64
	Allow     func(skill string) bool
}

// RouteWith routes as Route does under a release's policy: a skill the
// policy does not allow is never chosen, named by a hint
// (ErrUnknownSkill) or by score, and the best allowed skill must reach
// the policy's threshold.
func (r *Router) RouteWith(text, hint string, p Policy) (Skill, float64, error) {
	allow := p.Allow
	if allow == nil {
		allow = func(string) bool { return true }
	}
	threshold := r.threshold
	if p.Threshold > 0 {
		threshold = p.Threshold
	}
	if hint = strings.TrimSpace(hint); hint != "" {
		if s, ok := r.Skill(hint); ok && allow(s.Name) {
			return s, 1, nil
		}
		return Skill{}, 0, fmt.Errorf("%w %q", ErrUnknownSkill, hint)
	}
	for _, m := range r.Rank(text) {
		if !allow(m.Skill) {
			continue
		}
		if m.Score < threshold {
			break
		}
		return r.skills[r.byName[m.Skill]], m.Score, nil
	}
	return Skill{}, 0, ErrNoRoute
}

// Rank scores every skill for text, best first (ties in skill order). It
// explains a routing decision; Route is what decides.
func (r *Router) Rank(text string) []Match {
	out := make([]Match, len(r.skills))
	for i, s := range r.skills {
		out[i].Skill = s.Name
	}
	q, unknown := r.query(text)
	var qnorm2 float64
	for _, t := range q {
		qnorm2 += t.weight * t.weight
	}
	qnorm2 += unknown
	if len(q) == 0 || qnorm2 == 0 {
		return out
	}
	qnorm := math.Sqrt(qnorm2)

	dots := make([]float64, len(r.docNorm))
	covered := make([]float64, len(r.skills))
	strong := make([]bool, len(r.skills))
	for _, t := range q {
		id, w := t.id, t.weight
		for _, p := range r.postings[id] {
			dots[p.doc] += w * p.weight
		}
		for i := range r.skills {
			if r.known[i][id] {
				covered[i] += w * w
				strong[i] = strong[i] || !r.weak[id]
			}
		}
	}
	best := make([]float64, len(r.skills))
	for d, dot := range dots {
		if dot == 0 {
			continue
		}
		s := r.docSkill[d]
		best[s] = max(best[s], dot/(qnorm*r.docNorm[d]))
	}
	for i := range out {
		if strong[i] {
			out[i].Score = (best[i] + covered[i]/qnorm2) / 2
		}
	}
	slices.SortStableFunc(out, func(a, b Match) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return out
}

// quotedWeight scales the words of a message the request quotes ("email
// the customer that their refund was issued"): they say what to tell the
// customer, not what to do, so "refund" there must not outvote "email".
const quotedWeight = 0.25

// query turns text into weighted known terms and the squared weight of the
// words no skill knows.
func (r *Router) query(text string) ([]qterm, float64) {
	tf := map[int]float64{}
	var unknown float64
	add := func(part string, weight float64) {
		eachWord(part, func(raw, stemmed string) {
			id, ok := r.terms[stemmed]
			if !ok {
				id, ok = r.nearest(stemmed)
			}
			if !ok && raw != stemmed {
				// Stemming a misspelling can take it further from the
				// word meant ("stauts" → "staut"); try it as written too.
				id, ok = r.nearest(raw)
			}
			if !ok {
				unknown += weight * weight * unknownWeight * unknownWeight
				return
			}
			tf[id] += weight
		})
	}
	if i := messageStart(text, strings.ToLower(text)); i >= 0 {
		add(text[:i], 1)
		add(text[i:], quotedWeight)
	} else {
		add(text, 1)
	}
	// A slice in term order, not a map: summing floats in a random order
	// would make scores differ in the last bits from call to call.
	q := make([]qterm, 0, len(tf))
	for id, n := range tf {
		if n > 1 {
			n = 1 + math.Log(n)
		}
		q = append(q, qterm{id, n * r.idf[id]})
	}
	slices.SortFunc(q, func(a, b qterm) int { return a.id - b.id })
	return q, unknown
}

type qterm struct {
	id     int
	weight float64
}

// nearest finds the known term a misspelt word most likely meant: within
// one edit for words of five to eight letters, two for longer ones, and
// never for shorter ones (too many short words are one edit apart:
// "book" and "look", "bark" and "back"). Ties go to the rarer term, then
// the alphabetically first, so the choice is deterministic.
func (r *Router) nearest(w string) (int, bool) {
	n := len(w)
	maxDist := 1
	switch {
	case n < 5:
		return 0, false
	case n >= 9:
		maxDist = 2
	}
	best, bestDist := -1, maxDist+1
	for l := n - maxDist; l <= n+maxDist; l++ {
		for _, id := range r.byLen[l] {
			t := r.termList[id]
			if len(t) < 5 {
				continue
			}
			d := editDistance(w, t, bestDist)
			if d < bestDist || (d == bestDist && best >= 0 && (r.idf[id] > r.idf[best] || (r.idf[id] == r.idf[best] && t < r.termList[best]))) {
				best, bestDist = id, d
			}
		}
	}
	return best, best >= 0 && bestDist <= maxDist
}

// editDistance is the optimal-string-alignment distance between a and b
// (insertions, deletions, substitutions and adjacent transpositions),
// giving up with limit+1 once the distance must exceed limit.
func editDistance(a, b string, limit int) int {
	if abs(len(a)-len(b)) > limit {
		return limit + 1
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func uniq(ids []int) []int {
	s := slices.Clone(ids)
	slices.Sort(s)
	return slices.Compact(s)
}

// words splits text into routing terms: lower-case letter runs, without
// stop words, without anything containing a digit (order ids, amounts,
// house numbers), stemmed.
func words(text string) []string {
	var out []string
	eachWord(text, func(_, stemmed string) { out = append(out, stemmed) })
	return out
}

// eachWord calls fn with each routing term of text, as written (lower
// case) and stemmed.
func eachWord(text string, fn func(raw, stemmed string)) {
	text = strings.ToLower(text)
	for _, p := range phrases {
		if strings.Contains(text, p.cue) {
			text = p.re.ReplaceAllString(text, p.as)
		}
	}
	for _, f := range strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(f) < 2 || strings.ContainsFunc(f, unicode.IsDigit) || stopWords[f] {
			continue
		}
		if s := stem(f); !stopWords[s] {
			fn(f, s)
		}
	}
}

// phrases are wordings whose meaning no single word carries; they are
// rewritten to one word that does, in examples and requests alike. cue is
// a substring that must be present, to skip the regexp cheaply.
var phrases = []struct {
	cue string
	re  *regexp.Regexp
	as  string
}{
	{"know", regexp.MustCompile(`\blet\s+(?:[\pL']+\s+){0,2}know\b`), "notify"},
	{"tell", regexp.MustCompile(`\btell\s+(?:the\s+|our\s+|this\s+)?(?:customer|client|buyer|them|him|her)\b`), "notify"},
}

// stopWords say nothing about which skill is meant. Besides the usual
// function words they include words every support request uses ("order",
// "customer", "please"), so an order id or a greeting alone routes
// nowhere. Question words that do carry intent ("where", "when") are kept.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		a an the and or but if then than so of to in on at for with by from as into onto about
		is are was were be been being am it its it's this that these those there here
		i me my mine we us our ours you your yours he him his she her hers they them their theirs
		what which who whom whose how why
		can could would will shall should may might must do does did done doing
		have has had having just also too very really quite some any all each every no not never
		please pls plz kindly thanks thank thx hi hello hey dear ok okay yes sure
		need needs want wants wanted like get gets got getting make made let lets
		order orders ord customer customers client clients buyer user sir madam team support agent
		one two number id nr no s t d ll re ve m didn don doesn isn wasn hasn haven won
		again now today yesterday still yet already asap possible soon
		good morning afternoon evening regarding re mr mrs ms asking asked ask says said
		wondering wonder hoping hope think believe called calling phoned wrote writes`) {
		m[w] = true
	}
	return m
}()

// weakWords are everyday verbs and fillers that the examples use ("tell
// the customer", "give the money back") but that say little on their own:
// they add to a skill's score, yet a request needs at least one other word
// the skill knows, so "tell me a joke" routes nowhere. Stored stemmed.
var weakWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		tell write say send give show check help know look see ask call find put keep take
		go come back new next same different thing time day week sure well good`) {
		m[stem(w)] = true
	}
	return m
}()

// stem strips common English suffixes so inflections of one word meet:
// plurals, -ed, -ing and a final silent e. It is deliberately light; the
// examples supply the variants it does not join.
func stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	for _, suf := range []string{"ing", "ed"} {
		if base, ok := strings.CutSuffix(w, suf); ok && len(base) >= 3 && strings.ContainsAny(base, "aeiouy") {
			w = base
			if n := len(w); n >= 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouylsz", rune(w[n-1])) {
				w = w[:n-1]
			}
			break
		}
	}
	if len(w) > 4 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

// Entry is one skill as a release records it: its name and the hash of
// its SKILL.md.
type Entry struct {
	Name string `json:"name"`
	Hash string `json:"hash"`
}

// Entries lists the router's skills with their hashes, in the router's
// order: the content of a release's skills surface, so that changing any
// SKILL.md changes the release digest. A skill built in code (no SKILL.md)
// is hashed by its Spec's JSON.
func (r *Router) Entries() []Entry {
	out := make([]Entry, len(r.skills))
	for i, s := range r.skills {
		h := s.Hash
		if h == "" {
			b, _ := json.Marshal(s.Spec())
			sum := sha256.Sum256(b)
			h = hex.EncodeToString(sum[:])
		}
		out[i] = Entry{Name: s.Name, Hash: h}
	}
	return out
}
