package guard_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mneme/guard"
)

func TestScan(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string // finding kinds
		raw  string   // the value that must lie inside a finding
	}{
		// Secrets: vendor prefixes, JWTs, PEM keys, Mneme keys, assignments.
		{"openai key", "use sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t for the bot", []string{"secret"}, "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t"},
		{"stripe key", "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", []string{"secret"}, "sk_live_4eC39HqLyjWDarjtT1zdp7dc"},
		{"github token", "token ghp_16C7e42F292c6912E7710c838347Ae178B4a ok", []string{"secret"}, "ghp_16C7e42F292c6912E7710c838347Ae178B4a"},
		{"aws key", "AWS key AKIAIOSFODNN7EXAMPLE in the config", []string{"secret"}, "AKIAIOSFODNN7EXAMPLE"},
		{"jwt", "header eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", []string{"secret"}, "eyJhbGciOiJIUzI1NiJ9"},
		{"pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", []string{"secret"}, "MIIEow"},
		{"mneme key", "my key is mn_acme_3f9a0c1d2e3f4a5b6c7d8e9f", []string{"secret"}, "mn_acme_3f9a0c1d2e3f4a5b6c7d8e9f"},
		{"assignment", "api_key=Zx81kQp0vLr7TnW2yB5m", []string{"secret"}, "Zx81kQp0vLr7TnW2yB5m"},
		{"chinese assignment", "令牌是 Zx81kQp0vLr7TnW2yB5m", []string{"secret"}, "Zx81kQp0vLr7TnW2yB5m"},
		{"bearer", "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345'", []string{"secret"}, "abcdefghijklmnopqrstuvwxyz012345"},
		{"token word only", "Alice asked how API tokens work and where to find her api key", nil, ""},
		{"low entropy assignment", "token = aaaaaaaaaaaaaaaa", nil, ""},
		// Passwords are named.
		{"password colon", "Alice's password: hunter2!", []string{"password"}, "hunter2!"},
		{"password is", "her wifi password is Tr0ub4dor&3", []string{"password"}, "Tr0ub4dor&3"},
		{"chinese password", "他的密码是 abc12345，别忘了", []string{"password"}, "abc12345"},
		{"password prose", "Alice's password is expired and she wants to reset it", nil, ""},
		{"password topic", "Alice forgot her password and asked for a reset link", nil, ""},
		{"chinese password prose", "用户说密码错误，需要重置", nil, ""},
		{"password with no verb", "my passwd hunter2, don't tell", []string{"password"}, "hunter2"},
		{"chinese password with no verb", "wifi密码 abc12345 贴在墙上", []string{"password"}, "abc12345"},
		{"password word then prose", "password reset twice on 2025-03-01, password changed 3 times", nil, ""},
		{"password after a no-break space", "my passwd\u00a0hunter2 for the portal", []string{"password"}, "hunter2"},
		{"password after a thin space", "密码\u2009abc12345", []string{"password"}, "abc12345"},
		{"traditional chinese password", "他的密碼是 abc12345", []string{"password"}, "abc12345"},
		{"german password", "Passwort: Geheim123", []string{"password"}, "Geheim123"},
		{"japanese password", "パスワードは abc12345 です", []string{"password"}, "abc12345"},
		// A label written one letter at a time is read joined.
		{"letter-spaced password", "Alice's p a s s w o r d is hunter2x!", []string{"password"}, "hunter2x"},
		{"letter-spaced password colon", "P A S S W O R D: Tr0ub4dor&3", []string{"password"}, "Tr0ub4dor&3"},
		{"letter-spaced token", "t o k e n = Zx81kQp0vLr7TnW2yB5m", []string{"secret"}, "Zx81kQp0vLr7TnW2yB5m"},
		{"letter-spaced passport", "p a s s p o r t number E12345678", []string{"id_number"}, "E12345678"},
		{"letter-spaced prose", "rate it a b c d or e, the password is expired", nil, ""},
		// One-time codes open an account as passwords do.
		{"one-time code", "Alice's one-time code is 839201", []string{"password"}, "839201"},
		{"otp colon", "OTP: 839201", []string{"password"}, "839201"},
		{"verification code", "verification code 839 201, valid 5 minutes", []string{"password"}, "839 201"},
		{"chinese verification code", "验证码 839201", []string{"password"}, "839201"},
		{"chinese verification code with a verb", "您的验证码是839201，请勿泄露", []string{"password"}, "839201"},
		{"otp prose", "the OTP was sent to her phone; verification code expired", nil, ""},
		{"chinese verification code prose", "验证码已发送，5分钟内有效", nil, ""},
		{"otp-labelled long number", "OTP 2024123456789 is an order", nil, ""},
		// Resident identity numbers: checksum, birth date, province.
		{"cn id", "身份证号 11010519491231002X 已核验", []string{"cn_id"}, "11010519491231002X"},
		{"cn id lowercase x", "ID 44030419900307123x", []string{"cn_id"}, "44030419900307123x"},
		{"cn id digit check", "id 310101198511110019", []string{"cn_id"}, "310101198511110019"},
		{"cn id grouped", "110105 19491231 002X", []string{"cn_id"}, "19491231"},
		{"cn id leap day", "11010120000229123X", []string{"cn_id"}, "11010120000229123X"},
		{"cn id bad checksum", "ref 110105194912310021", nil, ""},
		{"cn id bad date", "110105194913310028 is not a date", nil, ""},
		{"cn id bad province", "990105194912310021 has no province", nil, ""},
		// Bank cards: Luhn, 13–19 digits, separators.
		{"visa", "card 4111111111111111 expires soon", []string{"bank_card"}, "4111111111111111"},
		{"unionpay spaced", "卡号 6222 0212 3456 7890 128", []string{"bank_card"}, "6222 0212 3456 7890 128"},
		{"mastercard dashed", "MC 5555-5555-5555-4444.", []string{"bank_card"}, "5555-5555-5555-4444"},
		{"visa dotted", "card 4111.1111.1111.1111 on file", []string{"bank_card"}, "4111.1111.1111.1111"},
		{"mobile dotted", "phone 138.1234.5678 after six", []string{"phone"}, "138.1234.5678"},
		{"amounts and addresses with dots", "total 1234.56 CNY, server 192.168.100.101, v1.22.3", nil, ""},
		{"amex", "amex 378282246310005", []string{"bank_card"}, "378282246310005"},
		{"card bad luhn", "card 4111111111111112", nil, ""},
		{"order number", "order 1234567890123456 shipped", nil, ""},
		// Check digits make a card or ID number glued to letters a card or
		// ID still: masking a SKU that happens to pass is the safe mistake.
		{"card glued to letters", "SKU-A4111111111111111", []string{"bank_card"}, "4111111111111111"},
		{"card glued to a word before and after", "cardNumber4111111111111111EXP1227", []string{"bank_card"}, "4111111111111111"},
		{"cn id glued to letters after", "ID110101199003074514x", []string{"cn_id"}, "110101199003074514"},
		{"cn id after a look-alike letter", "passport \u0406D110101199003074514", []string{"cn_id"}, "110101199003074514"},
		{"card inside a longer number", "ref 94111111111111111 ok", nil, ""},
		{"mobile glued to a longer name", "TelePhone13812345678", []string{"phone"}, "13812345678"},
		{"mobile inside a word", "abc13812345678", nil, ""},
		{"card glued to its name", "Bob pays with VISA4111111111111111 usually", []string{"bank_card"}, "4111111111111111"},
		{"card in a key", "card_4111111111111111", []string{"bank_card"}, "4111111111111111"},
		{"cn id glued to its name", "Bob passport file ID110101199003074514 in the folder", []string{"cn_id"}, "110101199003074514"},
		{"cn id in a key", "id_110101199003074514", []string{"cn_id"}, "110101199003074514"},
		{"mobile glued to its name", "Bob mobile is cn13812345678 for urgent calls", []string{"phone"}, "13812345678"},
		{"mobile in a key", "x_13812345678", []string{"phone"}, "13812345678"},
		// Phones: Chinese mobiles and international numbers.
		{"cn mobile", "call 13812345678 after 6pm", []string{"phone"}, "13812345678"},
		{"cn mobile +86 grouped", "电话 +86 138 1234 5678", []string{"phone"}, "138 1234 5678"},
		{"cn mobile dashed", "手机：139-1234-5678", []string{"phone"}, "139-1234-5678"},
		{"international", "reach him at +1 415 555 2671", []string{"phone"}, "+1 415 555 2671"},
		{"international uk", "office +44 20 7946 0958", []string{"phone"}, "+44 20 7946 0958"},
		{"landline", "座机 010-62345678", []string{"phone"}, "010-62345678"},
		{"order id with mobile digits", "order ORD13812345678 is late", nil, ""},
		{"amount", "budget 150000 yuan for 2026", nil, ""},
		{"date", "delivery on 2026-03-01", nil, ""},
		{"too short", "room 12345", nil, ""},
		// E-mail addresses.
		{"email", "write to alice.wong+crm@example.co.uk today", []string{"email"}, "alice.wong+crm@example.co.uk"},
		{"email in chinese", "邮箱是zhang_san@qq.com。", []string{"email"}, "zhang_san@qq.com"},
		{"at sign", "meet @ the office at 5", nil, ""},
		{"handle", "twitter @alice_w", nil, ""},
		// Health terms.
		{"health en", "Alice has type 2 diabetes and avoids sugar", []string{"health"}, "diabetes"},
		{"health en allergy", "Bob is allergic to peanuts", []string{"health"}, "allergic"},
		{"health zh", "用户患有高血压，需要低盐饮食", []string{"health"}, "高血压"},
		{"health zh pregnancy", "她怀孕了，下个月休假", []string{"health"}, "怀孕"},
		{"no health", "Alice prefers short answers and ships to Berlin", nil, ""},
		{"no health zh", "用户喜欢简短的回答", nil, ""},
		// Full-width forms (as Chinese input methods type them) and
		// invisible characters between the characters of a value.
		{"full-width cn id", "身份证号 １１０１０５１９４９１２３１００２Ｘ 已核验", []string{"cn_id"}, "１１０１０５１９４９１２３１００２Ｘ"},
		{"cn id with zero-width spaces", "ID 110105\u200b19491231\u200b002X", []string{"cn_id"}, "19491231"},
		{"full-width mobile", "call １３８１２３４５６７８ after 6pm", []string{"phone"}, "１３８１２３４５６７８"},
		{"full-width email", "邮箱 ａｌｉｃｅ＠ｅｘａｍｐｌｅ．ｃｏｍ", []string{"email"}, "ａｌｉｃｅ＠ｅｘａｍｐｌｅ"},
		{"card with zero-width spaces", "card 4111\u200b1111\u200b1111\u200b1111 expires", []string{"bank_card"}, "1111\u200b1111"},
		{"password with a zero-width joiner", "her wifi pass\u200dword is Tr0ub4dor&3", []string{"password"}, "Tr0ub4dor&3"},
		{"full-width password", "her ｐａｓｓｗｏｒｄ is Tr0ub4dor&3", []string{"password"}, "Tr0ub4dor&3"},
		{"aws key with a zero-width space", "AWS key AKIA\u200bIOSFODNN7EXAMPLE in the config", []string{"secret"}, "IOSFODNN7EXAMPLE"},
		{"full-width prose", "Ａｌｉｃｅ prefers ｓｈｏｒｔ answers", nil, ""},
		// Digits of other scripts, and superscript and circled digits, are
		// read as the digits they show, under the same length and check
		// digit rules.
		{"arabic-indic card", "card ٤١١١١١١١١١١١١١١١", []string{"bank_card"}, "١١١١١١"},
		{"persian card", "کارت ۴۱۱۱ ۱۱۱۱ ۱۱۱۱ ۱۱۱۱", []string{"bank_card"}, "۱۱۱۱ ۱۱۱۱"},
		{"devanagari card", "card ४१११११११११११११११", []string{"bank_card"}, "११११११"},
		{"mathematical bold card", "card 𝟒𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏", []string{"bank_card"}, "𝟏𝟏𝟏𝟏"},
		{"circled card", "card ④①①①①①①①①①①①①①①①", []string{"bank_card"}, "①①①①"},
		{"dingbat card", "card ❹❶❶❶ ❶❶❶❶ ❶❶❶❶ ❶❶❶❶", []string{"bank_card"}, "❶❶❶❶"},
		{"arabic-indic cn id", "ID ١١٠١٠١١٩٩٠٠٣٠٧٤٥١٤", []string{"cn_id"}, "١٩٩٠٠٣٠٧"},
		{"superscript mobile", "phone ¹³⁹¹²³⁴⁵⁶⁷⁸", []string{"phone"}, "¹²³⁴⁵⁶⁷⁸"},
		{"subscript mobile", "phone ₁₃₉₁₂₃₄₅₆₇₈", []string{"phone"}, "₁₂₃₄₅₆₇₈"},
		{"arabic-indic mobile +86", "phone +٨٦ ١٣٩١٢٣٤٥٦٧٨", []string{"phone"}, "١٣٩١٢٣٤٥٦٧٨"},
		{"card with combining accents", "card 4\u03011\u030111111111111111", []string{"bank_card"}, "1\u03011111"},
		{"card in keycaps", "card 4\ufe0f\u20e31\ufe0f\u20e31\ufe0f\u20e31\ufe0f\u20e3 1111 1111 1111", []string{"bank_card"}, "1111 1111"},
		{"card struck through", "card 4\u03361\u03361\u03361\u0336111111111111", []string{"bank_card"}, "111111111111"},
		{"password with a combining accent", "her wifi pass\u0301word is Tr0ub4dor&3", []string{"password"}, "Tr0ub4dor&3"},
		{"decomposed accents and numbers", "Cafe\u0301 Mu\u0308ller, room 12345, since 2019", nil, ""},
		{"card under a right-to-left override", "card \u202e1111111111111114\u202c", []string{"bank_card"}, "1111111111111114"},
		{"cn id under an override", "ID \u202e415470300991101011\u202c", []string{"cn_id"}, "415470300991101011"},
		{"mobile under an override", "phone \u202e87654321931\u202c, after six", []string{"phone"}, "87654321931"},
		{"override to the end of the line", "card \u202e1111 1111 1111 1114\nthanks", []string{"bank_card"}, "1111 1114"},
		{"overridden prose", "she says \u202eliame yb ton\u202c, call her", nil, ""},
		{"plain digits after an override", "ref \u202e12\u202c 87654321931", nil, ""},
		{"override within an override", "card \u202e11111111\u202e1111\u202c1114\u202c", []string{"bank_card"}, "1114"},
		{"overridden number valid neither way", "ref \u202e1234567890123456\u202c", nil, ""},
		{"email with cyrillic letters", "mail bоb.smith@example.cоm", []string{"email"}, "smith@example"},
		{"email with greek letters", "write to bοb@exαmple.com", []string{"email"}, "@ex"},
		{"email all cyrillic before its @", "mail оса@example.com", []string{"email"}, "@example.com"},
		{"password with a cyrillic letter", "her wifi pаssword is Tr0ub4dor&3", []string{"password"}, "Tr0ub4dor&3"},
		{"russian prose", "Сосед Саша купил ноутбук за 1500 рублей, пароль не сказал", nil, ""},
		{"greek prose", "Ο καιρός είναι καλός, ΚΑΛΗΜΕΡΑ", nil, ""},
		{"mobile glued to a russian word", "звоните на мобильный телефона13812345678", []string{"phone"}, "13812345678"},
		{"arabic-indic card bad luhn", "card ٤١١١١١١١١١١١١١١٢", nil, ""},
		{"arabic-indic cn id bad checksum", "ID ١١٠١٠١١٩٩٠٠٣٠٧٤٥١٥", nil, ""},
		{"arabic date and amount", "موعد التسليم ٢٠٢٤/٠٣/٠١ والمبلغ ١٥٠٠ ريال", nil, ""},
		{"devanagari short numbers", "कमरा १२३४५, पिन कोड ११०००१", nil, ""},
		{"footnote and formula", "E = mc² ¹ see H₂O", nil, ""},
		// Mneme's own API keys, as issued (hex) and as seeded (letters and
		// digits); a name built like one is not a key.
		{"mneme key seeded", "here is my key mn_acme_4fB6ixukVUpW3M6bXTGZX7So thanks", []string{"secret"}, "4fB6ixukVUpW3M6bXTGZX7So"},
		{"mneme key issued", "MNEME_API_KEY=mn_globex_9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822c", []string{"secret"}, "9f86d081884c7d659a2feaa0c55ad015"},
		{"mneme key tenant with punctuation", "key mn_t-1.a:b@c_Zx81kQp0vLr7TnW2yB5m", []string{"secret"}, "Zx81kQp0vLr7TnW2yB5m"},
		{"mneme key in chinese", "我的密钥mn_acme_bf3FB9cKSydbSS66yqJ9aQms别外传", []string{"secret"}, "bf3FB9cKSydbSS66yqJ9aQms"},
		{"mneme key split by a space", "my key is mn_acme_ bf3FB9cKSydbSS66yqJ9aQms", []string{"secret"}, "bf3FB9cKSydbSS66yqJ9aQms"},
		{"mneme key split after mn_", "key: mn_ acme_bf3FB9cKSydbSS66yqJ9aQms", []string{"secret"}, "bf3FB9cKSydbSS66yqJ9aQms"},
		{"mneme key over two lines", "key mn_acme_\nbf3FB9cKSydbSS66yqJ9aQms", []string{"secret"}, "bf3FB9cKSydbSS66yqJ9aQms"},
		{"mneme-like name", "the table mn_acme_customer_preferences holds them", nil, ""},
		{"mneme-like name split by a space", "the table mn_acme_ customer_preferences holds them", nil, ""},
		{"mneme-like short", "see mn_acme_config2024 for the settings", nil, ""},
		// ID numbers grouped by dashes or broken over lines; a card number
		// wrapped over two lines, but not a column of numbers.
		{"cn id dashed", "ID 110101-19900307-4514", []string{"cn_id"}, "19900307"},
		{"cn id spaced", "his ID is 110101 19900307 4514", []string{"cn_id"}, "19900307"},
		{"cn id over two lines", "身份证号\n110101\n19900307\n4514", []string{"cn_id"}, "19900307"},
		{"cn id dashed bad checksum", "ID 110101-19900307-4515", nil, ""},
		{"dashed order number", "order SO-1007-20240301-0042 shipped", nil, ""},
		{"card over two lines", "card 41111111\n11111111", []string{"bank_card"}, "41111111"},
		{"card grouped over two lines", "card 4111 1111\r\n  1111 1111 on file", []string{"bank_card"}, "4111 1111"},
		{"card then a numbered line", "card 4111111111111111\n2. call back", []string{"bank_card"}, "4111111111111111"},
		{"dates one a line", "deliveries:\n20240101\n20240210\n20240301", nil, ""},
		{"amounts one a line", "totals\n1500\n3000.50\n4500", nil, ""},
		{"order numbers one a line", "SO-1007\nSO-1008\n1234567890123456", nil, ""},
		// URL-encoded values.
		{"card url-encoded spaces", "card=4111%201111%201111%201111&exp=12", []string{"bank_card"}, "4111%201111"},
		{"card url-encoded dashes", "card 4111%2D1111%2D1111%2D1111", []string{"bank_card"}, "1111%2D1111"},
		{"card url-encoded digits", "card %34%31%31%31%31%31%31%31%31%31%31%31%31%31%31%31", []string{"bank_card"}, "%31%31%31"},
		{"email url-encoded", "mail bob.smith%40example.com", []string{"email"}, "bob.smith%40example"},
		{"password url-encoded", "login?user=bob&password%3DHunter2", []string{"password"}, "Hunter2"},
		{"percent in prose", "sales grew 15%2024 over 2023, a 20% rise", nil, ""},
		// E-mail addresses with '@' and dots spelled out.
		{"email at dot", "mail bob.smith at example dot com", []string{"email"}, "bob.smith at example"},
		{"email bracketed", "write to bob(at)example(dot)com", []string{"email"}, "bob(at)example"},
		{"email square brackets", "bob [at] example [dot] co [dot] uk", []string{"email"}, "bob [at] example"},
		{"email at with dots", "Bob's e-mail is bob at example.com", []string{"email"}, "bob at example"},
		{"email at dot in chinese", "邮箱是 zhang_san AT qq DOT com", []string{"email"}, "zhang_san AT qq"},
		{"email at dot with a cue", "contact Bob at bob at example dot com", []string{"email"}, "bob at example"},
		{"email at dot with no cue", "Bob said bob.smith at example dot com is best", []string{"email"}, "bob.smith at example"},
		{"dot com bubble", "he worked at the dot com bubble startups", nil, ""},
		{"shop at a site", "Bob likes to shop at amazon dot com on Fridays", nil, ""},
		{"email me at a site", "email me at example.com when it ships", nil, ""},
		{"meet at a place", "meet at the office dot at 5", nil, ""},
		{"room at a host", "the printer in room 12 at hq dot local", nil, ""},
		{"handle and place", "ping @bob at standup", nil, ""},
		// Passphrases and quoted passwords.
		{"passphrase quoted", `his passphrase is "correct horse battery staple"`, []string{"password"}, "horse battery staple"},
		{"passphrase colon", "passphrase: correct horse battery staple, keep it safe", []string{"password"}, "horse battery staple"},
		{"password quoted with spaces", "password: 'my dog rex'", []string{"password"}, "dog rex"},
		{"chinese passphrase quoted", "他的密码是“芝麻开门”，别说出去", []string{"password"}, "芝麻开门"},
		{"chinese passphrase kouling", "口令是「天王盖地虎」", []string{"password"}, "天王盖地虎"},
		{"chinese passphrase ascii words", "密码是 correct horse battery staple", []string{"password"}, "battery staple"},
		{"passphrase quoted with no verb", "his passphrase 'open sesame now' works", []string{"password"}, "sesame now"},
		{"password quoted with a digit", `her password is "Sunny Day 42"`, []string{"password"}, "Sunny Day"},
		{"pin quoted", `pin: "0000"`, []string{"password"}, "0000"},
		{"pin in prose", `drop a pin "Home-2" on the map`, nil, ""},
		{"passphrase quotes one word", `the passphrase is "required"`, nil, ""},
		{"password word before a quoted label", `click the password "reset" link`, nil, ""},
		{"password quotes a message", `the app says the password is "invalid"`, nil, ""},
		{"password quotes a phrase", `the screen said password is "too short"`, nil, ""},
		{"passphrase prose", "the passphrase is required at login", nil, ""},
		{"chinese password question", "他问密码是什么", nil, ""},
		{"chinese drill command", "教官喊口令，大家立正", nil, ""},
		// A mobile number's digits that go on past a dash or a dot are a
		// code; a landline keeps its extension.
		{"dashed product code", "part 138-1234-5678-00 in stock", nil, ""},
		{"dotted product code", "SKU 20.139.1234.5678", nil, ""},
		{"landline with its extension", "座机 010-62345678-8001", []string{"phone"}, "62345678"},
		{"mobile before a full stop", "call 139-1234-5678.", []string{"phone"}, "1234-5678"},
		// Numbers spelled in Chinese numerals, as they are read out, and
		// parenthesised or full-stop digits.
		{"mobile in chinese numerals", "手机号一三八一二三四五六七八", []string{"phone"}, "一二三四五六七八"},
		{"mobile read aloud", "电话幺三八 幺二三四 五六七八", []string{"phone"}, "幺二三四"},
		{"mobile in capital numerals", "电话壹叁捌壹贰叁肆伍陆柒捌", []string{"phone"}, "贰叁肆伍"},
		{"card in chinese numerals", "卡号四一一一一一一一一一一一一一一一", []string{"bank_card"}, "一一一一一一"},
		{"chinese numerals in prose", "一五一十地说，三三两两，星期一二三四五都上班，第一二三名", nil, ""},
		{"chinese numerals too few", "编号一二三四五六", nil, ""},
		{"parenthesised card", "card ⑷⑴⑴⑴⑴⑴⑴⑴⑴⑴⑴⑴⑴⑴⑴⑴", []string{"bank_card"}, "⑴⑴⑴⑴"},
		{"full-stop card", "card ⒋⒈⒈⒈⒈⒈⒈⒈⒈⒈⒈⒈⒈⒈⒈⒈", []string{"bank_card"}, "⒈⒈⒈⒈"},
		// Keys and addresses written to slip past a reader.
		{"mneme key after two spaces", "my key is mn_acme_  bf3FB9cKSydbSS66yqJ9aQms", []string{"secret"}, "bf3FB9cKSydbSS66yqJ9aQms"},
		{"mneme key split inside the secret", "my key is mn_acme_bf3FB9cKSydb SS66yqJ9aQms ok", []string{"secret"}, "SS66yqJ9aQms"},
		{"issued key split in two", "mn_globex_9f86d081884c7d659a2feaa0  c55ad015a3bf4f1b2b0b822c", []string{"secret"}, "c55ad015a3bf4f1b2b0b822c"},
		{"mneme-like name and words", "the table mn_acme_ customer prefs holds them", nil, ""},
		{"half a mneme key", "Note: my API key is mn_acme_m3tVzj56am8R", []string{"secret"}, "m3tVzj56am8R"},
		{"mneme key split by a line break", "my key mn_acme_bf3FB9cKSydb\nSS66yqJ9aQms", []string{"secret"}, "SS66yqJ9aQms"},
		{"mneme key split by CRLF", "my key mn_acme_bf3FB9cKSydb\r\nSS66yqJ9aQms", []string{"secret"}, "SS66yqJ9aQms"},
		{"mneme key over three lines", "my key mn_acme_bf3FB9cK\nSydbSS66\nyqJ9aQms", []string{"secret"}, "yqJ9aQms"},
		{"mneme key split by a line separator", "my key mn_acme_bf3FB9cKSydb\u2028SS66yqJ9aQms", []string{"secret"}, "SS66yqJ9aQms"},
		{"mneme key spaced around its underscores", "my key mn _ acme _ bf3FB9cKSydbSS66yqJ9aQms", []string{"secret"}, "bf3FB9cKSydbSS66yqJ9aQms"},
		{"mneme key with dashes", "my key mn-acme-bf3FB9cKSydbSS66yqJ9aQms", []string{"secret"}, "bf3FB9cKSydbSS66yqJ9aQms"},
		{"mneme key letter-spaced", "my key m n _ a c m e _ b f 3 F B 9 c K S y d b S S 6 6 y q J 9 a Q m s ok", []string{"secret"}, "y q J 9 a Q m s"},
		{"letter-spaced prose", "spell it: a b c d e f g h i j k l m n o p q r s t u v w x y z", nil, ""},
		{"mn- words", "the mn-acme-team meets on mondays", nil, ""},
		{"internationalised email", "почта иван@пример.рф", []string{"email"}, "иван@пример"},
		{"email spelled in chinese", "邮箱 bob艾特example点com", []string{"email"}, "example"},
		{"chinese at a person", "记得艾特小王一下，点开看看", nil, ""},
		{"email spelled in traditional", "信箱 bob艾特example點com", []string{"email"}, "example"},
		{"email with the taiwanese at", "信箱 bob小老鼠example點com點tw", []string{"email"}, "example"},
		{"email with 圈a", "邮箱 bob圈aexample点com", []string{"email"}, "example"},
		{"mobile spaced out", "手机 1 3 8 1 2 3 4 5 6 7 8 谢谢", []string{"phone"}, "1 2 3 4 5 6 7 8"},
		{"mobile in numerals spaced out", "手机 一 三 八 一 二 三 四 五 六 七 八", []string{"phone"}, "二 三 四 五 六"},
		{"card spaced out", "card 4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 ok", []string{"bank_card"}, "1 1 1 1 1 1 1 1"},
		{"mobile with 两", "手机幺三八幺两三四五六七八", []string{"phone"}, "两三四五六七八"},
		{"spaced digits that are no number", "scores 1 2 3 4 5 6 7 8 9 in a row", nil, ""},
		{"两 in prose", "三三两两，两两相望", nil, ""},
		// Credentials under short or everyday names, and a user name and
		// password given together: the value must look made up.
		{"pw colon", "Bob says pw: Tr0ub4dor&3", []string{"password"}, "Tr0ub4dor&3"},
		{"pw is", "his pw is Tr0ub4dor&3", []string{"password"}, "Tr0ub4dor&3"},
		{"pass colon", "wifi pass: hunter2x!", []string{"password"}, "hunter2x!"},
		{"pass equals", "pass=P@ssword", []string{"password"}, "P@ssword"},
		{"secret colon", "Bob says secret: Tr0ub4dor&3", []string{"secret"}, "Tr0ub4dor&3"},
		{"login pair", "login bob / Tr0ub4dor&3", []string{"password"}, "Tr0ub4dor&3"},
		{"login pair with a colon", "login: bob/hunter2x", []string{"password"}, "hunter2x"},
		{"credentials pair", "credentials: bob:Tr0ub4dor&3", []string{"password"}, "Tr0ub4dor&3"},
		{"chinese login pair", "登录 bob / Tr0ub4dor&3，别外传", []string{"password"}, "Tr0ub4dor&3"},
		{"chinese account and password pair", "账号密码：bob/Tr0ub4dor&3", []string{"password"}, "Tr0ub4dor&3"},
		{"chinese credentials pair", "凭据是 bob:hunter2x!", []string{"password"}, "hunter2x!"},
		{"pass in a recipe", "pass: the salt, then the pepper", nil, ""},
		{"pass a word", "pass: onions through the sieve", nil, ""},
		{"boarding pass", "boarding pass: 12A-B7F9, gate 4", nil, ""},
		{"secret none", "secret: none, she shares everything", nil, ""},
		{"secret a word", "the secret: patience", nil, ""},
		{"login page", "Bob could not open the login page / settings since Monday", nil, ""},
		{"login time", "login time: 9:30am every day", nil, ""},
		{"login link", "login: https://portal.example.com/app2", nil, ""},
		{"login and logout", "the login/logout flow is slow", nil, ""},
		{"chinese login page", "登录页面/首页打不开", nil, ""},
		{"chinese login date", "登录 2026/03/01", nil, ""},
		// Social security and passport numbers, when a label names them.
		{"ssn", "Bob's SSN 219-09-9999 is on file", []string{"id_number"}, "219-09-9999"},
		{"ssn is", "my ssn is 219 09 9999", []string{"id_number"}, "219 09 9999"},
		{"social security number", "social security number 536-22-1234", []string{"id_number"}, "536-22-1234"},
		{"social security number colon", "Social Security No.: 536221234", []string{"id_number"}, "536221234"},
		{"chinese ssn", "他的美国社会安全号码是 536-22-1234", []string{"id_number"}, "536-22-1234"},
		{"ssn format", "SSN format is XXX-XX-XXXX", nil, ""},
		{"ssn placeholder", "SSN 000-00-0000 is a placeholder", nil, ""},
		{"ssn last digits", "SSN ends in 9999", nil, ""},
		{"ssn-shaped part code", "part 219-09-9999 in stock", nil, ""},
		{"passport number", "passport number E12345678", []string{"id_number"}, "E12345678"},
		{"passport no", "Passport No. G87654321, expires 2030", []string{"id_number"}, "G87654321"},
		{"passport digits", "her passport is 123456789", []string{"id_number"}, "123456789"},
		{"chinese passport number", "护照号 E12345678", []string{"id_number"}, "E12345678"},
		{"chinese passport number colon", "护照号码：E12345678，下月到期", []string{"id_number"}, "E12345678"},
		{"passport photo", "Bob needs a passport photo by 2026-03-01", nil, ""},
		{"passport expiry", "passport expires 2027-05-01", nil, ""},
		{"chinese passport photo", "护照照片下周补交，订单 SO-20240301", nil, ""},
		{"chinese passport expiry", "护照2027年到期", nil, ""},
		{"passport-shaped reference", "ticket E12345678 was closed", nil, ""},
		// ID numbers in groups of any sizes are read joined.
		{"cn id in fours", "Alice 的身份证号 1101 0519 4912 3100 2X", []string{"cn_id"}, "3100"},
		{"cn id in fours in english", "Alice's ID number 1101 0519 4912 3100 2X", []string{"cn_id"}, "4912"},
		{"cn id in fours unlabelled", "1101 0519 4912 3100 2X", []string{"cn_id"}, "4912"},
		{"cn id in fours with dashes", "ref 1101-0519-4912-3100-2X ok", []string{"cn_id"}, "4912"},
		{"cn id in threes", "他的号码 110 105 194 912 310 02X", []string{"cn_id"}, "194"},
		{"cn id check digit apart", "1101 0519 4912 3100 2 X", []string{"cn_id"}, "4912"},
		{"cn id in fours after a number", "ticket 7 1101 0519 4912 3100 2X", []string{"cn_id"}, "4912"},
		{"labelled cn id in fours bad check digit", "身份证号 1101 0119 9003 0777 77", []string{"cn_id"}, "9003"},
		{"cn id in fours bad check digit", "order 1101 0519 4912 3100 21 shipped", nil, ""},
		{"order number in fours", "order 1234 5678 9012 3456 78 shipped", nil, ""},
		{"grouped order number of another length", "订单号 1101 0519 4912 3100 2 件", nil, ""},
		{"dates in a row", "visits 2024-01-15 2024-02-20 2024-03-01 2024-04-11", nil, ""},
		{"phone in groups", "call +86 138 1234 5678 after six", []string{"phone"}, "1234 5678"},
		{"passport in groups", "Alice's passport number E 1234 5678", []string{"id_number"}, "1234 5678"},
		{"passport in groups after a verb", "her passport is G 8765 4321, expires 2030", []string{"id_number"}, "8765 4321"},
		{"chinese passport in groups", "护照号 E 1234 5678", []string{"id_number"}, "1234 5678"},
		{"passport then another number", "passport number E12345678 1234 on the form", []string{"id_number"}, "E12345678"},
		{"passport then a date", "passport 2027 05 01 renewal", nil, ""},
		{"passport then a few digits", "passport is 12 34", nil, ""},
		// Driver's licence numbers are named.
		{"driver's licence number", "Bob's driver's licence number is D123-4567-8901", []string{"id_number"}, "4567"},
		{"driver's license number", "driver's license number: 12345678", []string{"id_number"}, "12345678"},
		{"driving licence", "driving licence no. MORGA753116SM9IJ 35", []string{"id_number"}, "MORGA753116SM9IJ"},
		{"chinese driving licence", "驾驶证号 320102880512345", []string{"id_number"}, "320102880512345"},
		{"chinese driving licence with a verb", "他的驾照号是 4401 2345 6789", []string{"id_number"}, "2345"},
		{"driver's licence expiry", "driver's license expires 2027-05-01", nil, ""},
		{"driver's licence points", "driver's licence has 3 points left", nil, ""},
		{"chinese driving licence expiry", "驾驶证2027年到期", nil, ""},
		{"driver's licence date", "driver's licence 2027-05-01", nil, ""},
		// A labelled resident identity number is one whatever its check
		// digit; an unlabelled one needs it.
		{"labelled cn id bad check digit", "身份证号 110101199003077777", []string{"cn_id"}, "110101199003077777"},
		{"labelled cn id with 身份证", "身份证：110105194912310021", []string{"cn_id"}, "110105194912310021"},
		{"labelled cn id with a verb", "他的身份证号码是110101199003077777", []string{"cn_id"}, "110101199003077777"},
		{"labelled cn id in english", "ID card number 110101199003077777", []string{"cn_id"}, "110101199003077777"},
		{"unlabelled cn id bad check digit", "order 110101199003077777 shipped", nil, ""},
		{"labelled cn id too short", "身份证号 11010119900307777", nil, ""},
		{"id card prose", "身份证复印件已收到，订单号 20240301123456", nil, ""},
		// Everyday numbers stay.
		{"order, phone-free amounts and dates", "order SO-1007 paid 1,500 CNY on 2026-03-01, 3 passes left", nil, ""},
		{"chinese amounts and dates", "订单 SO-1007 于 2026年3月1日 付款 1500 元，通行证 2 张", nil, ""},
		// Several at once.
		{"mixed", "Alice: 13812345678, alice@example.com, card 4111 1111 1111 1111", []string{"bank_card", "email", "phone"}, "4111 1111 1111 1111"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := guard.Scan(tc.text)
			if diff := cmp.Diff(tc.want, guard.KindsOf(fs)); diff != "" {
				t.Errorf("kinds of %q (-want +got):\n%s", tc.text, diff)
			}
			if tc.raw == "" {
				return
			}
			masked := guard.Redact(tc.text, fs, guard.Kinds)
			if strings.Contains(masked, tc.raw) {
				t.Errorf("redacted %q still holds %q", masked, tc.raw)
			}
			if !strings.Contains(masked, "[REDACTED:") {
				t.Errorf("redacted %q has no mask", masked)
			}
		})
	}
}

func TestValidCNID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"11010519491231002X", true},
		{"11010519491231002x", true},
		{"44030419900307123X", true},
		{"310101198511110019", true},
		{"110105194912310021", false}, // wrong check character
		{"310101198511110018", false}, // wrong check digit
		{"11010519491331002X", false}, // month 13
		{"11010119000229123X", false}, // 1900 was not a leap year
		{"99010519491231002X", false}, // no such province
		{"11010530001231002X", false}, // born in the future
		{"1101051949123100", false},   // too short
		{"1101051949123100AX", false}, // letters
	}
	for _, tc := range tests {
		if got := guard.ValidCNID(tc.id); got != tc.want {
			t.Errorf("ValidCNID(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}

func TestValidCard(t *testing.T) {
	tests := []struct {
		digits string
		want   bool
	}{
		{"4111111111111111", true},
		{"5555555555554444", true},
		{"378282246310005", true},
		{"6222021234567890128", true},
		{"6217001234567893", true},
		{"4111111111111112", false},     // Luhn fails
		{"6222021234567890127", false},  // Luhn fails
		{"1234567890123452", false},     // no issuer starts with 1
		{"411111111111", false},         // 12 digits
		{"41111111111111111111", false}, // 20 digits
	}
	for _, tc := range tests {
		if got := guard.ValidCard(tc.digits); got != tc.want {
			t.Errorf("ValidCard(%q) = %v, want %v", tc.digits, got, tc.want)
		}
	}
}

// TestRedactKeepsTheText: a value found in its full-width form is masked
// where it stands, and the text around it, full-width or not, stays as
// written.
func TestRedactKeepsTheText(t *testing.T) {
	text := "Ａｌｉｃｅ：call １３８\u200b１２３４５６７８ after ６ｐｍ"
	got := guard.Redact(text, guard.Scan(text), guard.Kinds)
	if want := "Ａｌｉｃｅ：call [REDACTED:phone] after ６ｐｍ"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
}

// TestRedactURLEncoded: a value found through its URL escapes is masked
// escapes and all, and the escapes around it stay.
func TestRedactURLEncoded(t *testing.T) {
	text := "card=4111%201111%201111%201111&exp=12%2F27&note=a%2Fb"
	got := guard.Redact(text, guard.Scan(text), guard.Kinds)
	if want := "card=[REDACTED:bank_card]&exp=[REDACTED:bank_card]&note=a%2Fb"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
}

// TestRedactSpans: a value found in the view is masked over the whole of
// its span in the text, and the text around it stays as written.
func TestRedactSpans(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"arabic-indic card", "رقم ٤١١١ ١١١١ ١١١١ ١١١١ شكرا", "رقم [REDACTED:bank_card] شكرا"},
		{"marks after the last digit", "card 4\u0301111111111111111\u0301 ok", "card [REDACTED:bank_card] ok"},
		{"card under an override", "card \u202e1111111111111114\u202c ok", "card [REDACTED:bank_card] ok"},
		{"overridden words keep their override", "\u202eliame yb ton\u202c 13812345678", "\u202eliame yb ton\u202c [REDACTED:phone]"},
		{"email with a cyrillic letter", "mail bоb.smith@example.cоm ok", "mail [REDACTED:email] ok"},
		{"mathematical bold mobile", "call 𝟏𝟑𝟖𝟏𝟐𝟑𝟒𝟓𝟔𝟕𝟖 at 𝟔", "call [REDACTED:phone] at 𝟔"},
		{"card split by hangul fillers", "card 4111\u31641111\u115f1111\uffa01111 ok", "card [REDACTED:bank_card] ok"},
		{"mobile split by a reserved ignorable", "call 138\u20651234\U000E00805678 now", "call [REDACTED:phone] now"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := guard.Masked(tc.text); got != tc.want {
				t.Errorf("Masked(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestRedactOnlyChosenKinds(t *testing.T) {
	text := "Alice 13812345678 alice@example.com"
	fs := guard.Scan(text)
	got := guard.Redact(text, fs, []string{guard.KindPhone})
	want := "Alice [REDACTED:phone] alice@example.com"
	if got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	if !slices.Equal(guard.KindsOf(fs), []string{"email", "phone"}) {
		t.Errorf("kinds = %v", guard.KindsOf(fs))
	}
}

// TestPasswordMaskedWhole: an unquoted password runs to the next space,
// whatever punctuation it ends with, the full stop or comma that may be
// the sentence's too; prose after a password's name stays.
func TestPasswordMaskedWhole(t *testing.T) {
	tests := []struct{ text, want string }{
		{"pw: hunter2x!", "pw: [REDACTED:password]"},
		{"pw: Tr0ub4dor&3!!", "pw: [REDACTED:password]"},
		{"password: Sunflower#2024!", "password: [REDACTED:password]"},
		{"her password is Sunflower#2024?", "her password is [REDACTED:password]"},
		{"password: hunter2. Then she left", "password: [REDACTED:password] Then she left"},
		{"pw: hunter2x, then call", "pw: [REDACTED:password] then call"},
		{"pw: hunter2x;ok", "pw: [REDACTED:password]"},
		{"my passwd hunter2!, don't tell", "my passwd [REDACTED:password] don't tell"},
		{`my passwd "hunter2x!"`, `my passwd "[REDACTED:password]"`},
		{`{"password":"hunter2x!","user":"bob"}`, `{"password":"[REDACTED:password]","user":"bob"}`},
		{"pass: hunter2x!", "pass: [REDACTED:password]"},
		{"wifi pass: hunter2x!.", "wifi pass: [REDACTED:password]"},
		{"secret: Tr0ub4dor&3!", "secret: [REDACTED:secret]"},
		{"login bob / Tr0ub4dor&3!, thanks", "login bob / [REDACTED:password] thanks"},
		{"credentials: bob:hunter2x!!", "credentials: bob:[REDACTED:password]"},
		{"passphrase: correct horse battery staple!", "passphrase: [REDACTED:password]"},
		{"密码: abc123!@#，别忘了", "密码: [REDACTED:password]，别忘了"},
		{"pw: hunter2x，别忘了", "pw: [REDACTED:password]，别忘了"},
		{"Alice's password is expired.", "Alice's password is expired."},
		{"the password was reset, she says", "the password was reset, she says"},
		{"secret: none, she shares everything", "secret: none, she shares everything"},
		{"pass: the salt, then the pepper", "pass: the salt, then the pepper"},
		{"password: ...", "password: ..."},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			if got := guard.Masked(tc.text); got != tc.want {
				t.Errorf("Masked(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

// TestBankDetails: an IBAN, whole or in groups, and a card's labelled
// security code and expiry date are masked as a card is; order and invoice
// numbers, a date without a label and an expiry with no card near it stay.
func TestBankDetails(t *testing.T) {
	tests := []struct{ text, want string }{
		{"Alice IBAN DE89370400440532013000", "Alice IBAN [REDACTED:bank_card]"},
		{"IBAN: DE89 3704 0044 0532 0130 00, thanks", "IBAN: [REDACTED:bank_card], thanks"},
		{"pay to GB82WEST12345698765432.", "pay to [REDACTED:bank_card]."},
		{"iban gb82 west 1234 5698 7654 32 please", "iban [REDACTED:bank_card] please"},
		{"NL91ABNA0417164300 and FR1420041010050500013M02606", "[REDACTED:bank_card] and [REDACTED:bank_card]"},
		{"账户 DE89370400440532013000 收款", "账户 [REDACTED:bank_card] 收款"},
		{"card 4111111111111111 exp 12/27 cvv 123", "card [REDACTED:bank_card] exp [REDACTED:bank_card] cvv [REDACTED:bank_card]"},
		{"CVV2: 123", "CVV2: [REDACTED:bank_card]"},
		{"the cvc is 4567.", "the cvc is [REDACTED:bank_card]."},
		{"security code: 321", "security code: [REDACTED:bank_card]"},
		{"有效期 12/27 安全码 123", "有效期 [REDACTED:bank_card] 安全码 [REDACTED:bank_card]"},
		{"信用卡有效期至 08/2029", "信用卡有效期至 [REDACTED:bank_card]"},
		{"Visa expires 12/2027", "Visa expires [REDACTED:bank_card]"},
		{"card ending 1111, valid thru 03-28", "card ending 1111, valid thru [REDACTED:bank_card]"},
		// Near misses.
		{"order SO-1007 shipped", "order SO-1007 shipped"},
		{"invoice INV-2024-0031 for 1,200 EUR", "invoice INV-2024-0031 for 1,200 EUR"},
		{"delivered 12/27 at noon", "delivered 12/27 at noon"},
		{"the milk exp 12/27", "the milk exp 12/27"},
		{"coupon expires 12/27", "coupon expires 12/27"},
		{"card expires 12/27/2026 for the event", "card expires 12/27/2026 for the event"},
		{"CVV is the code on the back", "CVV is the code on the back"},
		{"IBAN DE89370400440532013001 has a typo", "IBAN DE89370400440532013001 has a typo"},
		{"part DE12345678901234567890 in stock", "part DE12345678901234567890 in stock"},
		{"ref DE893704004405320130001 is longer", "ref DE893704004405320130001 is longer"},
		{"SKU AB12CD34EF56GH78", "SKU AB12CD34EF56GH78"},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			if got := guard.Masked(tc.text); got != tc.want {
				t.Errorf("Masked(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestValidIBAN(t *testing.T) {
	for iban, want := range map[string]bool{
		"DE89370400440532013000": true, "GB82WEST12345698765432": true, "gb82west12345698765432": true,
		"NO9386011117947": true, "DE89370400440532013001": false, "DE98370400440532013000": false,
		"DE89-370400440532013000": false, "DE8": false,
	} {
		if got := guard.ValidIBAN(iban); got != want {
			t.Errorf("ValidIBAN(%q) = %v, want %v", iban, got, want)
		}
	}
}
