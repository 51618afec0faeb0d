package guard

import (
	"math"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// secretPatterns are credentials recognisable by their shape: vendor
// prefixes, JWTs and PEM private keys. Mneme's own API keys have a finder
// of their own (findMnemeKeys).
var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}`),
	regexp.MustCompile(`\b[spr]k_(?:live|test)_[A-Za-z0-9]{16,}`),
	regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}`),
	regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{40,}`),
	regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{20,}`),
	regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9\-]{10,}`),
	regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`),
	regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`),
	regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`),
	regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z ]*PRIVATE KEY-----|$)`),
	regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9\-._~+/]{20,}=*`),
}

// secretAssignment is a credential named and given a value: "api_key=…",
// "token: …", "密钥是…". The value counts only when it looks random.
var secretAssignment = regexp.MustCompile(`(?i)(?:\b(?:api[_\-]?key|apikey|secret(?:[_\-]?key)?|client[_\-]?secret|access[_\-]?(?:key|token)|auth[_\-]?token|refresh[_\-]?token|token|private[_\-]?key)\b|密钥|秘钥|令牌)["']?\s*(?:[:=：]|是|为|\bis\b)\s*["']?([^\s"',;，。；]{8,})`)

func findSecrets(text string) [][2]int {
	var out [][2]int
	for _, re := range secretPatterns {
		for _, m := range re.FindAllStringIndex(text, -1) {
			out = append(out, [2]int{m[0], m[1]})
		}
	}
	for _, m := range secretAssignment.FindAllStringSubmatchIndex(text, -1) {
		if v := text[m[2]:m[3]]; looksRandom(v) {
			out = append(out, [2]int{m[2], m[3]})
		}
	}
	out = append(out, findNamedCredentials(text, "secret")...)
	return append(out, findMnemeKeys(text)...)
}

// mnemeKey is the shape of Mneme's own API keys (package identity):
// mn_<tenant>_<secret>, the tenant a name without '_' and the secret
// whatever the key was issued with: 48 hex digits from NewAPIKey, 24
// letters and digits in the seeded demo keys. Spaces or line breaks
// around an underscore, or inside the secret, still leave the key whole to
// whoever reads it ("mn _ acme_  bf3F…", "…Sydb\nSS66…"), and so do dashes
// for its underscores ("mn-acme-bf3F…", the tenant then a name without
// '-'): the secret is taken with up to three more pieces, and
// findMnemeKeys decides how many belong to it.
var mnemeKey = regexp.MustCompile(`\bmn(?:` + keyGap + `_` + keyGap + `[A-Za-z0-9\-.:@]{1,64}` + keyGap + `_|-[A-Za-z0-9.:@]{1,64}-)` + keyGap +
	`([A-Za-z0-9_\-]+(?:(?:` + keyBreak + `)[A-Za-z0-9_\-]+){0,3})`)

const (
	// keyGap is what may stand around a key's underscores.
	keyGap = `[\s\x{2028}\x{2029}]{0,3}`
	// keyBreak is what may split its secret: a space or two, or a line
	// break with the spaces around it.
	keyBreak = `[ \t]{1,2}|[ \t]*(?:\r?\n|\x{2028}|\x{2029})[ \t]*`
)

// keyPiece is one run of a key's secret between spaces.
var keyPiece = regexp.MustCompile(`[A-Za-z0-9_\-]+`)

// letterSpaced is a run of single letters, digits, underscores or dashes
// with one space between each: "m n _ a c m e _ b f 3 F …", a key written
// out to slip past a reader, who joins it at once.
var letterSpaced = regexp.MustCompile(`(?:^|[^A-Za-z0-9_\-])((?:[A-Za-z0-9_\-] ){19,}[A-Za-z0-9_\-])`)

// findMnemeKeys finds Mneme API keys whose secret looks generated: 12
// characters or more (half a seeded secret, cut off at a line break, is
// still half the key), mixing lower case, upper case and digits or all hex
// digits, so that a name such as "mn_acme_customer_preferences" is not one.
// A secret split by spaces is one when its pieces, each generated-looking,
// join to the length of an issued or a seeded secret (48 or 24): the
// longest such join is masked. A letter-spaced run is read joined.
func findMnemeKeys(text string) [][2]int {
	out := mnemeKeys(text)
	for _, m := range letterSpaced.FindAllStringSubmatchIndex(text, -1) {
		if joined := strings.ReplaceAll(text[m[2]:m[3]], " ", ""); len(mnemeKeys(joined)) > 0 {
			out = append(out, [2]int{m[2], m[3]})
		}
	}
	return out
}

// mnemeKeys finds the keys of findMnemeKeys written without letter spacing.
func mnemeKeys(text string) [][2]int {
	var out [][2]int
	for _, m := range mnemeKey.FindAllStringSubmatchIndex(text, -1) {
		secret, end, joined := text[m[2]:m[3]], -1, ""
		for k, p := range keyPiece.FindAllStringIndex(secret, -1) {
			piece := secret[p[0]:p[1]]
			if k == 0 && len(piece) >= 12 && generated(piece) {
				end = m[2] + p[1]
			}
			if !generated(piece) {
				break // a word, not a piece of the secret
			}
			if joined += piece; k > 0 && (len(joined) == 24 || len(joined) == 48) {
				end = m[2] + p[1]
			}
		}
		if end >= 0 {
			out = append(out, [2]int{m[0], end})
		}
	}
	return out
}

// generated reports whether a key's secret mixes at least two of lower
// case, upper case and digits, or is all hex digits.
func generated(secret string) bool {
	var lower, upper, digit, hex = 0, 0, 0, true
	for _, r := range secret {
		switch {
		case r >= 'a' && r <= 'z':
			lower = 1
		case r >= 'A' && r <= 'Z':
			upper = 1
		case r >= '0' && r <= '9':
			digit = 1
		}
		hex = hex && (r >= '0' && r <= '9' || r >= 'a' && r <= 'f')
	}
	return lower+upper+digit >= 2 || hex
}

// looksRandom tells a generated credential from a word: long enough, and
// either high in entropy or a mix of letters and digits.
func looksRandom(v string) bool {
	if len(v) < 12 {
		return false
	}
	var letters, digits bool
	for _, r := range v {
		letters = letters || unicode.IsLetter(r)
		digits = digits || unicode.IsDigit(r)
	}
	return entropy(v) >= 3.5 || (letters && digits && len(v) >= 16)
}

// entropy is the Shannon entropy of s in bits per character.
func entropy(s string) float64 {
	counts := map[rune]int{}
	n := 0
	for _, r := range s {
		counts[r]++
		n++
	}
	h := 0.0
	for _, c := range counts {
		p := float64(c) / float64(n)
		h -= p * math.Log2(p)
	}
	return h
}

// Passwords are recognised by being named: "password: …", "pw: …", "密码是…", or
// "passwd hunter2", "密码 abc12345": named with no verb, the word after
// must look like a secret (bare). A quoted value is the password whole,
// spaces and all ("passphrase is "correct horse battery staple"",
// 口令是“芝麻开门”), and so are the words after "passphrase:" up to the end
// of the clause. An unquoted value runs to the next space, quote or Chinese
// punctuation, whatever punctuation it ends with: "pw: hunter2x!" may be
// the password "hunter2x!" as well as the sentence's, and so may
// "hunter2x." or "hunter2x,"; masking the full stop too is the safe
// mistake. Only deciding whether a value is prose ("password is
// expired.") reads it without that punctuation (clause).
var (
	passwordEN     = regexp.MustCompile(`(?i)\b(?:password|passwd|pwd|pw|passcode|passphrase|passwort|pin)\b["']?\s*(?:(is|was)|[:=：])\s*["']?([^\s"'，。；]+)`)
	passwordZH     = regexp.MustCompile(`(?:密码|密碼|口令|パスワード|비밀번호)\s*(?:是|为|為|改成|改为|は|[:：=])\s*["']?([!-~]{4,}(?: [!-~]+)*)`)
	passwordBare   = regexp.MustCompile(`(?i)(?:\b(?:password|passwd|pwd|passcode|passphrase|passwort|contraseña|mot de passe)\s+|(?:密码|密碼|口令|パスワード|비밀번호)\s*)["']?([!-~]{6,})`)
	passwordQuoted = regexp.MustCompile(`(?i)(?:\b(password|passwd|pwd|passcode|pass ?phrase|passwort|pin)\b["']?\s*((?:is|was)\b|[:=：])?|(?:密码|密碼|口令|パスワード|비밀번호)\s*(?:是|为|為|改成|改为|は|[:：=]))\s*(?:"([^"\n]{1,128})"|'([^'\n]{1,128})'|“([^”\n]{1,128})”|‘([^’\n]{1,128})’|「([^」\n]{1,128})」|『([^』\n]{1,128})』)`)
	passphraseEN   = regexp.MustCompile(`(?i)\bpass ?phrase\b["']?\s*[:=：]\s*([^\s"',;，。；]+(?: [^\s"',;，。；]+){0,7})`)
)

func findPasswords(text string) [][2]int {
	var out [][2]int
	// Quoted values and passphrases first: where they overlap a word the
	// other expressions take, the longer span wins.
	for _, m := range passwordQuoted.FindAllStringSubmatchIndex(text, -1) {
		g := 6 // the one pair of quotes that matched
		for m[g] < 0 {
			g += 2
		}
		if m[2] >= 0 && !quotedSecret(text[m[2]:m[3]], text[max(m[4], 0):max(m[5], 0)], text[m[g]:m[g+1]]) {
			continue
		}
		out = append(out, [2]int{m[g], m[g+1]})
	}
	for _, m := range passphraseEN.FindAllStringSubmatchIndex(text, -1) {
		out = append(out, [2]int{m[2], m[3]})
	}
	for _, m := range passwordEN.FindAllStringSubmatchIndex(text, -1) {
		end := valueEnd(text, m[4], m[5])
		v := clause(text[m[4]:end])
		// "password is expired" names a state, not a password: after "is",
		// a plain lowercase word is prose. After ':' or '=' anything goes.
		if v == "" || (m[2] >= 0 && isPlainWord(v)) {
			continue
		}
		out = append(out, [2]int{m[4], end})
	}
	for _, m := range passwordZH.FindAllStringSubmatchIndex(text, -1) {
		if end := valueEnd(text, m[2], m[3]); end > m[2] {
			out = append(out, [2]int{m[2], end})
		}
	}
	for _, m := range passwordBare.FindAllStringSubmatchIndex(text, -1) {
		// A closing quote is the quote's, not the password's.
		if v := text[m[2]:valueEnd(text, m[2], m[3])]; bare(clause(v)) {
			out = append(out, [2]int{m[2], m[2] + len(strings.TrimRight(v, `"'`))})
		}
	}
	return append(out, findNamedCredentials(text, "pass")...)
}

// valueEnd returns where the value in text[start:end], after a password's
// name up to the next space or quote, ends: at end, or before a comma or
// semicolon that a letter of another script follows, as Chinese writes the
// clause after a password with no space ("密码：abc123，别忘了", the '，'
// read as ',').
func valueEnd(text string, start, end int) int {
	for i := start; i < end && i+1 < len(text); i++ {
		if (text[i] == ',' || text[i] == ';') && text[i+1] >= utf8.RuneSelf {
			return i
		}
	}
	return end
}

// clause returns v without the punctuation a sentence or clause may end
// with, to tell a value from prose; a value found is masked with it.
func clause(v string) string { return strings.TrimRight(v, `.!?"',;:`) }

// bare tells a secret written right after the word password from prose
// ("password reset", "password 2 times"): six characters or more, a digit
// among them.
func bare(v string) bool {
	return len(v) >= 6 && strings.ContainsAny(v, "0123456789")
}

func isPlainWord(v string) bool {
	for _, r := range v {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// quotedSecret tells a password quoted after its name (word) and verb or
// sign (sep, "" for none) from a quoted message. After ':' or '=' anything
// goes. A passphrase is words by design: any quoted value but a single word
// is one. After "password is", or "password" alone, the value needs a
// digit or a symbol: 'password is "invalid"' and 'the password "Reset"
// link' quote a screen. "pin" alone is too common a word to name anything.
func quotedSecret(word, sep, v string) bool {
	word = strings.ToLower(word)
	switch {
	case strings.ContainsAny(sep, ":=："):
		return true
	case strings.HasPrefix(word, "pass") && strings.HasSuffix(word, "phrase"):
		return strings.ContainsFunc(strings.TrimSpace(v), unicode.IsSpace) || !wordsOnly(v)
	case sep == "" && word == "pin":
		return false
	}
	return !wordsOnly(v)
}

// wordsOnly reports whether v is letters and spaces and nothing else.
func wordsOnly(v string) bool {
	return !strings.ContainsFunc(v, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsSpace(r) })
}

// email is an address, its mailbox and domain in the letters of alphabets
// (an internationalised "иван@пример.рф" as well), not of Chinese, which
// writes words against an address without a space.
var email = regexp.MustCompile(`[` + mailLetters + `0-9._%+\-]+@[` + mailLetters + `0-9\-]+(?:\.[` + mailLetters + `0-9\-]+)*\.[` + mailLetters + `]{2,}`)

const mailLetters = `\p{Latin}\p{Cyrillic}\p{Greek}`

// emailSpelled is an address with its '@' or dots spelled out, as people
// write them to keep them from scrapers: "bob at example dot com",
// "bob(at)example(dot)com", "bob [at] example [dot] co [dot] uk". Group 1
// is the name, 2 the '@' as written, 3 the first label of the domain.
var emailSpelled = regexp.MustCompile(`(?i)\b([a-z0-9][a-z0-9._+\-]*)(` + spelledAt + `)([a-z0-9][a-z0-9\-]*)(?:(?:` + spelledDot + `)[a-z0-9][a-z0-9\-]*)*(?:` + spelledDot + `)[a-z]{2,}\b`)

const (
	spelledAt  = `\s*[(\[{<]\s*at\s*[)\]}>]\s*|\s+at\s+|\s*@\s*|\s*` + zhAt + `\s*`
	spelledDot = `\s*[(\[{<]\s*dot\s*[)\]}>]\s*|\s+dot\s+|\.|\s*[点點]\s*`
	// zhAt are the Chinese names of '@': 艾特, the Taiwanese 小老鼠 and 圈a.
	zhAt = `艾特|小老鼠|圈a`
)

// zhAtName is a Chinese name of '@' in a spelled address.
var zhAtName = regexp.MustCompile(zhAt)

// emailCue is a word that says an address follows: before a name that is
// a plain word, "at … dot …" spelled with bare words is an address only
// after one ("e-mail bob at example dot com", not "shop at amazon dot com").
var emailCue = regexp.MustCompile(`(?i)(?:e-?mail|mail|address|contact|reach|write|邮箱|邮件|电邮|地址)`)

// notMailbox are the words that make "… at the dot com bubble" prose: no
// address is named "me" or lives at "the".
var notMailbox = map[string]bool{
	"i": true, "me": true, "we": true, "us": true, "you": true, "he": true, "him": true, "she": true, "her": true,
	"it": true, "they": true, "them": true, "the": true, "a": true, "an": true, "this": true, "that": true,
	"these": true, "those": true, "my": true, "your": true, "our": true, "his": true, "its": true, "their": true,
	"some": true, "any": true, "no": true, "every": true, "each": true, "least": true, "most": true, "all": true,
}

func findEmails(text string) [][2]int {
	var out [][2]int
	for _, m := range email.FindAllStringIndex(text, -1) {
		out = append(out, [2]int{m[0], m[1]})
	}
	for _, m := range emailSpelled.FindAllStringSubmatchIndex(text, -1) {
		name, at, domain := text[m[2]:m[3]], text[m[4]:m[5]], text[m[6]:m[7]]
		if strings.ContainsAny(at, "([{<") || zhAtName.MatchString(at) || strings.Contains(at, "@") && !strings.ContainsAny(at, " \t\n") {
			out = append(out, [2]int{m[0], m[1]}) // a bracketed "(at)", a Chinese name of '@', or '@' itself
			continue
		}
		if notMailbox[strings.ToLower(name)] || notMailbox[strings.ToLower(domain)] {
			continue
		}
		if mailboxLike(name) || emailCue.MatchString(text[max(0, m[2]-32):m[2]]) {
			out = append(out, [2]int{m[0], m[1]})
		}
	}
	return out
}

// mailboxLike reports whether name reads as a mailbox rather than a word:
// letters with a dot, underscore, plus, dash or digit among them
// ("bob.smith", "zhang_san", "alice2").
func mailboxLike(name string) bool {
	return strings.ContainsFunc(name, unicode.IsLetter) && strings.ContainsAny(name, "._+-0123456789") &&
		!strings.HasSuffix(name, ".")
}

// cnID is an 18-character resident identity number, optionally grouped
// 6-8-4 by spaces, dashes or a line break.
var cnID = regexp.MustCompile(`\d{6}(?:` + groupBreak + `)?\d{8}(?:` + groupBreak + `)?\d{3}[\dXx]`)

// groupBreak separates the groups of an ID number: a space, a dash, or a
// line break with the spaces around it.
const groupBreak = `[ \-]|[ \t]*\r?\n[ \t]*`

// findCNIDs finds resident identity numbers: valid ones (ValidCNID), and
// any of the right shape that a label names one (labelledCNID): "身份证号
// 110101199003077777" is an ID number with a wrong check digit, mistyped
// or made up, and as private as a right one.
func findCNIDs(text string) [][2]int {
	var out [][2]int
	for _, m := range cnID.FindAllStringIndex(text, -1) {
		if isolated(text, m[0], m[1], nil) && (ValidCNID(idChars(text[m[0]:m[1]])) || labelledCNID(text, m[0])) {
			out = append(out, [2]int{m[0], m[1]})
		}
	}
	return append(out, findGroupedCNIDs(text)...)
}

// idChars returns the digits and letters of s, without its separators.
func idChars(s string) string {
	return strings.Map(func(r rune) rune {
		if r < utf8.RuneSelf && isAlnum(r) {
			return r
		}
		return -1
	}, s)
}

// provinces are the first two digits GB/T 2260 assigns.
var provinces = map[string]bool{
	"11": true, "12": true, "13": true, "14": true, "15": true, "21": true, "22": true, "23": true,
	"31": true, "32": true, "33": true, "34": true, "35": true, "36": true, "37": true,
	"41": true, "42": true, "43": true, "44": true, "45": true, "46": true,
	"50": true, "51": true, "52": true, "53": true, "54": true,
	"61": true, "62": true, "63": true, "64": true, "65": true, "71": true, "81": true, "82": true, "83": true, "91": true,
}

// ValidCNID reports whether id is a valid 18-character resident identity
// number: a known province, a real birth date not in the future and the
// GB 11643 check character.
func ValidCNID(id string) bool {
	if len(id) != 18 || !provinces[id[:2]] {
		return false
	}
	birth, err := time.Parse("20060102", id[6:14])
	if err != nil || birth.Year() < 1900 || birth.After(time.Now()) {
		return false
	}
	weights := [17]int{7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2}
	sum := 0
	for i, w := range weights {
		c := id[i]
		if c < '0' || c > '9' {
			return false
		}
		sum += int(c-'0') * w
	}
	return strings.EqualFold(id[17:], string("10X98765432"[sum%11]))
}

// digitRun is a run of digits with single spaces, dashes or dots between
// groups ("4111.1111.1111.1111"), and line breaks: a card number wrapped
// over two lines is still one.
var digitRun = regexp.MustCompile(`\d+(?:(?:[ \-.]|[ \t]*\r?\n[ \t]*)\d+)*`)

var lineBreak = regexp.MustCompile(`[ \t]*\r?\n[ \t]*`)

func findBankCards(text string) [][2]int {
	var out [][2]int
	for _, m := range digitRun.FindAllStringIndex(text, -1) {
		if !isolated(text, m[0], m[1], nil) {
			continue
		}
		// The run's lines, each a span of text; a card is a line or two
		// lines together, never more: a column of numbers is no card.
		var lines [][2]int
		start := m[0]
		for _, br := range lineBreak.FindAllStringIndex(text[m[0]:m[1]], -1) {
			lines = append(lines, [2]int{start, m[0] + br[0]})
			start = m[0] + br[1]
		}
		lines = append(lines, [2]int{start, m[1]})
		for i := 0; i < len(lines); i++ {
			if i+1 < len(lines) && wrappedCard(text, lines[i], lines[i+1]) {
				out = append(out, [2]int{lines[i][0], lines[i+1][1]})
				i++
				continue
			}
			if ValidCard(onlyDigits(text[lines[i][0]:lines[i][1]])) {
				out = append(out, lines[i])
			}
		}
	}
	return out
}

// wrappedCard reports whether two lines of digits are one card number
// broken over them: a valid card together, and not two dates
// ("20240101" above "20240215" is a list).
func wrappedCard(text string, a, b [2]int) bool {
	first, second := onlyDigits(text[a[0]:a[1]]), onlyDigits(text[b[0]:b[1]])
	if isDate(first) && isDate(second) {
		return false
	}
	return ValidCard(first + second)
}

// isDate reports whether digits is a date of this era written YYYYMMDD.
func isDate(digits string) bool {
	if len(digits) != 8 {
		return false
	}
	d, err := time.Parse("20060102", digits)
	return err == nil && d.Year() >= 1900 && d.Year() < 2100
}

// ValidCard reports whether digits can be a payment card number: 13–19
// digits, an issuer prefix (2–6: Mastercard, Amex, Visa, UnionPay, …) and a
// valid Luhn check digit.
func ValidCard(digits string) bool {
	if len(digits) < 13 || len(digits) > 19 || digits[0] < '2' || digits[0] > '6' {
		return false
	}
	return Luhn(digits)
}

// Luhn reports whether a string of digits passes the Luhn check.
func Luhn(digits string) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if d < 0 || d > 9 {
			return false
		}
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

var (
	// A Chinese mobile number: 1[3-9] and nine digits, optionally with +86
	// and grouped 3-4-4 by spaces, dashes or dots.
	phoneCN = regexp.MustCompile(`(?:\+?86[ \-.]?)?1[3-9]\d(?:[ \-.]?\d{4}){2}`)
	// An international number: '+', a country code and groups, 8–15
	// digits in all (E.164).
	phoneIntl = regexp.MustCompile(`\+\d{1,3}(?:[ \-]?\(?\d{1,5}\)?){2,6}`)
	// A Chinese landline with its area code: 010-12345678.
	phoneLandline = regexp.MustCompile(`\(?0\d{2,3}\)?[ \-]\d{7,8}`)
)

func findPhones(text string) [][2]int {
	var out [][2]int
	for _, re := range []*regexp.Regexp{phoneCN, phoneIntl, phoneLandline} {
		for _, m := range re.FindAllStringIndex(text, -1) {
			n := len(onlyDigits(text[m[0]:m[1]]))
			if re == phoneCN && groupedOn(text, m[0], m[1]) {
				continue
			}
			if isolated(text, m[0], m[1], phoneNames) && n >= 8 && n <= 15 {
				out = append(out, [2]int{m[0], m[1]})
			}
		}
	}
	return out
}

// isolated reports whether text[start:end] is not part of a longer number
// or, for a phone, of a longer word: an order id "ORD13812345678" holds no
// phone number. An underscore separates ("x_13812345678" in a key), and so
// does a word glued before a phone that names it ("tel13812…", names). An ID
// number or a card, whose check digits rarely pass by chance, is found
// whatever letters stand around it ("ID110101…", "VISA4111…EXP1227"): names
// is nil for them, and only digits join.
func isolated(text string, start, end int, names map[string]bool) bool {
	if start > 0 {
		r, _ := utf8.DecodeLastRuneInString(text[:start])
		switch {
		case r >= '0' && r <= '9' || r == '+':
			return false
		case names != nil && r < utf8.RuneSelf && isAlnum(r) && !names[strings.ToLower(wordBefore(text, start))]:
			return false
		}
	}
	if end < len(text) {
		r, _ := utf8.DecodeRuneInString(text[end:])
		if r >= '0' && r <= '9' || names != nil && r < utf8.RuneSelf && isAlnum(r) {
			return false
		}
	}
	return true
}

// groupedOn reports whether the digits of text[start:end] go on past a
// dash or a dot on either side: "138-1234-5678-00" is a product code, not
// a mobile number. (A landline keeps its extension: 010-62345678-8001.)
func groupedOn(text string, start, end int) bool {
	digit := func(i int) bool { return i >= 0 && i < len(text) && text[i] >= '0' && text[i] <= '9' }
	sep := func(i int) bool { return i >= 0 && i < len(text) && (text[i] == '-' || text[i] == '.') }
	return sep(start-1) && digit(start-2) || sep(end) && digit(end+1)
}

// wordBefore returns the run of ASCII letters that ends at text[end].
func wordBefore(text string, end int) string {
	start := end
	for start > 0 && (text[start-1] >= 'a' && text[start-1] <= 'z' || text[start-1] >= 'A' && text[start-1] <= 'Z') {
		start--
	}
	if start > 0 && isAlnum(rune(text[start-1])) { // letters after digits: "9A" in "SO-9A138…"
		return ""
	}
	return text[start:end]
}

// phoneNames are the words that name a phone number glued to them.
var phoneNames = map[string]bool{
	"tel": true, "phone": true, "telephone": true, "mobile": true, "mob": true, "cell": true, "cellphone": true, "cn": true,
	"ph": true, "phoneno": true, "mobileno": true, "telno": true, "whatsapp": true, "wechat": true, "wx": true, "hp": true,
}

func isAlnum(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

func onlyDigits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Health terms: conditions, treatments and states that make a memory health
// data. English terms match whole words; Chinese terms match anywhere.
var (
	healthEN = regexp.MustCompile(`(?i)\b(?:diabet(?:es|ic)|cancer|tumou?r|chemotherapy|hiv|hepatitis|depression|depressed|anxiety disorder|bipolar|schizophreni[ac]|adhd|autism|asthma|epilep(?:sy|tic)|hypertension|high blood pressure|heart disease|pregnan(?:t|cy)|miscarriage|alzheimer'?s|dementia|tuberculosis|insulin|antidepressants?|diagnosed with|allerg(?:y|ies|ic)|disabilit(?:y|ies)|medical condition|surgery|therapy sessions?)\b`)
	healthZH = regexp.MustCompile(`糖尿病|癌症|癌|肿瘤|化疗|艾滋病|乙肝|肝炎|抑郁症|焦虑症|精神分裂|双相情感|哮喘|癫痫|高血压|心脏病|怀孕|孕期|流产|阿尔茨海默|痴呆|肺结核|过敏|胰岛素|抗抑郁|确诊|病历|残疾|手术`)
)

func findHealthTerms(text string) [][2]int {
	var out [][2]int
	for _, re := range []*regexp.Regexp{healthEN, healthZH} {
		for _, m := range re.FindAllStringIndex(text, -1) {
			out = append(out, [2]int{m[0], m[1]})
		}
	}
	return out
}

// spacedDigits is a run of seven digits or more with one space between
// each: "1 3 8 1 2 3 4 5 6 7 8", a number written out to slip past a
// reader, who reads it whole.
var spacedDigits = regexp.MustCompile(`(?:^|[^0-9])((?:[0-9] ){6,}[0-9])`)

// spacedOut is detect that also reads each spaced-out run of digits
// joined, and reports the whole run when the joined digits hold a finding.
func spacedOut(detect func(string) [][2]int) func(string) [][2]int {
	return func(text string) [][2]int {
		out := detect(text)
		for _, m := range spacedDigits.FindAllStringSubmatchIndex(text, -1) {
			if len(detect(strings.ReplaceAll(text[m[2]:m[3]], " ", ""))) > 0 {
				out = append(out, [2]int{m[2], m[3]})
			}
		}
		return out
	}
}
