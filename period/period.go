// Package period reads the period a sentence names, in Chinese or English:
// a year ("2027", "FY2027", "2027年", "next year", 明年), a quarter ("Q1",
// "first quarter", 一季度, 第一季度, "next quarter"), a half ("H2", 上半年,
// 下半年) or a cadence ("annual", 年度, "monthly", 每月, "weekly"). A fact
// bound to a period, such as a budget, is keyed by it (Key), so that the
// budget of one quarter never replaces another's. The rules are pure:
// relative periods are read against a reference time the caller gives.
package period

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Period is what a sentence names. Zero fields are not named.
type Period struct {
	Year    int    // 2027
	Quarter int    // 1–4
	Half    int    // 1–2, when no quarter is named
	Cadence string // "annual", "monthly" or "weekly", when no year, quarter or half is
	// Spans are the byte spans of text that name the period: a year
	// written in digits is no amount of money.
	Spans [][2]int
}

// Cadences.
const (
	Annual  = "annual"
	Monthly = "monthly"
	Weekly  = "weekly"
)

// Key is the period's normalised form, the suffix of a slot key: parts
// joined by '_' in the order year, quarter or half, cadence: "2027_q1",
// "q4", "2027", "h2", "annual", "monthly". Empty when no period is named.
func (p Period) Key() string {
	var parts []string
	if p.Year != 0 {
		parts = append(parts, strconv.Itoa(p.Year))
	}
	switch {
	case p.Quarter != 0:
		parts = append(parts, "q"+strconv.Itoa(p.Quarter))
	case p.Half != 0:
		parts = append(parts, "h"+strconv.Itoa(p.Half))
	}
	if p.Cadence != "" {
		parts = append(parts, p.Cadence)
	}
	return strings.Join(parts, "_")
}

// Slot returns key qualified by the period of text ("budget_2027_q1"), or
// key itself when text names none.
func Slot(key, text string, ref time.Time) string {
	if p := Of(text, ref).Key(); p != "" {
		return key + "_" + p
	}
	return key
}

var (
	// quarterEN: "Q1", "2027Q1", "first quarter", "1st quarter".
	quarterEN  = regexp.MustCompile(`(?i)(?:^|[^a-z])q([1-4])\b|\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter\b`)
	quarterZH  = regexp.MustCompile(`第([一二三四1-4])季度?|([一二三四1-4])季度`)
	halfEN     = regexp.MustCompile(`(?i)\bh([12])\b|\b(first|second|1st|2nd)\s+half\b`)
	halfZH     = regexp.MustCompile(`([上下])半年`)
	relQuarter = regexp.MustCompile(`(?i)\b(this|current|next|coming|last|previous)\s+quarter\b|(本|这个|这|当前|下个|下一|下|上个|上一|上)季度`)
	relYear    = regexp.MustCompile(`(?i)\b(this|current|next|coming|last|previous)\s+(?:fiscal\s+|financial\s+|calendar\s+)?year\b|(今年|本年|明年|来年|下一年|下年|去年|上一年)`)
	fiscalYear = regexp.MustCompile(`(?i)\bfy\s?((?:19|20)?\d\d)\b`)
	// yearBeside is a year written against a quarter or a half: "2027Q1",
	// "Q1 2027", "H2-2027".
	yearBeside  = regexp.MustCompile(`(?i)\b((?:19|20)\d\d)\s?[-/]?\s?[qh][1-4]\b|\b[qh][1-4]\s?[-/]?\s?((?:19|20)\d\d)\b`)
	yearZH      = regexp.MustCompile(`((?:19|20)\d\d)\s*年`)
	monthAfter  = regexp.MustCompile(`^\s*年\s*\d{1,2}\s*月`)
	yearEN      = regexp.MustCompile(`(?i)\b(in|for|of|during|year|fiscal|the|our|my|his|her|their|your|its|this|whole)\s+((?:19|20)\d\d)\b`)
	moneyAfter  = regexp.MustCompile(`(?i)^\s*(?:k\b|m\b|w\b|万|千|元|块|%|yuan\b|cny\b|rmb\b|usd\b|eur\b|dollars?\b|euros?\b|thousand\b|million\b|[.,]\d)`)
	dateAround  = regexp.MustCompile(`^[\-/.]\d`)
	cadenceWord = []struct {
		re      *regexp.Regexp
		cadence string
	}{
		{regexp.MustCompile(`(?i)\b(?:annual|annually|yearly|per\s+year|each\s+year|every\s+year|per\s+annum|full[\s-]year)\b|年度|全年|每年`), Annual},
		{regexp.MustCompile(`(?i)\b(?:monthly|per\s+month|each\s+month|every\s+month)\b|每月|每个月|月度|包月`), Monthly},
		{regexp.MustCompile(`(?i)\b(?:weekly|per\s+week|each\s+week|every\s+week)\b|每周|每星期|每个星期|周度`), Weekly},
	}
)

// step is how far a relative period's word moves from the reference's:
// the next (+1) or the last (-1); this one is 0.
var step = map[string]int{
	"next": 1, "coming": 1, "下个": 1, "下一": 1, "下": 1, "明年": 1, "来年": 1, "下一年": 1, "下年": 1,
	"last": -1, "previous": -1, "上个": -1, "上一": -1, "上": -1, "去年": -1, "上一年": -1,
}

var ordinals = map[string]int{
	"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
	"一": 1, "二": 2, "三": 3, "四": 4, "1": 1, "2": 2, "3": 3, "4": 4,
}

// Of returns the period text names. Relative periods ("next year", 下季度)
// are read against ref, in its location; a zero ref leaves them unread.
// Where text names two quarters, years or halves, the first counts.
func Of(text string, ref time.Time) Period {
	var p Period
	see := func(m []int) { p.Spans = append(p.Spans, [2]int{m[0], m[1]}) }
	group := func(m []int) string {
		for g := 2; g+1 < len(m); g += 2 {
			if m[g] >= 0 {
				return strings.ToLower(text[m[g]:m[g+1]])
			}
		}
		return ""
	}
	for _, re := range []*regexp.Regexp{quarterEN, quarterZH} {
		if m := re.FindStringSubmatchIndex(text); m != nil && p.Quarter == 0 {
			p.Quarter = ordinals[group(m)]
			see(m)
		}
	}
	if m := relQuarter.FindStringSubmatchIndex(text); m != nil && p.Quarter == 0 && !ref.IsZero() {
		q := (int(ref.Month())-1)/3 + 1
		y := ref.Year()
		switch step[group(m)] {
		case 1:
			if q++; q > 4 {
				q, y = 1, y+1
			}
		case -1:
			if q--; q < 1 {
				q, y = 4, y-1
			}
		}
		p.Quarter, p.Year = q, y
		see(m)
	}
	if p.Quarter == 0 {
		for _, re := range []*regexp.Regexp{halfEN, halfZH} {
			if m := re.FindStringSubmatchIndex(text); m != nil && p.Half == 0 {
				switch group(m) {
				case "1", "first", "1st", "上":
					p.Half = 1
				default:
					p.Half = 2
				}
				see(m)
			}
		}
	}
	if p.Year == 0 {
		p.Year = yearOf(text, ref, see)
	}
	if p.Year == 0 && p.Quarter == 0 && p.Half == 0 {
		for _, c := range cadenceWord {
			if m := c.re.FindStringIndex(text); m != nil {
				p.Cadence = c.cadence
				see(m)
				break
			}
		}
	}
	return p
}

// yearOf returns the year text names, 0 for none: after FY, beside a
// quarter or a half, before 年 (not
// a date, 2027年3月), after a word that makes a number a year ("in 2027",
// "the 2027 budget") and not before a unit of money ("for 2000 CNY"), or
// relative to ref.
func yearOf(text string, ref time.Time, see func([]int)) int {
	if m := fiscalYear.FindStringSubmatchIndex(text); m != nil {
		y, _ := strconv.Atoi(text[m[2]:m[3]])
		if y < 100 {
			y += 2000
		}
		see(m)
		return y
	}
	if m := yearBeside.FindStringSubmatchIndex(text); m != nil {
		g := 2
		if m[g] < 0 {
			g = 4
		}
		see([]int{m[g], m[g+1]})
		y, _ := strconv.Atoi(text[m[g]:m[g+1]])
		return y
	}
	for _, m := range yearZH.FindAllStringSubmatchIndex(text, -1) {
		if !monthAfter.MatchString(text[m[3]:]) {
			see(m)
			y, _ := strconv.Atoi(text[m[2]:m[3]])
			return y
		}
	}
	for _, m := range yearEN.FindAllStringSubmatchIndex(text, -1) {
		if !moneyAfter.MatchString(text[m[5]:]) && !dateAround.MatchString(text[m[5]:]) {
			see([]int{m[4], m[5]})
			y, _ := strconv.Atoi(text[m[4]:m[5]])
			return y
		}
	}
	if m := relYear.FindStringSubmatchIndex(text); m != nil && !ref.IsZero() {
		see(m)
		g := 2
		if m[g] < 0 {
			g = 4 // the Chinese word
		}
		w := text[m[g]:m[g+1]]
		return ref.Year() + step[strings.ToLower(w)]
	}
	return 0
}
