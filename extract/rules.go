// Package extract turns conversation turns into memories worth keeping: a
// rule-based extractor for Chinese and English that finds stated preferences
// and constraints, "remember that…" requests, budgets and amounts, orders,
// dates, companies and places; and an optional extractor that asks an
// OpenAI-compatible model and falls back to the rules. Both pass their
// output through the same validation.
package extract

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"mneme/guard"
	"mneme/memory"
	"mneme/period"
)

// Rules is the rule-based extractor. It reads only what the user said:
// an assistant's words are not facts about the user.
type Rules struct {
	now func() time.Time
}

// NewRules returns the rule-based extractor; now dates turns that carry no
// time of their own (nil: time.Now).
func NewRules(now func() time.Time) *Rules {
	if now == nil {
		now = time.Now
	}
	return &Rules{now: now}
}

// Importance per kind of finding: what the user asked us to keep or
// constrained us with matters more than a passing mention.
const (
	importanceNote       = 0.8
	importanceAmountSlot = 0.8
	importanceConstraint = 0.75
	importancePreference = 0.7
	importanceDateFact   = 0.7
	importanceProfile    = 0.6
	importanceEvent      = 0.5
	confidenceStated     = 0.9
	sourceConversation   = "conversation"
)

// Extract implements memory.Extractor.
func (r *Rules) Extract(_ context.Context, turns []memory.Turn) ([]memory.NewMemory, error) {
	var out []memory.NewMemory
	for _, t := range turns {
		if t.Role != memory.RoleUser {
			continue
		}
		ref := t.At
		if ref.IsZero() {
			ref = r.now()
		}
		for _, s := range sentences(t.Content) {
			out = append(out, fromSentence(s, ref.UTC())...)
		}
	}
	return finish(out), nil
}

// finish validates and keeps one memory per key (the last stated wins: "my
// budget is 100k… no, make it 150k") and one per identical content.
func finish(ms []memory.NewMemory) []memory.NewMemory {
	out := make([]memory.NewMemory, 0, len(ms))
	for _, m := range ms {
		m, ok := validate(m)
		if !ok {
			continue
		}
		dup := -1
		for i, o := range out {
			if (m.Key != "" && o.Key == m.Key) || o.Content == m.Content {
				dup = i
			}
		}
		if dup >= 0 {
			out = append(out[:dup], out[dup+1:]...)
		}
		out = append(out, m)
	}
	return out
}

// fromSentence applies every rule to one sentence. Specific findings (a
// budget, a preference, a date fact, where the user works) come first; a
// generic event or note only when nothing specific was found.
func fromSentence(s string, ref time.Time) []memory.NewMemory {
	ents := entities(s, ref)
	var out []memory.NewMemory
	add := func(typ, kind, key, label string, importance float64) {
		content := s
		if label != "" {
			content = label + ": " + s
		}
		out = append(out, memory.NewMemory{
			Type: typ, Kind: kind, Key: key, Content: content, Entities: ents,
			Importance: ptr(importance), Confidence: ptr(confidenceStated), Source: sourceConversation,
		})
	}
	named := period.Of(s, ref)
	for _, slot := range amountSlots {
		if a, ok := slotAmount(s, slot.words, named.Spans); ok {
			add(memory.TypeSemantic, slot.kind, periodKey(slot.key, named), slot.label+" "+a.format(), importanceAmountSlot)
		}
	}
	for _, f := range dateFacts {
		if hasDate(ents) && f.match.MatchString(s) {
			add(f.typ, f.kind, f.key, "", importanceDateFact)
			break
		}
	}
	if workplace.MatchString(s) && hasKind(ents, "company") {
		add(memory.TypeProfile, "company", "company", "", importanceProfile)
	}
	if residence.MatchString(s) && hasKind(ents, "place") {
		add(memory.TypeProfile, "location", "location", "", importanceProfile)
	}
	if kind, key, ok := preference(s); ok {
		imp := importancePreference
		if kind == kindConstraint {
			imp = importanceConstraint
		}
		add(memory.TypeProfile, kind, key, "", imp)
	}
	if len(out) > 0 {
		return out
	}
	if note, ok := rememberRequest(s); ok {
		out = append(out, memory.NewMemory{
			Type: memory.TypeSemantic, Kind: "note", Content: note, Entities: ents,
			Importance: ptr(importanceNote), Confidence: ptr(confidenceStated), Source: sourceConversation,
		})
		return out
	}
	switch {
	case payment.MatchString(s) && hasMoney(s):
		add(memory.TypeEpisodic, "payment", "", "", importanceEvent)
	case hasKind(ents, "order") || hasKind(ents, "invoice"):
		add(memory.TypeEpisodic, "order", "", "", importanceEvent)
	}
	return out
}

func ptr(f float64) *float64 { return &f }

// sentences splits text at sentence ends in either language. A full stop
// ends a sentence only before a space or the end, so 1.5k stays whole.
func sentences(text string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if s := strings.TrimSpace(b.String()); s != "" {
			out = append(out, s)
		}
		b.Reset()
	}
	rs := []rune(text)
	for i, r := range rs {
		switch {
		case strings.ContainsRune("。！？；!?;\n", r):
			flush()
		case r == '.' && (i+1 == len(rs) || unicode.IsSpace(rs[i+1])):
			flush()
		default:
			b.WriteRune(r)
		}
	}
	flush()
	return out
}

// amountSlots are facts whose value is an amount and whose slot a newer
// statement replaces. They are bound to a period: a budget that names one
// is keyed by it (periodKey).
var amountSlots = []amountSlot{
	{"budget", "budget", "Budget", []string{"budget", "预算"}},
	{"credit_limit", "credit_limit", "Credit limit", []string{"credit limit", "信用额度", "授信额度"}},
}

// amountSlot is one fact of amountSlots: its kind, key, the label its
// memory's content starts with, and the words that name it.
type amountSlot struct {
	kind, key, label string
	words            []string
}

// periodKey is the slot key of a period-bound fact: key qualified by the
// period the statement names, "budget_q4", "budget_2027_q1", "budget_2027",
// "budget_h1", "budget_annual", "budget_monthly" (see period.Period.Key),
// so that a budget for another period never replaces this one; key alone
// when it names none, and the same key for the same period, so that a
// budget restated replaces the last one as before.
func periodKey(key string, p period.Period) string {
	if k := p.Key(); k != "" {
		return key + "_" + k
	}
	return key
}

// question marks a clause that asks rather than states.
var question = regexp.MustCompile(`(?i)^\s*(is|are|was|what|what's|how|do|does|did|can|could|will|would|should)\b|吗|多少|是否|什么|怎么|几`)

// slotAmount finds the amount a sentence states for a keyword: the first
// amount after it, else the last one before it. A question states nothing,
// and a year that names the period (at spans) is no amount.
func slotAmount(s string, words []string, spans [][2]int) (amount, bool) {
	lower := strings.ToLower(s)
	for _, w := range words {
		i := strings.Index(lower, w)
		if i < 0 {
			continue
		}
		if question.MatchString(clauseAt(s, i)) {
			return amount{}, false
		}
		var before *amount
		found := guard.Scan(s)
		for _, a := range amounts(s) {
			if a.value < 100 && !a.explicit {
				continue // "Q4", "2 people": not a sum of money
			}
			if slices.ContainsFunc(found, func(f guard.Finding) bool { return f.Start < a.end && a.start < f.End }) {
				continue // a card or phone number: the guard masks it in the text, so no amount may repeat it
			}
			if !a.explicit && slices.ContainsFunc(spans, func(p [2]int) bool { return p[0] < a.end && a.start < p[1] }) {
				continue // "for 2027", "2027年": the period, not a sum
			}
			if a.start > i {
				return a, true
			}
			a := a
			before = &a
		}
		if before != nil {
			return *before, true
		}
	}
	return amount{}, false
}

// clauseAt returns the comma-separated clause of s that holds byte i.
func clauseAt(s string, i int) string {
	start := strings.LastIndexAny(s[:i], ",，、") + 1
	if start > 0 && s[start-1] != ',' {
		_, size := utf8.DecodeLastRuneInString(s[:start])
		start = start - 1 + size
	}
	end := strings.IndexAny(s[i:], ",，、")
	if end < 0 {
		return s[start:]
	}
	return s[start : i+end]
}

var (
	payment = regexp.MustCompile(`(?i)\b(paid|pay|payment|refund(ed)?|price|cost|spent|charged?)\b|付款|支付|退款|价格|花了|付了|报价`)
	// workplace: the user says where they work.
	workplace = regexp.MustCompile(`(?i)\bI\s+(work|am working)\s+(at|for)\b|\bI'm\s+(with|at)\b|\bour\s+company\b|我在.{1,30}(工作|上班|任职)|我(就职|任职)于|我们公司`)
	// residence: the user says where they are based.
	residence = regexp.MustCompile(`(?i)\bI\s+(live|am based|am located)\s+in\b|\bI'm\s+(based|located)\s+in\b|\bour\s+office\s+is\s+in\b|我住在|我(常驻|在).{0,8}(住|生活)|我们(办公室|公司)在`)
)

// dateFacts are sentences whose date is the fact.
var dateFacts = []struct {
	match          *regexp.Regexp
	typ, kind, key string
}{
	{regexp.MustCompile(`(?i)\bbirthday\b|生日`), memory.TypeProfile, "birthday", "birthday"},
	{regexp.MustCompile(`(?i)\bmember(ship)?\b.*\b(expir|renew)|会员.*(到期|过期|续费)`), memory.TypeProfile, "membership", "membership_expiry"},
	{regexp.MustCompile(`(?i)\bcontract\b.*\b(expir|ends?\b|renew)|合同.*(到期|结束|续签)`), memory.TypeSemantic, "contract", "contract_expiry"},
	{regexp.MustCompile(`(?i)\b(vacation|holiday|on leave|out of office|away)\b|休假|请假|出差|不在`), memory.TypeEpisodic, "availability", ""},
	{regexp.MustCompile(`(?i)\b(deadline|due|before|until|no later than)\b|截止|之前|以前|前送到|前交`), memory.TypeEpisodic, "deadline", ""},
}

func hasDate(ents []memory.Entity) bool { return hasKind(ents, "date") }

func hasKind(ents []memory.Entity, kind string) bool {
	for _, e := range ents {
		if e.Kind == kind {
			return true
		}
	}
	return false
}

func hasMoney(s string) bool {
	for _, a := range amounts(s) {
		if a.explicit {
			return true
		}
	}
	return false
}

var (
	remember   = regexp.MustCompile(`(?i)\b(?:please\s+)?(?:remember|keep in mind|don't forget|do not forget)\s*(?:that\s+)?[:,]?\s*(.+)`)
	rememberZh = regexp.MustCompile(`(?:^|请|帮我|麻烦|你要)(?:记住|记一下|记下|别忘了|不要忘了|记得)[：:，,]?\s*(.+)`)
)

// rememberRequest returns what the user asked to be remembered.
func rememberRequest(s string) (string, bool) {
	for _, re := range []*regexp.Regexp{remember, rememberZh} {
		if m := re.FindStringSubmatch(s); m != nil {
			what := strings.TrimSpace(m[1])
			if utf8.RuneCountInString(what) >= 4 && !isChitChat(what) {
				return "Note: " + what, true
			}
		}
	}
	return "", false
}
