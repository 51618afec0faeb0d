// Package relevance holds the one gate every recall candidate passes
// through, whatever source found it. A memory earns its place by its vector
// similarity, by covering most of the question's informative words, by an
// entity the question names, by being what a question about the user asks
// for, by being among the user's nearest memories to a question about the
// user or well ahead of the rest of them, or by its link to a memory that
// earned its place itself; a question made only of pleasantries earns
// nothing. The rules are pure: recall gathers the evidence, this package
// decides.
package relevance

import (
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Gates: the reason a memory was let through, as explain shows it.
const (
	GateVector    = "vector"    // similarity to the question at the floor or above
	GateText      = "fulltext"  // covers most of the question's informative words, or an identifier it names
	GateEntity    = "entity"    // mentions an entity the question names
	GateIntent    = "intent"    // the kind of memory a question about the user asks for
	GateSubject   = "subject"   // among the user's nearest to a question about the user
	GateLead      = "lead"      // the user's nearest to a question, well ahead of the next
	GateNeighbour = "neighbour" // linked to a memory that passed, and near the question
	GateSession   = "session"   // of the caller's session, beside a memory that passed
)

// Term is one informative word of a question with its weight: the inverse
// document frequency among the user's memories, so that a word most of
// them contain weighs little.
type Term struct {
	Text   string
	Weight float64
	// Seen is true when at least one of the user's memories contains it.
	Seen bool
}

// Question is what the gate knows of a question.
type Question struct {
	Terms []Term
	// Social is true when the question is only pleasantries (thanks,
	// greetings, "ok"): nothing a memory could answer.
	Social bool
	// AboutUser is true when the question asks about the user recall
	// serves (intent.About).
	AboutUser bool
	// AboutDealing is true when the question speaks of one of the user's
	// dealings (an order, a shipment, an invoice) without naming the user:
	// the user's nearest memories answer it only at the lead floor, since
	// the same words ask about the world too.
	AboutDealing bool
	// Topical is true when the question asks for a kind of memory about a
	// subject it names (intent.Ask.Topical): a memory of that kind passes
	// the intent gate only at the subject floor.
	Topical bool
	// Identifiers are the codes the question names, lower-cased
	// (facts.Identifiers): each names one order, invoice or parcel.
	Identifiers []string
	// Asks is true when the text is a question (intent.Asks), not a
	// request, a greeting or a statement.
	Asks bool
	// Requests is true when the text, not a question, asks for something
	// (intent.Requests): a statement naming a kind of memory ("just sent
	// you an email") asks for none.
	Requests bool
	// Prefers is true when the text asks what is required, preferred or
	// best (intent.Prefers): asking so for a kind of memory, it asks for
	// the user's.
	Prefers bool
	// World is true for a question about things in general, not about the
	// user (intent.General without intent.About): "what are typical
	// payment terms in the auto parts industry?" names a kind of memory
	// without asking for the user's, and no guess of the user's nearest
	// memories answers it.
	World bool
	// HowTo is true when the text asks how to do something (intent.HowTo):
	// a procedure tells the way, not the user's nearest facts, however
	// near.
	HowTo bool
	// Refers is true when the text refers to a person or to a thing as
	// known (intent.Refers): a question that does not asks about the world,
	// and the user's nearest memory does not answer it however far ahead.
	Refers bool
}

// Analyse weighs the keywords of a question (in any case). docs are the texts of the
// memories the full-text search found for them, n the number of memories
// the user has: a keyword's document frequency is counted among docs, which
// hold every memory that shares a keyword up to the search's limit. A
// keyword no memory contains weighs as much as one only a single memory
// contains: it is a word the user's memories know nothing of.
func Analyse(keywords []string, docs []string, n int) Question {
	keywords = slices.Clone(keywords)
	for i, k := range keywords {
		keywords[i] = strings.ToLower(k)
	}
	q := Question{Social: IsSocial(keywords)}
	n = max(n, len(docs), 1)
	lower := make([]string, len(docs))
	for i, d := range docs {
		lower[i] = strings.ToLower(d)
	}
	for _, k := range keywords {
		df := 0
		for _, d := range lower {
			if Contains(d, k) {
				df++
			}
		}
		q.Terms = append(q.Terms, Term{Text: k, Weight: math.Log(1 + float64(n)/float64(max(df, 1))), Seen: df > 0})
	}
	return q
}

// Coverage is the weighted share of the question's terms that content
// (lower-cased) contains, in [0, 1].
func (q Question) Coverage(content string) float64 {
	var all, got float64
	for _, t := range q.Terms {
		all += t.Weight
		if Contains(content, t.Text) {
			got += t.Weight
		}
	}
	if all == 0 {
		return 0
	}
	return got / all
}

// HoldsIdentifier reports whether content holds, as a whole word, an
// identifier the question names: the memory is about the very order or
// invoice asked about, whatever else the question says.
func (q Question) HoldsIdentifier(content string) bool {
	if len(q.Identifiers) == 0 {
		return false
	}
	content = strings.ToLower(content)
	for _, id := range q.Identifiers {
		if find(content, id, true) {
			return true
		}
	}
	return false
}

// Contains reports whether lower-cased text holds a keyword: a Chinese one
// anywhere, another at the start of a word, so that "expire" is found in
// "expires" and "day" in "30-day" but not in "today".
func Contains(text, keyword string) bool { return find(text, keyword, false) }

// find reports whether text holds keyword at the start of a word, and with
// whole also at its end. Characters of scripts without word boundaries
// (Chinese) bound every word.
func find(text, keyword string, whole bool) bool {
	if keyword == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(text[i:], keyword)
		if j < 0 {
			return false
		}
		at, end := i+j, i+j+len(keyword)
		starts := at == 0 || !wordRune(lastRune(text[:at])) || !wordRune(firstRune(keyword))
		ends := !whole || end == len(text) || !wordRune(firstRune(text[end:])) || !wordRune(lastRune(keyword))
		if starts && ends {
			return true
		}
		i = at + 1
	}
}

// wordRune is a letter or digit of an alphabetic script: the characters
// that continue an English word (Chinese has no word boundaries to keep).
func wordRune(r rune) bool {
	return (unicode.IsLetter(r) || unicode.IsDigit(r)) && !unicode.Is(unicode.Han, r)
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// Unseen is the weighted share of the question's terms that none of the
// user's memories contains: high for a question about something the user
// never mentioned ("xyz 123 订单").
func (q Question) Unseen() float64 {
	var all, unseen float64
	for _, t := range q.Terms {
		all += t.Weight
		if !t.Seen {
			unseen += t.Weight
		}
	}
	if all == 0 {
		return 0
	}
	return unseen / all
}

// Rules are the gate's thresholds. They belong to the embedding model as
// much as to the code: a model with a narrow band of cosines needs higher
// floors.
type Rules struct {
	// VectorFloor is the similarity a memory needs to pass on the vector
	// side. Below StrongFloor a vector pass also needs the question to be
	// mostly about words the user's memories know (Unseen below
	// UnseenMax): a weak similarity to a question about something the user
	// never mentioned is the embedder's noise.
	VectorFloor, StrongFloor, UnseenMax float64
	// Coverage is the weighted share of the question's informative words a
	// full-text hit must contain to pass on its own; AgreedCoverage is the
	// lower share that passes when the vector side agrees (a similarity of
	// AgreeFloor or more) and the question is mostly about words the
	// user's memories know.
	Coverage, AgreedCoverage, AgreeFloor float64
	// NeighbourFloor is the similarity a memory reached through the graph
	// from a memory that passed must exceed: what unrelated texts
	// typically score. A memory below it that holds only part of the
	// question's words does not pass on them either.
	NeighbourFloor float64
	// SubjectFloor is the similarity one of the user's nearest memories
	// needs to answer a question about the user, and a memory of the kind
	// a topical question asks for needs to pass the intent gate; 0 turns
	// the subject gate off and leaves such memories the vector floor.
	// It lies below VectorFloor: such a question often shares neither
	// words nor much similarity with the memory it means ("which firm am I
	// with?" against "works at Acme").
	SubjectFloor float64
	// LeadFloor is the similarity the user's nearest memory needs to
	// answer a question when it is nearer than the user's next memory by
	// LeadMargin or more; 0 turns the lead gate off. A paraphrase far
	// below the vector floor ("what happened with the damaged seats?"
	// against "the chairs arrived with broken armrests") often still
	// stands out from the rest of the user's memories, where the embedder's
	// noise does not.
	LeadFloor, LeadMargin float64
}

// Evidence is what the sources found out about one memory.
type Evidence struct {
	// Similarity is the cosine to the question, when Vector.
	Vector     bool
	Similarity float64
	// Coverage is the share of the question's terms the memory contains.
	Coverage float64
	// Text is true when full-text search found the memory.
	Text bool
	// Named is true when the memory mentions an entity the question names;
	// Identifier when it holds an identifier the question names
	// (Question.HoldsIdentifier).
	Named, Identifier bool
	// Intent is true when the memory is what a question about the user
	// asks for (its kind or slot).
	Intent bool
	// Nearest is true when the memory is the user's own and among the
	// nearest of them to the question.
	Nearest bool
	// Lead is how much nearer to the question the memory is than the
	// user's next memory, when it is the user's nearest; 0 otherwise.
	Lead float64
	// Neighbour is true when the graph reached the memory from one that
	// passed; NeighbourSimilarity is its cosine to the question.
	Neighbour           bool
	NeighbourSimilarity float64
	// Session is true when the memory belongs to the caller's session.
	Session bool
	// Shared is true for shared knowledge (the tenant's, a team's or an
	// agent's), false for the user's own memories.
	Shared bool
}

// First is the gate a memory passes on its own evidence, or "" when it
// passes none. Neighbours and session memories pass only with Ride, once
// something else has passed.
func (r Rules) First(q Question, e Evidence) string {
	if q.Social {
		return ""
	}
	switch {
	case e.Intent && (!q.Topical || e.Similarity >= r.topicalFloor()) && r.intentReaches(q, e):
		return GateIntent
	case e.Named && r.namedReaches(q, e):
		return GateEntity
	case e.Identifier:
		return GateText
	case e.Vector && e.Similarity >= r.StrongFloor:
		return GateVector
	case e.Vector && e.Similarity >= r.VectorFloor && (q.Unseen() < r.UnseenMax || e.Shared):
		// Unseen is of the user's memories: it says nothing of what the
		// tenant's shared rules know.
		return GateVector
	case e.Text && e.Coverage >= r.Coverage && !r.unrelatedMeaning(e) && !r.worldWords(q, e):
		return GateText
	case e.Text && e.Coverage >= r.AgreedCoverage && e.Vector && e.Similarity >= r.AgreeFloor && q.Unseen() < r.UnseenMax && !q.World:
		return GateText
	case q.AboutUser && !q.HowTo && e.Nearest && e.Vector && r.SubjectFloor > 0 && e.Similarity >= r.SubjectFloor:
		return GateSubject
	case q.AboutDealing && !q.World && !q.HowTo && e.Nearest && e.Vector && r.LeadFloor > 0 && e.Similarity >= r.LeadFloor:
		return GateSubject
	case q.Asks && q.Refers && !q.World && e.Vector && r.LeadFloor > 0 && e.Similarity >= r.LeadFloor && e.Lead > 0 && e.Lead >= r.LeadMargin:
		return GateLead
	}
	return ""
}

// unrelatedMeaning reports whether a memory that holds only part of the
// question's words is, by the embedder, no nearer the question than
// unrelated texts typically are (NeighbourFloor): "did Carol pay on time?"
// shares "pay" with a note on shipping fees that means something else.
func (r Rules) unrelatedMeaning(e Evidence) bool {
	return e.Vector && e.Coverage < 1 && e.Similarity < r.NeighbourFloor
}

// worldWords reports a memory whose words answer a question about the
// world: one that names neither the user nor a thing as known ("are
// nitrile gloves food safe?") shares its words with the user's order or
// invoice note without meaning it, unless the embedder finds the two near
// (AgreeFloor); one about things in general (World: "增值税专用发票和普通发
// 票有啥区别", "上海今天天气怎么样") whatever the embedder finds, since the
// words they share (a city, an invoice type) are what pulls the two near.
// A statement that asks for nothing ("I'm at the office now") shares its
// words with a memory only when the embedder finds the two near too.
func (r Rules) worldWords(q Question, e Evidence) bool {
	near := e.Vector && e.Similarity >= r.AgreeFloor
	return q.Asks && (q.World || !q.Refers && !q.AboutUser && !near) || !q.Asks && !q.Requests && !near
}

// Passed is a memory that passed a gate on its own evidence.
type Passed struct {
	Gate     string
	Evidence Evidence
}

// JoinAbove returns the similarity above which a guess of the subject or
// lead gate joins the memories that passed, and whether guesses may join
// at all: only when every one of those passed the full-text gate on part
// of the question's words, and none for an identifier the question names.
// A partial word match ("what did he want a price for?" sharing "want"
// with a note about calls) must not silence a memory nearer the question.
func JoinAbove(passed []Passed) (float64, bool) {
	if len(passed) == 0 {
		return 0, false
	}
	above := math.Inf(-1)
	for _, p := range passed {
		if p.Gate != GateText || p.Evidence.Coverage >= 1 || p.Evidence.Identifier {
			return 0, false
		}
		above = max(above, p.Evidence.Similarity)
	}
	return above, true
}

// intentReaches reports whether a memory of the kind a question names may
// answer it by intent. A question that asks without referring to the user
// or to one of the user's dealings ("when is the delivery of the new Tesla
// model?") reaches the user's own memories only at the lead floor; requests
// ("按老规矩处理") and shared knowledge (the tenant's rules) are not held
// back, nor is anything when the lead gate is off.
func (r Rules) intentReaches(q Question, e Evidence) bool {
	if !q.Asks {
		return q.Requests
	}
	if q.World {
		return e.Shared
	}
	return q.AboutUser || q.AboutDealing || q.Prefers || e.Shared || r.LeadFloor == 0 || e.Similarity >= r.LeadFloor
}

// namedReaches reports whether a memory mentioning an entity the question
// names may answer it by that name: a question that asks about neither the
// user nor one of their dealings ("合肥到上海的高铁要多久？", "how do I get
// to Pudong airport?") reaches a memory through a city or company it shares
// with it only if the memory is also at the lead floor.
func (r Rules) namedReaches(q Question, e Evidence) bool {
	sim, known := e.Similarity, e.Vector
	if !known && e.Neighbour {
		sim, known = e.NeighbourSimilarity, true
	}
	// A statement ("客户说收到的货物破损了") is no question about the world:
	// the entity it names is what an agent relaying it needs.
	return !known || !q.Asks || r.intentReaches(q, Evidence{Similarity: sim, Shared: e.Shared})
}

// topicalFloor is the similarity a memory of the kind a topical question
// asks for needs: the subject floor, or with the subject gate off the
// vector floor, since no weaker evidence then counts.
func (r Rules) topicalFloor() float64 {
	if r.SubjectFloor > 0 {
		return r.SubjectFloor
	}
	return r.VectorFloor
}

// Own reports whether gate is passed on a memory's own, firm evidence of
// what the question is about (its meaning, words or entities), so that
// graph expansion may start from it: not a memory the question asked for by
// kind alone (intent), whose links to the user's company or orders say
// nothing about the question, nor a guess of the subject or lead gate, nor
// a ride beside another memory.
func Own(gate string) bool {
	return gate == GateVector || gate == GateText || gate == GateEntity
}

// Ride is the gate a memory passes for its link to memories that passed on
// their own (call it only when some did), or "".
func (r Rules) Ride(e Evidence) string {
	switch {
	case e.Neighbour && e.NeighbourSimilarity > r.NeighbourFloor:
		return GateNeighbour
	case e.Session:
		return GateSession
	}
	return ""
}

// socialWords are the words of pleasantries in English and Chinese: a
// question made of nothing else asks for nothing.
var socialWords = map[string]bool{
	"thank": true, "thanks": true, "thx": true, "ty": true, "cheers": true, "appreciate": true, "appreciated": true,
	"nice": true, "day": true, "good": true, "great": true, "ok": true, "okay": true, "k": true, "cool": true,
	"fine": true, "sure": true, "yes": true, "yeah": true, "yep": true, "right": true, "alright": true,
	"hello": true, "hi": true, "hey": true, "bye": true, "goodbye": true, "morning": true, "afternoon": true,
	"evening": true, "night": true, "see": true, "later": true, "soon": true, "welcome": true, "sorry": true,
	"got": true, "awesome": true, "perfect": true, "wonderful": true, "lovely": true, "weekend": true,
	"take": true, "care": true, "bless": true, "lot": true, "lots": true, "help": true, "helpful": true,
	"understood": true, "noted": true, "haha": true, "lol": true, "wow": true, "oh": true, "ah": true,
	"hmm": true, "well": true, "done": true, "kind": true, "regards": true, "best": true, "again": true,
	"好": true, "好的": true, "谢": true, "谢谢": true, "多谢": true, "感谢": true, "再见": true, "拜拜": true,
	"嗯": true, "哦": true, "噢": true, "行": true, "可以": true, "收到": true, "明白": true, "知道": true,
	"没问题": true, "辛苦": true, "辛苦了": true, "哈哈": true, "你好": true, "早上": true, "晚上": true,
	"晚安": true, "早安": true, "不客气": true, "对": true, "是的": true, "嗯嗯": true, "好滴": true, "ok啦": true,
}

// socialRunes are Chinese characters that, within a keyword, say nothing
// but pleasantry: a two-character keyword made only of them ("谢谢",
// "好的" cut to "好") is social.
var socialRunes = map[rune]bool{'好': true, '谢': true, '嗯': true, '哦': true, '哈': true, '拜': true, '再': true, '见': true, '行': true, '收': true, '到': true, '啦': true, '滴': true, '晚': true, '安': true, '早': true}

// IsSocial reports whether keywords are pleasantries and nothing else. No
// keywords at all is not: a question of function words alone is left to
// the vector side.
func IsSocial(keywords []string) bool {
	if len(keywords) == 0 {
		return false
	}
	for _, k := range keywords {
		if socialWords[k] || allSocialRunes(k) {
			continue
		}
		return false
	}
	return true
}

func allSocialRunes(k string) bool {
	for _, r := range k {
		if !unicode.Is(unicode.Han, r) || !socialRunes[r] {
			return false
		}
	}
	return k != ""
}
