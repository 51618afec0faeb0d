package extract

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

var (
	isoDate   = regexp.MustCompile(`\b(20\d{2})[-/.](\d{1,2})[-/.](\d{1,2})\b`)
	dayMonth  = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?(?:,?\s+(20\d{2}))?\b`)
	monthDay  = regexp.MustCompile(`(?i)\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(20\d{2}))?\b`)
	hanDate   = regexp.MustCompile(`(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]`)
	relDay    = regexp.MustCompile(`(?i)\b(today|tomorrow|yesterday)\b|(今天|明天|后天|昨天)`)
	monthNums = map[string]time.Month{
		"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7,
		"aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
	}
	relOffsets = map[string]int{"today": 0, "tomorrow": 1, "yesterday": -1, "今天": 0, "明天": 1, "后天": 2, "昨天": -1}
)

// dates finds the calendar dates a sentence names, as YYYY-MM-DD. A date
// without a year, or a relative one, is read against ref: when the turn was
// said.
func dates(s string, ref time.Time) []string {
	var out []string
	add := func(y int, m time.Month, d int) {
		if m < 1 || m > 12 || d < 1 || d > 31 {
			return
		}
		t := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		if t.Month() != m { // 31 February
			return
		}
		iso := t.Format(time.DateOnly)
		for _, o := range out {
			if o == iso {
				return
			}
		}
		out = append(out, iso)
	}
	year := func(g string) int {
		if y, err := strconv.Atoi(g); err == nil {
			return y
		}
		return ref.Year()
	}
	for _, m := range isoDate.FindAllStringSubmatch(s, -1) {
		mo, _ := strconv.Atoi(m[2])
		d, _ := strconv.Atoi(m[3])
		add(year(m[1]), time.Month(mo), d)
	}
	for _, m := range dayMonth.FindAllStringSubmatch(s, -1) {
		d, _ := strconv.Atoi(m[1])
		add(year(m[3]), monthNums[strings.ToLower(m[2])], d)
	}
	for _, m := range monthDay.FindAllStringSubmatch(s, -1) {
		d, _ := strconv.Atoi(m[2])
		add(year(m[3]), monthNums[strings.ToLower(m[1])], d)
	}
	for _, m := range hanDate.FindAllStringSubmatch(s, -1) {
		mo, _ := strconv.Atoi(m[2])
		d, _ := strconv.Atoi(m[3])
		add(year(m[1]), time.Month(mo), d)
	}
	for _, m := range relDay.FindAllString(s, -1) {
		t := ref.AddDate(0, 0, relOffsets[strings.ToLower(m)])
		add(t.Year(), t.Month(), t.Day())
	}
	return out
}
