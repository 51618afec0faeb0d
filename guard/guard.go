// Package guard finds secrets and personal identifiers in text before it is
// remembered: passwords, API keys and tokens, Chinese resident identity
// numbers (GB 11643 checksum and birth date), bank card numbers (Luhn)
// with their labelled security codes and expiry dates, IBANs (mod 97),
// phone numbers, e-mail addresses and health terms, in Chinese and English.
// Social security, passport and driver's licence numbers, one-time codes,
// and a resident identity number whose check digit is wrong, count when a
// label names them; a label written one letter at a time ("p a s s w o r
// d") names its value too. Numbers are read whole however they are grouped.
// It only detects and masks; what to do with a finding (reject, redact or
// allow) is policy, decided elsewhere. On the way out, QuoteLine keeps what
// was remembered inside the block a model reads it in.
package guard

import (
	"slices"
	"strings"
)

// Finding kinds. Policies and API errors name findings by these, never by
// the value found.
const (
	// KindPassword is a password, a passphrase or a one-time code.
	KindPassword = "password"
	KindSecret   = "secret"
	KindCNID     = "cn_id"
	// KindIDNumber is an identity document's number other than a Chinese
	// resident identity number: a social security, a passport or a
	// driver's licence number.
	KindIDNumber = "id_number"
	// KindBankCard is a payment card's number, its labelled security
	// code or expiry date, or a bank account's IBAN.
	KindBankCard = "bank_card"
	KindPhone    = "phone"
	KindEmail    = "email"
	KindHealth   = "health"
)

// Kinds lists every finding kind.
var Kinds = []string{KindPassword, KindSecret, KindCNID, KindIDNumber, KindBankCard, KindPhone, KindEmail, KindHealth}

// Finding is one sensitive value: its kind and its byte span in the text.
type Finding struct {
	Kind       string
	Start, End int
}

// detectors run in order of precedence: where two findings overlap, the
// earlier detector's wins (an 18-digit ID number is not also a bank card).
var detectors = []struct {
	kind string
	find func(string) [][2]int
}{
	{KindSecret, spacedLabels(findSecrets)},
	{KindPassword, spacedLabels(findPasswords)},
	{KindPassword, spacedLabels(findOneTimeCodes)},
	{KindEmail, findEmails},
	{KindBankCard, findIBANs},
	{KindCNID, spacedLabels(spacedOut(findCNIDs))},
	{KindIDNumber, spacedLabels(findIDNumbers)},
	{KindBankCard, spacedOut(findBankCards)},
	{KindBankCard, findCardDetails},
	{KindPhone, spacedOut(findPhones)},
	{KindHealth, findHealthTerms},
}

// Scan returns the findings of text, without overlaps, in text order. The
// detectors read text with full-width forms and other digits folded,
// invisible characters dropped and overridden right-to-left spans also as
// shown (see view); the spans are the text's.
func Scan(text string) []Finding {
	v := newView(text)
	var out []Finding
	for _, d := range detectors {
		for _, span := range v.find(d.find) {
			f := Finding{Kind: d.kind, Start: span[0], End: span[1]}
			if !slices.ContainsFunc(out, f.overlaps) {
				out = append(out, f)
			}
		}
	}
	slices.SortFunc(out, func(a, b Finding) int { return a.Start - b.Start })
	floor := 0
	for i, f := range out {
		out[i].Start, out[i].End = v.span(f.Start, f.End, floor)
		floor = out[i].End
	}
	return out
}

func (f Finding) overlaps(g Finding) bool { return f.Start < g.End && g.Start < f.End }

// KindsOf returns the distinct kinds of fs, sorted.
func KindsOf(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		if !slices.Contains(out, f.Kind) {
			out = append(out, f.Kind)
		}
	}
	slices.Sort(out)
	return out
}

// Mask returns the placeholder that replaces a redacted value of kind.
func Mask(kind string) string { return "[REDACTED:" + kind + "]" }

// Redact replaces the span of every finding whose kind is in kinds with its
// mask. fs must come from Scan(text).
func Redact(text string, fs []Finding, kinds []string) string {
	var b strings.Builder
	last := 0
	for _, f := range fs {
		if !slices.Contains(kinds, f.Kind) || f.Start < last {
			continue
		}
		b.WriteString(text[last:f.Start])
		b.WriteString(Mask(f.Kind))
		last = f.End
	}
	b.WriteString(text[last:])
	return b.String()
}

// Masked is text with everything Scan finds in it replaced by its kind
// ("[REDACTED:email]"), whatever a policy would do with it: for names made
// from text (a key, a title) that must repeat none of it.
func Masked(text string) string {
	found := Scan(text)
	return Redact(text, found, KindsOf(found))
}
