package facts

import (
	"slices"
	"testing"
)

func TestNumbersOf(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"budget 100k", []string{"100k"}},
		{"budget 100 k for 2026", []string{"100k", "2026"}},
		{"100,000 euros", []string{"100000"}},
		{"12,345,678 units", []string{"12345678"}},
		{"discount 1,5%", []string{"1,5%"}}, // a decimal comma is no thousands comma
		{"2,5 kg", []string{"2,5"}},
		{"2,00 cartons", []string{"2,00"}},
		{"0,750 l", []string{"0,750"}},
		{"1,2,3", []string{"1,2,3"}},
		{"1,5000", []string{"1,5000"}},
		{"price 1.5m", []string{"1.5m"}},
		{"预算15万", []string{"15万"}},
		{"预算十五万元", []string{"十五万"}},
		{"三十个", []string{"三十"}},
		{"一起去", nil},
		{"order 4411, 20%", []string{"20%", "4411"}},
		{"ｂｕｄｇｅｔ １００ｋ", []string{"100k"}},
		{"no numbers", nil},
	}
	for _, tc := range tests {
		if got := Numbers(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("Numbers(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestSameFact(t *testing.T) {
	tests := []struct {
		a, b   string
		cosine float64
		want   bool
	}{
		{"Alice prefers tea.", "alice PREFERS tea!", 0, true},                 // same text, whatever the vectors
		{"Lunch at Café Müller", "Lunch at Cafe\u0301 Mu\u0308ller", 0, true}, // composed and decomposed accents
		// Signs and symbols are facts, whatever the vectors say.
		{"Carol wants ≥ 3 samples in each box", "Carol wants ≤ 3 samples in each box", 0.99, false},
		{"Carol rates the new packaging 👍", "Carol rates the new packaging 👎", 0.99, false},
		{"Carol checklist: invoice ✓", "Carol checklist: invoice ✗", 0.99, false},
		{"Carol wants temperature above +5 C", "Carol wants temperature above -5 C", 0.99, false},
		{"Carol temp -5", "Carol temp 5", 0.99, false},
		{"Carol price 100 $ per box", "Carol price 100 € per box", 0.99, false},
		{"Carol discount 20% on boxes", "Carol discount 20 on boxes", 0.99, false},
		{"Carol ships to A → B", "Carol ships to A ← B", 0.99, false},
		{"Carol score 5/10", "Carol score 510", 0.99, false},
		{"Carol ratio 1:2", "Carol ratio 12", 0.99, false},
		{"Carol uses v1.2", "Carol uses v12", 0.99, false},
		{"Carol delivery 1-3 days", "Carol delivery 13 days", 0.99, false},
		// Not marks: punctuation, a thousands comma, an id's dash, width.
		{"Budget: 1,500 USD.", "budget 1500 usd", 0, true},
		{"Order SO-1001 shipped!", "order so-1001 shipped", 0, true},
		{"Stock 12,345,678 units", "stock 12345678 units", 0, true},
		// A decimal comma is not: the digits joined are another number.
		{"Dana's discount is 1,5%.", "Dana's discount is 15%.", 0.99, false},
		{"Parcel weighs 2,5 kg", "Parcel weighs 25 kg", 0.99, false},
		{"Order 2,00 cartons", "Order 200 cartons", 0.99, false},
		{"Dose 0,75 ml", "Dose 075 ml", 0.99, false},
		{"Budget 1,5000 USD", "Budget 15000 USD", 0.99, false},
		{"Box A 1,5 kg, box B 225 g", "Box A 15 kg, box B 2,25 g", 0.99, false},
		{"Dana's discount is 1,5%.", "dana's discount is 1,5%", 0, true},
		{"Price ＄100", "price $100", 0, true},
		{"用户喜欢简短的回答。", "用户喜欢简短的回答", 0, true},                        // punctuation
		{"budget 100k", "budget 150k", 0.99, false},                 // numbers differ
		{"budget 100k", "the budget is 100k", 0.9, true},            // same numbers, alike
		{"budget 100k", "the budget is 100k", 0.5, false},           // same numbers, not alike enough
		{"Alice likes tea", "Alice likes coffee", 0.7, false},       // below the threshold
		{"预算十万", "预算十五万", 0.99, false},                              // Chinese numerals
		{"order 4411 is late", "order 4411 is late!", 0.2, true},    // same text
		{"Alice likes tea", "Alice really likes tea", 0.95, true},   // paraphrase
		{"Alice likes tea", "Alice really likes tea", 0.859, false}, // just under
	}
	// memory.DefaultDuplicateThreshold, which memory cannot lend this package.
	const threshold = 0.86
	for _, tc := range tests {
		if got := Same(tc.a, tc.b, tc.cosine, threshold); got != tc.want {
			t.Errorf("Same(%q, %q, %v) = %v, want %v", tc.a, tc.b, tc.cosine, got, tc.want)
		}
	}
}

func TestLookAlike(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"preference", false}, {"answer_style", false}, {"送货时间", false}, {"偏好：回复（简短）", false},
		{"vip会员", false}, {"προτίμηση", false}, {"предпочтение", false}, {"café", false},
		{"pre\u0435ference", true},  // Cyrillic е
		{"pref\u03b5rence", true},   // Greek ε
		{"pre\uff45ference", true},  // full-width ｅ
		{"\ufb01rst_contact", true}, // the ligature ﬁ
		{"area_m\u00b2", true},      // superscript two
		{"\u0301\u0301", true},      // combining marks with nothing to sit on
		{"slot \u0301x", true},
		{"\u0903", true},           // a spacing mark alone
		{"caf\u00e9\u0301", false}, // a mark on a letter
		{"हिन्दी", false},          // marks inside a word of a script that writes them
	} {
		if got := LookAlike(tt.name); got != tt.want {
			t.Errorf("LookAlike(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestThousandsComma(t *testing.T) {
	for _, tt := range []struct {
		text string
		want bool // of the first comma
	}{
		{"1,500", true},
		{"12,345,678", true},
		{"budget 100,000.50 USD", true},
		{"1,5", false},
		{"2,00", false},
		{"0,75", false},
		{"0,750", false}, // a zero alone leads no grouping
		{"1,5000", false},
		{"1234,567", false},
		{"1,500,5", false}, // one bad group spoils the number
		{"1,2,3", false},
	} {
		rs := []rune(tt.text)
		if got := thousandsComma(rs, slices.Index(rs, ',')); got != tt.want {
			t.Errorf("thousandsComma(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}
