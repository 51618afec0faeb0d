package guard

import (
	"regexp"
	"strings"
)

// Bank details next to the card numbers findBankCards finds: account
// numbers written as IBANs, and a card's security code and expiry date
// when a label names them. They are found as bank cards (KindBankCard), so
// that a policy treats them as it treats the card.

// ibanStart is where an IBAN may begin: a country code and two check
// digits, at the start of a word.
var ibanStart = regexp.MustCompile(`(?i)\b[a-z]{2}[0-9]{2}`)

// ibanLengths is the length of an IBAN in each country that issues them
// (ISO 13616, the SWIFT registry), country code and check digits included.
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
	"BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
	"EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
	"GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
	"IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21,
	"LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28,
	"NL": 18, "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
	"RU": 33, "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25,
	"SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}

// findIBANs finds IBANs, written whole ("DE89370400440532013000") or in
// groups of four ("DE89 3704 0044 0532 0130 00"): a country's code, as many
// letters and digits as its IBANs hold, and the ISO 7064 mod-97 check
// (ValidIBAN), which a made-up code passes once in 97 tries.
func findIBANs(text string) [][2]int {
	var out [][2]int
	for _, m := range ibanStart.FindAllStringIndex(text, -1) {
		n, ok := ibanLengths[strings.ToUpper(text[m[0]:m[0]+2])]
		if !ok {
			continue
		}
		var iban []byte
		i := m[0]
		for i < len(text) && len(iban) < n {
			if text[i] == ' ' && len(iban)%4 == 0 && i+1 < len(text) && isAlnumByte(text[i+1]) {
				i++ // the space between two groups
				continue
			}
			if !isAlnumByte(text[i]) {
				break
			}
			iban = append(iban, text[i])
			i++
		}
		if len(iban) == n && (i == len(text) || !isAlnumByte(text[i])) && ValidIBAN(string(iban)) {
			out = append(out, [2]int{m[0], i})
		}
	}
	return out
}

func isAlnumByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// ValidIBAN reports whether iban, letters and digits with no spaces, passes
// the ISO 7064 mod-97 check of ISO 13616: its first four characters moved
// to the end, each letter read as two digits (A = 10 … Z = 35), the number
// leaves 1 divided by 97.
func ValidIBAN(iban string) bool {
	if len(iban) < 5 {
		return false
	}
	rem := 0
	for _, c := range []byte(strings.ToUpper(iban[4:] + iban[:4])) {
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A') + 10) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// cardCode is a card's security code after its label: "CVV 123", "cvc2:
// 4567", "security code is 123", "安全码 123". Group 1 is the code.
var cardCode = regexp.MustCompile(`(?i)(?:\b(?:cvv2?|cvc2?|cvn2?|card security code|card verification (?:value|code)|security code)\b|安全码|安全碼|卡验证码|卡驗證碼)["']?\s*(?:(?:is|was)\b|[:=：#]|是|为|為)?\s*["']?([0-9]{3,4})\b`)

// cardExpiry is an expiry date, month and year, after its label: "exp
// 12/27", "expires 12/2027", "valid thru 12-27", "有效期 12/27", "有效期至
// 12/27". Group 1 is the date.
var cardExpiry = regexp.MustCompile(`(?i)(?:\b(?:exp|expiry|expiration|expires?|expiry date|expiration date|valid (?:thru|through|until)|good thru)\b\.?|有效期至|有效期到|有效期|到期日)["']?\s*(?:(?:is|on)\b|[:=：]|是|为|為)?\s*["']?((?:0?[1-9]|1[0-2])\s*[/\-.]\s*(?:20)?[0-9]{2})\b`)

// cardCue is a sign that a card is spoken of near an expiry date: its
// number, a word for a card or a brand, or its security code's label. An
// expiry date alone is a coupon's, a passport's or the milk's.
var cardCue = regexp.MustCompile(`(?i)\b(?:card|visa|master ?card|amex|american express|union ?pay|jcb|cvv2?|cvc2?)|[0-9](?:[ \-.]?[0-9]){12,18}|卡|安全码|安全碼`)

// cueReach is how far from an expiry date, in bytes, a card cue counts.
const cueReach = 48

// findCardDetails finds a card's labelled security code, and its labelled
// expiry date when a card is spoken of near it (cardCue).
func findCardDetails(text string) [][2]int {
	var out [][2]int
	for _, m := range cardCode.FindAllStringSubmatchIndex(text, -1) {
		out = append(out, [2]int{m[2], m[3]})
	}
	for _, m := range cardExpiry.FindAllStringSubmatchIndex(text, -1) {
		if fullDate(text, m[3]) {
			continue // "expires 12/27/2026" is a day's date
		}
		from, to := max(m[0]-cueReach, 0), min(m[1]+cueReach, len(text))
		if cardCue.MatchString(text[from:m[2]]) || cardCue.MatchString(text[m[3]:to]) {
			out = append(out, [2]int{m[2], m[3]})
		}
	}
	return out
}

// fullDate reports whether the month and year that end at end are the
// month and day of a date that goes on: "12/27/2026", "12-27-26".
func fullDate(text string, end int) bool {
	return end+1 < len(text) && strings.IndexByte("/-.", text[end]) >= 0 && text[end+1] >= '0' && text[end+1] <= '9'
}
