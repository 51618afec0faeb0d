package guard

import "regexp"

// Identity numbers whose shape alone says little: nine digits grouped
// 3-2-4 are as often a part or order code as a social security number, and
// a letter and eight digits as often a reference as a passport number. They
// count when a label names them, right before the number: "SSN 219-09-9999",
// "social security number is 536-22-1234", "passport number E12345678",
// "护照号 E12345678". "SSN format is XXX-XX-XXXX" and "passport photo" name
// no number.
var (
	ssn      = regexp.MustCompile(`(?i)(?:\b(?:ssn|social\s+security(?:\s+(?:number|no\.?|num|#))?|soc\.?\s*sec\.?(?:\s+(?:number|no\.?))?)|社会安全号码?|社會安全號碼?|社安号)` + idLink + `(\d{3})[ \-]?(\d{2})[ \-]?(\d{4})`)
	passport = regexp.MustCompile(`(?i)(?:\bpassport(?:\s+(?:number|no\.?|num|#))?|护照(?:号码|号|號碼|號)?|護照(?:號碼|號|号码|号)?)` + idLink + `([a-z]{0,2}\d{6,9})`)
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
		if isolated(text, m[2], m[3], map[string]bool{}) {
			out = append(out, [2]int{m[2], m[3]})
		}
	}
	return out
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

// labelledCNID reports whether the number at text[start] follows a label
// that names it a resident identity number: then it is one whatever its
// check digit, since the label says so.
func labelledCNID(text string, start int) bool {
	return cnIDLabel.MatchString(text[max(0, start-64):start])
}
