package extract

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// amount is a sum of money or a count stated in a sentence.
type amount struct {
	value    float64
	currency string // ISO code, or "" when the sentence names none
	start    int    // byte offsets in the sentence
	end      int
	explicit bool // a currency or a multiplier (k, 万) marks it as money
}

var (
	digitAmount = regexp.MustCompile(`(?i)([$¥￥€]|usd|cny|rmb|eur)?\s*(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s*(k\b|m\b|thousand\b|million\b|万|千|w\b)?\s*(cny\b|rmb\b|usd\b|eur\b|yuan\b|dollars?\b|euros?\b|元|块|美元|欧元)?`)
	hanAmount   = regexp.MustCompile(`([零一二两三四五六七八九十百千万亿]+)\s*(元|块|美元|欧元)?`)
)

var currencies = map[string]string{
	"$": "USD", "usd": "USD", "dollar": "USD", "dollars": "USD", "美元": "USD",
	"¥": "CNY", "￥": "CNY", "cny": "CNY", "rmb": "CNY", "yuan": "CNY", "元": "CNY", "块": "CNY",
	"€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR", "欧元": "EUR",
}

var multipliers = map[string]float64{
	"k": 1e3, "thousand": 1e3, "千": 1e3, "m": 1e6, "million": 1e6, "万": 1e4, "w": 1e4,
}

// amounts finds every amount in s, in order. Years and order numbers are
// the caller's concern: it looks at amounts near a keyword only.
func amounts(s string) []amount {
	var out []amount
	for _, m := range digitAmount.FindAllStringSubmatchIndex(s, -1) {
		num := strings.ReplaceAll(s[m[4]:m[5]], ",", "")
		v, err := strconv.ParseFloat(num, 64)
		if err != nil {
			continue
		}
		// An id such as SO-1004 or a date such as 10-09 is not an amount.
		if m[4] > 0 && (s[m[4]-1] == '-' || s[m[4]-1] == '/' || isASCIILetter(s[m[4]-1])) {
			continue
		}
		a := amount{value: v, start: m[0], end: m[1]}
		if m[6] >= 0 {
			a.value *= multipliers[strings.ToLower(s[m[6]:m[7]])]
			a.explicit = true
		}
		for _, g := range []int{2, 8} {
			if m[g] >= 0 {
				a.currency = currencies[strings.ToLower(s[m[g]:m[g+1]])]
				a.explicit = true
			}
		}
		out = append(out, a)
	}
	for _, m := range hanAmount.FindAllStringSubmatchIndex(s, -1) {
		v, ok := parseHan(s[m[2]:m[3]])
		if !ok || v < 10 {
			continue // 一 alone is an article more often than a number
		}
		a := amount{value: v, start: m[0], end: m[1], explicit: strings.ContainsAny(s[m[2]:m[3]], "万亿千百")}
		if m[4] >= 0 {
			a.currency = currencies[s[m[4]:m[5]]]
			a.explicit = true
		}
		out = append(out, a)
	}
	return out
}

func isASCIILetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

var hanDigits = map[rune]float64{'零': 0, '一': 1, '二': 2, '两': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9}
var hanUnits = map[rune]float64{'十': 10, '百': 100, '千': 1000}

// parseHan reads a number written in Chinese numerals: 十五万 = 150000.
func parseHan(s string) (float64, bool) {
	var total, section, num float64
	seen := false
	for _, r := range s {
		switch {
		case hanDigits[r] > 0 || r == '零':
			num = hanDigits[r]
			seen = true
		case hanUnits[r] > 0:
			if num == 0 {
				num = 1
			}
			section += num * hanUnits[r]
			num = 0
			seen = true
		case r == '万':
			total += (section + num) * 1e4
			section, num = 0, 0
		case r == '亿':
			total = (total + section + num) * 1e8
			section, num = 0, 0
		default:
			return 0, false
		}
	}
	return total + section + num, seen
}

// format writes an amount for people: 150000 CNY → "150,000 CNY".
func (a amount) format() string {
	whole, frac := math.Modf(a.value)
	s := strconv.FormatFloat(whole, 'f', 0, 64)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if frac != 0 {
		b.WriteString(strings.TrimPrefix(strconv.FormatFloat(frac, 'f', 2, 64), "0"))
	}
	if a.currency != "" {
		b.WriteString(" " + a.currency)
	}
	return b.String()
}
