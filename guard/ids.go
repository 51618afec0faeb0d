package guard

import "regexp"

// Identity numbers whose shape alone says little: nine digits grouped
// 3-2-4 are as often a part or order code as a social security number, and
// a letter and eight digits as often a reference as a passport number. They
// count when a label names them, right before the number: "SSN 219-09-9999",
// "social security number is 536-22-1234", "passport number E12345678",
// "护照号 E12345678", and so do driver's licence numbers, whose shape
// varies by country: "driver's licence number D123-4567-8901", "驾驶证号
// …". "SSN format is XXX-XX-XXXX" and "passport photo" name no number.
var (
	ssn = regexp.MustCompile(`(?i)(?:\b(?:ssn|social\s+security(?:\s+(?:number|no\.?|num|#))?|soc\.?\s*sec\.?(?:\s+(?:number|no\.?))?)|社会安全号码?|社會安全號碼?|社安号)` + idLink + `(\d{3})[ \-]?(\d{2})[ \-]?(\d{4})`)
	// A passport number may be grouped by single spaces, as it is read
	// out: "E 1234 5678". Its groups are joined, and the longest run of
	// them that holds 6–9 digits is the number (findIDNumbers).
	passport = regexp.MustCompile(`(?i)(?:\bpassport(?:\s+(?:number|no\.?|num|#))?|护照(?:号码|号|號碼|號)?|護照(?:號碼|號|号码|号)?)` + idLink + `([a-z]{0,2} ?\d+(?: \d+)*)`)
	// A driver's licence number, letters and digits grouped by spaces or
	// dashes as each country writes them ("D123-4567-8901", "MORGA753116SM9IJ
	// 35"), each group with a digit, after its label; 5–18 digits in all.
	licence = regexp.MustCompile(`(?i)(?:\b(?:driver(?:'|’)?s?|driving)\s+licen[cs]e(?:\s+(?:number|no\.?|num|#))?|驾驶证(?:号码|号|编号)?|駕駛證(?:號碼|號|編號)?|驾照(?:号码|号)?|駕照(?:號碼|號)?)` + idLink + `([a-z]*\d[a-z0-9]*(?:[ \-][a-z]*\d[a-z0-9]*)*)`)
)

// idLink is what may stand between an identity number and its label: a
// verb or a sign, and spaces.
const idLink = `\s*(?:(?:is|was)\b|[:：=#]|是|为|為)?\s*`

// findIDNumbers finds labelled social security and passport numbers. A
// social security number with a group of zeros is a placeholder, never
// issued ("SSN 000-00-0000").
func findIDNumbers(text string) [][2]int {
	var out [][2]int
	for _, m := range ssn.FindAllStringSubmatchIndex(text, -1) {
		if !isolated(text, m[2], m[7], map[string]bool{}) || zeros(text[m[2]:m[3]]) || zeros(text[m[4]:m[5]]) || zeros(text[m[6]:m[7]]) {
			continue
		}
		out = append(out, [2]int{m[2], m[7]})
	}
	for _, m := range passport.FindAllStringSubmatchIndex(text, -1) {
		if end := groupsHolding(text, m[2], m[3], 6, 9); end > 0 && isolated(text, m[2], end, map[string]bool{}) && !datelike(text[m[2]:end]) {
			out = append(out, [2]int{m[2], end})
		}
	}
	for _, m := range licence.FindAllStringSubmatchIndex(text, -1) {
		if n := len(onlyDigits(text[m[2]:m[3]])); n >= 5 && n <= 18 && isolated(text, m[2], m[3], map[string]bool{}) && !datelike(text[m[2]:m[3]]) {
			out = append(out, [2]int{m[2], m[3]})
		}
	}
	return out
}

// groupsHolding returns where the longest run of the space-separated groups
// of text[start:end], from start, that holds min to max digits ends, or -1
// when none does: "E12345678 1234" holds the passport number "E12345678"
// and a number after it.
func groupsHolding(text string, start, end, min, max int) int {
	best, n := -1, 0
	for i := start; i <= end; i++ {
		if i == end || text[i] == ' ' {
			if n >= min && n <= max {
				best = i
			}
			continue
		}
		if text[i] >= '0' && text[i] <= '9' {
			n++
		}
	}
	return best
}

// datelike reports whether v, separators and all, is a date written
// YYYY-MM-DD or YYYY MM DD: "passport 2027 05 01" names no number.
func datelike(v string) bool {
	return len(v) == 10 && (v[4] == ' ' || v[4] == '-') && v[7] == v[4] && isDate(onlyDigits(v))
}

// zeros reports whether digits are all '0'.
func zeros(digits string) bool {
	for _, r := range digits {
		if r != '0' {
			return false
		}
	}
	return true
}

// cnIDLabel is a label that names a resident identity number, with what may
// follow it, at the end of the text before the number: "身份证号 ",
// "身份证号码：", "ID card number is ".
var cnIDLabel = regexp.MustCompile(`(?i)(?:身份证|身份證|\bid\s*card|\bresident\s+id(?:entity)?|\bnational\s+id|\bchinese\s+id)\s*(?:号码|號碼|号|號|number|no\.?|num|#)?` + idLink + `$`)

// idGroups is a run of digits in groups of any length, with one space or
// dash between two groups, that may end in the check character X:
// "1101 0519 4912 3100 2X".
var idGroups = regexp.MustCompile(`\d+(?:[ \-]\d+)*(?:[ \-]?[Xx])?`)

// findGroupedCNIDs finds resident identity numbers written in groups of
// any sizes (4-4-4-4-2, 3-3-4-4-4, …), as findCNIDs finds the solid and
// 6-8-4 forms: the groups, from any group on, that join to 18 characters
// are one when the joined number is valid or a label names it. Digits that
// join to another length, or to a number that fails its checks, are an
// order number, a phone number or dates.
func findGroupedCNIDs(text string) [][2]int {
	var out [][2]int
	for _, run := range idGroups.FindAllStringIndex(text, -1) {
		groups := idGroupSpans(text, run[0], run[1])
		for i := 0; i < len(groups); i++ {
			n := 0
			for j := i; j < len(groups) && n < 18; j++ {
				if n += groups[j][1] - groups[j][0]; n != 18 {
					continue
				}
				start, end := groups[i][0], groups[j][1]
				if isolated(text, start, end, nil) && (ValidCNID(idChars(text[start:end])) || labelledCNID(text, start)) {
					out = append(out, [2]int{start, end})
					i = j // the next number starts after this one
				}
			}
		}
	}
	return out
}

// idGroupSpans splits text[start:end], a match of idGroups, into its groups.
func idGroupSpans(text string, start, end int) [][2]int {
	var out [][2]int
	from := start
	for i := start; i <= end; i++ {
		if i == end || text[i] == ' ' || text[i] == '-' {
			if i > from {
				out = append(out, [2]int{from, i})
			}
			from = i + 1
		}
	}
	return out
}

// labelledCNID reports whether the number at text[start] follows a label
// that names it a resident identity number: then it is one whatever its
// check digit, since the label says so.
func labelledCNID(text string, start int) bool {
	return cnIDLabel.MatchString(text[max(0, start-64):start])
}
