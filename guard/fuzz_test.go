package guard

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzScan checks the detectors on any text: findings are in text order,
// do not overlap, lie on character boundaries, name a known kind, and pass
// their own checksum; Redact masks exactly the findings of the kinds asked
// and leaves the rest of the text as it was.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		"password: hunter2-Secret!", "密码是 Abc12345", "call 13800138000 or +86 138-0013-8000",
		"id 11010519491231002X card 6222020200112233445", "mail a.b+c@example.co.uk",
		"token sk-ABCDEF0123456789abcdef0123456789", "我有糖尿病和高血压", "AKIAIOSFODNN7EXAMPLE",
		"\xff\xfe 13800138000\x00", "4111 1111 1111 1111",
		"key mn_acme_4fB6ixukVUpW3M6bXTGZX7So", "ID 110101-19900307-4514", "card 41111111\n11111111",
		"card 4111%201111%201111%201111", "mail bob.smith%40example.com", "mail bob.smith at example dot com",
		"bob(at)example(dot)com", `passphrase is "correct horse battery staple"`, "口令是「芝麻开门」",
		"card ٤١١١١١١١١١١١١١١١", "phone ¹³⁹¹²³⁴⁵⁶⁷⁸", "ID ١١٠١٠١١٩٩٠٠٣٠٧٤٥١٤", "card ④①①①①①①①①①①①①①①①",
		"card 4\u03011\u030111111111111111", "card \u202e1111111111111114\u202c", "\u202eliame yb ton\u202c 13812345678",
		"mail bоb.smith@example.cоm", "телефона13812345678", "my key is mn_acme_ bf3FB9cKSydbSS66yqJ9aQms",
		"pw: Tr0ub4dor&3", "pass: hunter2x!", "secret: Tr0ub4dor&3", "login bob / Tr0ub4dor&3", "credentials: bob:Tr0ub4dor&3",
		"SSN 219-09-9999", "social security number 536-22-1234", "passport number E12345678", "护照号 E12345678",
		"身份证号 110101199003077777", "身份证号：１１０１０１１９９００３０７７７７７", "pass: the salt", "SSN format is XXX-XX-XXXX",
		"pw: hunter2x!", "password: Sunflower#2024!, ok", "pw: hunter2x，别忘了", "密码是 ,，别", "passwd hunter2!\"",
		"IBAN DE89 3704 0044 0532 0130 00", "GB82WEST12345698765432", "card 4111111111111111 exp 12/27 cvv 123",
		"CVV2: 123", "有效期 12/27 安全码 123", "order SO-1007, invoice INV-2024-0031, 12/27",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		fs := Scan(text)
		last := 0
		for i, fd := range fs {
			if !slices.Contains(Kinds, fd.Kind) {
				t.Fatalf("finding %d: unknown kind %q", i, fd.Kind)
			}
			if fd.Start < last || fd.End <= fd.Start || fd.End > len(text) {
				t.Fatalf("finding %d %+v out of order, empty, overlapping or out of %d bytes (previous end %d)", i, fd, len(text), last)
			}
			last = fd.End
			if utf8.ValidString(text) && (!utf8.ValidString(text[:fd.Start]) || !utf8.ValidString(text[fd.Start:fd.End])) {
				t.Fatalf("finding %d %+v cuts a character", i, fd)
			}
			// As the detectors read it, in the order of the text or, under
			// a right-to-left override, as shown.
			v := newView(text[fd.Start:fd.End]).text
			switch fd.Kind {
			case KindCNID:
				before := newView(text[:fd.Start]).text
				labelled := len(idChars(v)) == 18 && labelledCNID(before, len(before))
				if !ValidCNID(idChars(v)) && !ValidCNID(idChars(reverse(v))) && !labelled {
					t.Fatalf("cn_id %q fails its checksum and no label names it", v)
				}
			case KindIDNumber:
				if n := len(onlyDigits(v)); n < 6 || n > 9 {
					t.Fatalf("id_number %q has %d digits", v, n)
				}
			case KindBankCard:
				// A card number, an IBAN, or a card's security code (3–4
				// digits) or expiry (month and year).
				iban := strings.ReplaceAll(v, " ", "")
				if n := len(onlyDigits(v)); !ValidCard(onlyDigits(v)) && !ValidCard(onlyDigits(reverse(v))) && !ValidIBAN(iban) && (n < 2 || n > 6) {
					t.Fatalf("bank card %q is no card number, IBAN, security code or expiry", v)
				}
			case KindEmail:
				if !strings.Contains(v, "@") && !strings.Contains(strings.ToLower(v), "at") {
					t.Fatalf("email %q has no @", v)
				}
			}
		}
		if again := Scan(text); !slices.Equal(again, fs) {
			t.Fatalf("Scan is not deterministic: %v then %v", fs, again)
		}
		// Redacting every kind leaves only masks where the findings were.
		red := Redact(text, fs, Kinds)
		var b strings.Builder
		prev := 0
		for _, fd := range fs {
			b.WriteString(text[prev:fd.Start])
			b.WriteString(Mask(fd.Kind))
			prev = fd.End
		}
		b.WriteString(text[prev:])
		if red != b.String() {
			t.Fatalf("Redact(%q) = %q, want %q", text, red, b.String())
		}
		if Redact(text, fs, nil) != text {
			t.Fatalf("Redact with no kinds changed the text")
		}
	})
}
