package guard

import (
	"unicode"
	"unicode/utf8"
)

// digitValue returns the value of r when the view reads it as a digit, and
// -1 otherwise: a decimal digit of any script (Arabic-Indic ٤, Devanagari
// ४, mathematical 𝟒), or a superscript, subscript or circled form of one
// (⁴, ₄, ④, ❹), which read as the digit they show.
func digitValue(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	if unicode.IsDigit(r) {
		return decimalValue(r)
	}
	for _, f := range digitForms {
		if r >= f.first && r <= f.last {
			return f.value + int(r-f.first)
		}
	}
	return -1
}

// decimalValue is the value of a decimal digit (\p{Nd}). Unicode gives each
// script its ten digits in one run from 0 to 9, and unicode.Nd joins
// adjacent runs (the five mathematical sets) into one range, so the value
// is the distance from the range's start, modulo ten.
func decimalValue(r rune) int {
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	return -1
}

// digitForms are the runs of characters that show one digit but are not
// decimal digits (\p{No}): those NFKC folds to a digit, the dingbat and
// double-circled sets it leaves alone, and the parenthesised and full-stop
// digits (⑴, ⒈). Forms of numbers past 9 (⑩, ⒒) are not among them.
var digitForms = []struct {
	first, last rune
	value       int // of first
}{
	{'²', '³', 2},
	{'¹', '¹', 1},
	{'⁰', '⁰', 0},
	{'⁴', '⁹', 4},
	{'₀', '₉', 0},
	{'①', '⑨', 1},
	{'⓪', '⓪', 0},
	{'⓵', '⓽', 1}, // double circled
	{'⓿', '⓿', 0},
	{'❶', '❾', 1}, // dingbat negative circled
	{'➀', '➈', 1}, // dingbat circled sans-serif
	{'➊', '➒', 1}, // dingbat negative circled sans-serif
	{'፩', '፱', 1}, // Ethiopic, which has no zero
	{'⑴', '⑼', 1}, // parenthesised
	{'⒈', '⒐', 1}, // with a full stop
	{'\U0001F10B', '\U0001F10C', 0},
}

// chineseDigits are the characters that spell one digit in Chinese: the
// numerals, 〇 and 零 for nought, 幺 for one as numbers are read aloud,
// and the capitals of amounts in both scripts.
var chineseDigits = map[rune]rune{
	'〇': '0', '零': '0', '一': '1', '幺': '1', '壹': '1', '二': '2', '贰': '2', '貳': '2',
	'两': '2', '兩': '2', '三': '3', '叁': '3', '參': '3', '四': '4', '肆': '4', '五': '5', '伍': '5', '六': '6', '陆': '6', '陸': '6',
	'七': '7', '柒': '7', '八': '8', '捌': '8', '九': '9', '玖': '9',
}

// minSpelled is the fewest digits spelled in Chinese numerals that the
// view reads as a number: a phone or card number read out has more, and a
// quantity or a name ("一五一十", "三三两两") fewer or a 十, 百 or 万.
const minSpelled = 7

// spelledNumbers returns the byte spans of text where minSpelled digits or
// more are spelled one numeral each, with at most a space or a dash
// between two of them: "一三八 一二三四 五六七八".
func spelledNumbers(text string) [][2]int {
	var out [][2]int
	start, end, n := -1, -1, 0
	flush := func() {
		if n >= minSpelled {
			out = append(out, [2]int{start, end})
		}
		start, n = -1, 0
	}
	for i, r := range text {
		switch _, ok := chineseDigits[r]; {
		case ok:
			if start < 0 {
				start = i
			}
			end, n = i+utf8.RuneLen(r), n+1
		case start >= 0 && (r == ' ' || r == '-') && i == end:
		default:
			flush()
		}
	}
	flush()
	return out
}
