package period_test

import (
	"testing"
	"time"

	"mneme/period"
)

func TestKey(t *testing.T) {
	ref := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	tests := []struct{ text, want string }{
		{"Our Q4 procurement budget is 150k CNY", "q4"},
		{"For next year's Q1 the budget is 90k CNY", "2027_q1"},
		{"My budget for Q1 is 90k CNY", "q1"},
		{"The 2027 budget is 2 million", "2027"},
		{"Budget for 2027 is 90k", "2027"},
		{"FY2027 budget: 1.2m", "2027"},
		{"FY27 budget: 1.2m", "2027"},
		{"2027Q1 budget 30k", "2027_q1"},
		{"Q1 2027 budget is 30k", "2027_q1"},
		{"the first quarter budget is 30k", "q1"},
		{"budget for next quarter is 40k", "2027_q1"},
		{"budget for this quarter is 40k", "2026_q4"},
		{"budget for last quarter was 40k", "2026_q3"},
		{"H2 budget is 60k", "h2"},
		{"budget for the second half is 60k", "h2"},
		{"this year's budget is 500k", "2026"},
		{"last year the budget was 400k", "2025"},
		{"our annual budget is 500k", "annual"},
		{"monthly budget 5k", "monthly"},
		{"the budget is 5k per month", "monthly"},
		{"weekly budget is 1k", "weekly"},
		{"the annual budget for 2027 is 500k", "2027"},
		// Chinese.
		{"一季度预算是9万", "q1"},
		{"第一季度的预算是9万元", "q1"},
		{"明年一季度预算9万", "2027_q1"},
		{"下季度预算4万", "2027_q1"},
		{"本季度预算4万", "2026_q4"},
		{"上半年预算30万", "h1"},
		{"下半年预算30万", "h2"},
		{"2027年预算200万", "2027"},
		{"2027年度预算200万", "2027"},
		{"明年的预算是50万", "2027"},
		{"今年预算50万", "2026"},
		{"去年预算40万", "2025"},
		{"年度预算50万", "annual"},
		{"每月预算5000元", "monthly"},
		{"月度预算5000元", "monthly"},
		{"每周预算1000元", "weekly"},
		{"今年Q3预算是20万", "2026_q3"},
		// No period.
		{"My budget is 100k CNY", ""},
		{"budget is 2000 for the trip", ""},
		{"budget for 2000 CNY of gloves", ""},
		{"the budget is 150k, delivery on 2027-03-01", ""},
		{"预算是15万", ""},
		{"2027年3月1日之前预算是5万", ""},
		{"budget 150000 yuan, order SO-1007", ""},
		{"FAQ1 says the budget is 10k", ""},
		{"the budget will be 50k in a month", ""},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			if got := period.Of(tc.text, ref).Key(); got != tc.want {
				t.Errorf("Of(%q).Key() = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

// TestRelativeNeedsAReference: with no reference time a relative period is
// not read, and what the text names outright still is.
func TestRelativeNeedsAReference(t *testing.T) {
	tests := []struct{ text, want string }{
		{"For next year's Q1 the budget is 90k CNY", "q1"},
		{"what is next year's budget?", ""},
		{"下季度预算多少？", ""},
		{"What is the Q4 budget?", "q4"},
		{"2027年的预算是多少？", "2027"},
	}
	for _, tc := range tests {
		if got := period.Of(tc.text, time.Time{}).Key(); got != tc.want {
			t.Errorf("Of(%q, zero).Key() = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestSlot(t *testing.T) {
	ref := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	if got := period.Slot("budget", "For next year's Q1 the budget is 90k CNY", ref); got != "budget_2027_q1" {
		t.Errorf("Slot = %q, want budget_2027_q1", got)
	}
	if got := period.Slot("budget", "My budget is 90k CNY", ref); got != "budget" {
		t.Errorf("Slot = %q, want budget", got)
	}
}
