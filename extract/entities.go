package extract

import (
	"regexp"
	"strings"
	"time"

	"mneme/memory"
)

// EntityKinds are the kinds of business objects extraction links memories
// to. An entity of another kind is dropped by validation.
var EntityKinds = []string{"order", "invoice", "company", "place", "date", "product", "person"}

var (
	orderID   = regexp.MustCompile(`\b((?:SO|PO|ORD)-?\d{3,})\b`)
	orderWord = regexp.MustCompile(`(?i)\border\s*(?:no\.?|number|#)\s*#?\s*([A-Z0-9][A-Z0-9-]{3,})\b|订单号?\s*[:：#]?\s*([A-Za-z0-9][A-Za-z0-9-]{3,})`)
	invoiceID = regexp.MustCompile(`\b(INV-[\d-]{4,})\b`)
	companyEn = regexp.MustCompile(`\b((?:[A-Z][\w&'-]*\s+){0,4}[A-Z][\w&'-]*\s+(?:Co\.,?\s*Ltd\.?|Ltd\.?|Inc\.?|LLC|Corp(?:oration)?\.?|GmbH|Group|Trading|Electronics|Technologies|Technology|Catering|Logistics))`)
	companyAt = regexp.MustCompile(`\b(?:[Ww]ork\s+(?:at|for)|[Oo]ur\s+company\s+is|I'm\s+with|I\s+am\s+with)\s+([A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*){0,5})`)
	companyZh = regexp.MustCompile(`([\p{Han}A-Za-z]{2,24}?(?:有限公司|股份公司|集团|公司))`)
	placeZh   = regexp.MustCompile(`([\p{Han}]{2,6}?(?:省|市|区|县))`)
)

// places maps well-known places, English and Chinese names alike, to one id.
var places = []struct{ id, en, zh string }{
	{"shanghai", "Shanghai", "上海"}, {"hangzhou", "Hangzhou", "杭州"}, {"suzhou", "Suzhou", "苏州"},
	{"beijing", "Beijing", "北京"}, {"shenzhen", "Shenzhen", "深圳"}, {"guangzhou", "Guangzhou", "广州"},
	{"nanjing", "Nanjing", "南京"}, {"kunshan", "Kunshan", "昆山"}, {"pudong", "Pudong", "浦东"},
	{"chengdu", "Chengdu", "成都"}, {"wuhan", "Wuhan", "武汉"}, {"ningbo", "Ningbo", "宁波"},
	{"tianjin", "Tianjin", "天津"}, {"xiamen", "Xiamen", "厦门"}, {"hong-kong", "Hong Kong", "香港"},
	{"east-china", "East China", "华东"}, {"singapore", "Singapore", "新加坡"}, {"tokyo", "Tokyo", "东京"},
	{"london", "London", "伦敦"}, {"new-york", "New York", "纽约"}, {"berlin", "Berlin", "柏林"},
}

// notNames are characters that show a Chinese match is a phrase, not a name.
const notNames = "我你他她它们的是在说和跟与从这那个要想去到超"

// entities finds the orders, invoices, companies, places and dates of s.
func entities(s string, ref time.Time) []memory.Entity {
	var out []memory.Entity
	add := func(kind, name string) {
		name = strings.TrimSpace(name)
		if name == "" {
			return
		}
		e := memory.Entity{ID: EntityID(kind, name), Kind: kind, Name: name}
		for _, o := range out {
			if o.ID == e.ID {
				return
			}
		}
		out = append(out, e)
	}
	for _, m := range orderID.FindAllStringSubmatch(s, -1) {
		add("order", m[1])
	}
	for _, m := range orderWord.FindAllStringSubmatch(s, -1) {
		if id := m[1] + m[2]; hasDigit(id) && !strings.HasPrefix(strings.ToUpper(id), "INV") {
			add("order", strings.ToUpper(id))
		}
	}
	for _, m := range invoiceID.FindAllStringSubmatch(s, -1) {
		add("invoice", m[1])
	}
	for _, re := range []*regexp.Regexp{companyEn, companyAt} {
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			add("company", strings.TrimRight(m[1], ".,"))
		}
	}
	for _, m := range companyZh.FindAllStringSubmatch(s, -1) {
		if name := trimHanPrefix(m[1]); name != "" {
			add("company", name)
		}
	}
	lower := strings.ToLower(s)
	for _, p := range places {
		if containsWord(lower, strings.ToLower(p.en)) || strings.Contains(s, p.zh) {
			add("place", p.en)
		}
	}
	for _, m := range placeZh.FindAllStringSubmatch(s, -1) {
		if name := trimHanPrefix(m[1]); name != "" && !knownPlaceZh(name) {
			add("place", name)
		}
	}
	for _, d := range dates(s, ref) {
		add("date", d)
	}
	return out
}

// trimHanPrefix strips pronouns and verbs a lazy match picked up before a
// Chinese name ("我在杭州联华贸易有限公司" → "杭州联华贸易有限公司") and
// returns "" when no name is left.
func trimHanPrefix(s string) string {
	rs := []rune(s)
	cut := 0
	for i, r := range rs {
		if strings.ContainsRune(notNames, r) {
			cut = i + 1
		}
	}
	name := string(rs[cut:])
	for _, suffix := range []string{"有限公司", "股份公司", "集团", "公司", "省", "市", "区", "县"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if len([]rune(base)) < 2 {
				return ""
			}
			return name
		}
	}
	return ""
}

func knownPlaceZh(name string) bool {
	for _, p := range places {
		if strings.HasPrefix(name, p.zh) {
			return true
		}
	}
	return false
}

// EntityID is the stable id of an entity: orders and invoices by their own
// number, dates by ISO day, known places by their English name, everything
// else by a slug of its name; so the same order mentioned by two agents,
// in either language, is one node.
func EntityID(kind, name string) string {
	switch kind {
	case "order", "invoice":
		return strings.ToUpper(strings.TrimSpace(name))
	case "date":
		return strings.TrimSpace(name)
	case "place":
		for _, p := range places {
			if strings.EqualFold(name, p.en) || name == p.zh {
				return p.id
			}
		}
	}
	return slug(name, 96)
}

func containsWord(lower, w string) bool {
	for i := strings.Index(lower, w); i >= 0; {
		end := i + len(w)
		if (i == 0 || !isWordByte(lower[i-1])) && (end == len(lower) || !isWordByte(lower[end])) {
			return true
		}
		next := strings.Index(lower[i+1:], w)
		if next < 0 {
			return false
		}
		i += 1 + next
	}
	return false
}

func isWordByte(b byte) bool { return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' }

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }
