package guard

import (
	"regexp"
	"strings"
	"unicode"
)

// namedShort is a credential given a value under a name that is also an
// everyday word: "pass: hunter2x!", "secret: Tr0ub4dor&3". Group 1 is the
// name, 2 the value, to the next space, quote or Chinese punctuation (see
// passwordEN). Only ':' or '=' gives the value, and it counts only when it
// looks made up (credentialLike): "pass: the salt", "secret: none".
var namedShort = regexp.MustCompile(`(?i)\b(pass|secret)\b\s*[:=：]\s*["']?([^\s"'，。；]+)`)

// passNames are the words that make a "pass" a ticket, not a password:
// "boarding pass: 12A".
var passNames = map[string]bool{
	"boarding": true, "bus": true, "day": true, "season": true, "ski": true, "hall": true, "park": true, "train": true,
	"metro": true, "transit": true, "guest": true, "visitor": true, "press": true, "backstage": true, "festival": true,
	"gate": true, "parking": true, "annual": true, "weekly": true, "monthly": true, "free": true, "first": true, "second": true,
}

// loginPair is a user name and a password given together after a word for
// logging in or for credentials: "login bob / Tr0ub4dor&3", "credentials:
// bob:Tr0ub4dor&3", "登录 bob/Tr0ub4dor&3". Between them stands a slash,
// spaced or not, or a colon with no space around it ("login time: 9:30am"
// is no pair). Group 1 is the password.
var loginPair = regexp.MustCompile(`(?i)(?:\b(?:log-?in|log-?on|sign-?in|credentials?|creds)\b|登录|登陆|登入|账号密码|帳號密碼|帐号密码|凭据|凭证|憑證)\s*(?:(?:is|are)\b|[:=：]|是|为|為)?\s*[^\s/:："',;，。；]{1,64}(?:\s*/\s*|[:：])([^\s"'，。；/][^\s"'，。；]*)`)

// findNamedCredentials finds the values of namedShort named name and of
// loginPair (when name is "pass").
func findNamedCredentials(text, name string) [][2]int {
	var out [][2]int
	for _, m := range namedShort.FindAllStringSubmatchIndex(text, -1) {
		if !strings.EqualFold(text[m[2]:m[3]], name) || name == "pass" && passNames[strings.ToLower(lastWord(text[:m[2]]))] {
			continue
		}
		if end := valueEnd(text, m[4], m[5]); credentialLike(clause(text[m[4]:end])) {
			out = append(out, [2]int{m[4], end})
		}
	}
	if name != "pass" {
		return out
	}
	for _, m := range loginPair.FindAllStringSubmatchIndex(text, -1) {
		if end := valueEnd(text, m[2], m[3]); credentialLike(clause(text[m[2]:end])) {
			out = append(out, [2]int{m[2], end})
		}
	}
	return out
}

// lastWord returns the last word of text, skipping the spaces at its end.
func lastWord(text string) string {
	text = strings.TrimRightFunc(text, unicode.IsSpace)
	return wordBefore(text, len(text))
}

// credentialLike tells a made-up value from a word, a time, a date or an
// amount: six characters or more, a letter among them and a digit or a
// symbol other than those that join words, numbers and paths ("e-mail",
// "v1.2", "docs/plan"), and no link. "hunter2x!", "Tr0ub4dor&3", "P@ssword"
// are; "none", "the", "12:30", "2026-03-01", "https://example.com" are not.
func credentialLike(v string) bool {
	if len([]rune(v)) < 6 || strings.Contains(v, "://") {
		return false
	}
	var letter, other bool
	for _, r := range v {
		switch {
		case unicode.IsLetter(r):
			letter = true
		case unicode.IsDigit(r) || !strings.ContainsRune("-./:", r):
			other = true
		}
	}
	return letter && other
}

// oneTimeCode is a one-time or verification code after its label: "one-time
// code is 839201", "OTP: 839201", "验证码 839201". Group 1 is the code: four
// to eight digits, or two groups of three. Such a code opens an account as a
// password does, for minutes, and is found as one (KindPassword), so that a
// policy treats it as it treats a password. A number that goes on ("OTP
// 2024123456789") is no code.
var oneTimeCode = regexp.MustCompile(`(?i)(?:\b(?:one[\- ]?time (?:pass)?(?:code|word|pin)|otp(?: code)?|verification code|2fa code|two[\- ]factor code|log-?in code|sign-?in code|authentication code)\b|验证码|驗證碼|校验码|校驗碼|动态码|動態碼|动态密码|動態密碼|短信码)["']?\s*(?:(?:is|was)\b|[:=：#]|是|为|為)?\s*["']?(\d{4,8}|\d{3}[ \-]\d{3})\b`)

// findOneTimeCodes finds labelled one-time codes (oneTimeCode).
func findOneTimeCodes(text string) [][2]int {
	var out [][2]int
	for _, m := range oneTimeCode.FindAllStringSubmatchIndex(text, -1) {
		if isolated(text, m[2], m[3], map[string]bool{}) {
			out = append(out, [2]int{m[2], m[3]})
		}
	}
	return out
}

// spacedLetters is a word written one letter at a time with a space between
// each, four letters or more: "p a s s w o r d". Group 1 is the word. The
// "s" of "Alice's" is no letter of it.
var spacedLetters = regexp.MustCompile(`(?:^|[^A-Za-z'’])((?:[A-Za-z] ){3,}[A-Za-z])\b`)

// spacedLabels is detect that also reads each letter-spaced word joined, so
// that a label written out to slip past a reader ("p a s s w o r d is
// hunter2x!") names its value as it does written whole. The joined word is
// padded with spaces to the run's length: what detect finds keeps its
// offsets in text.
func spacedLabels(detect func(string) [][2]int) func(string) [][2]int {
	return func(text string) [][2]int {
		out := detect(text)
		runs := spacedLetters.FindAllStringSubmatchIndex(text, -1)
		if len(runs) == 0 {
			return out
		}
		b := []byte(text)
		for _, m := range runs {
			word := strings.ReplaceAll(text[m[2]:m[3]], " ", "")
			copy(b[m[2]:m[3]], word+strings.Repeat(" ", m[3]-m[2]-len(word)))
		}
		return append(out, detect(string(b))...)
	}
}
