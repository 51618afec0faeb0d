package guard

import "unicode"

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
// decimal digits (\p{No}): those NFKC folds to a digit, and the dingbat and
// double-circled sets it leaves alone. Forms of numbers past 9 (⑩, ⒈, ⑴)
// are not among them.
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
	{'\U0001F10B', '\U0001F10C', 0},
}
