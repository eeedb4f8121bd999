package redact

import (
	"strings"
	"testing"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

// kinds replaces each token in s by its kind alone, "[email:3f9a1c2b]" by
// "[email]", so that tables need not spell out HMACs.
func kinds(s string) string {
	return tokenPattern.ReplaceAllStringFunc(s, func(tok string) string {
		return tok[:strings.IndexByte(tok, ':')] + "]"
	})
}

type detectCase struct{ in, want string }

func runDetect(t *testing.T, cases []detectCase) {
	t.Helper()
	r := New(testKey)
	for _, c := range cases {
		if got := kinds(r.String(c.in)); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestEmail(t *testing.T) {
	runDetect(t, []detectCase{
		{"write to jane.doe@example.com today", "write to [email] today"},
		{"Jane.Doe+billing@Mail.Example.CO.UK", "[email]"},
		{"<j_smith-2@sub.dept.example.org>, (x@y.io).", "<[email]>, ([email])."},
		{"mailto:ops%team@acme-corp.io?subject=hi", "mailto:[email]?subject=hi"},
		{"連絡先はtaro.yamada@example.co.jpです", "連絡先は[email]です"},
		{`{"to":"a.b@example.com"}`, `{"to":"[email]"}`},
		{`escaped \u003cjohn@example.com\u003e and \njane@example.com`, `escaped \u003c[email]\u003e and \n[email]`},
		{"punycode user@xn--bcher-kva.example", "punycode [email]"},
		// Near misses.
		{"icon@2x.png and logo@3x.jpg", "icon@2x.png and logo@3x.jpg"},
		{"user@localhost, @handle, npm i @acme/widgets", "user@localhost, @handle, npm i @acme/widgets"},
		{"lodash@4.17.21 and name@123.45", "lodash@4.17.21 and name@123.45"},
		{"git@github.com:wardenhq/warden.git", "git@github.com:wardenhq/warden.git"},
		{"a@b", "a@b"},
		// Written out, with the at in brackets, in lower-case text (which
		// the pre-filter skipped), with periods or a spelled dot.
		{"mail jo(at)example.com please", "mail [email] please"},
		{"jo [at] example [dot] com", "[email]"},
		{"jo(at)example(dot)com", "[email]"},
		{"jo{at}example{dot}co{dot}uk, jo<at>example<dot>com", "[email], [email]"},
		{"jane.doe (at) mail.example.travel", "[email]"},
		{"jo@example dot com and jo @ example (dot) com", "[email] and [email]"},
		{"jo (at) example . com, jo@example . com", "[email], [email]"},
		{"jo AT example DOT com", "[email]"},
		{"jo at example dot com", "[email]"},
		{"jane.doe at example.com, jo42 at example.com", "[email], [email]"},
		// A plain word before a bare "at" and a domain with periods: an
		// address when the word is a name, the domain a mail provider's,
		// or an e-mail cue comes before it.
		{"john at gmail.com, peter at company.de", "[email], [email]"},
		{"jsmith at gmail.com", "[email]"},
		{"my email is jsmith at acme.io, contact: xyz at acme.io", "my email is [email], contact: [email]"},
		{"ana arroba correo punto es, jean arobase free point fr", "[email], [email]"},
		// Near misses: "at" as a preposition, a file name.
		{"meet at example.com's office", "meet at example.com's office"},
		{"meet at example.com today", "meet at example.com today"},
		{"lunch at noon.com, we are at acme.com, I work at google.com", "lunch at noon.com, we are at acme.com, I work at google.com"},
		{"the docs are available at docs.example.com", "the docs are available at docs.example.com"},
		{"look at this dot com bubble, find us at acme dot com", "look at this dot com bubble, find us at acme dot com"},
		{"jo(at)example.png and see (at) least 3 of them at home.com", "jo(at)example.png and see (at) least 3 of them at home.com"},
		{"available (at) amazon.com", "available (at) amazon.com"},
		{"write to support(at)acme. It works", "write to support(at)acme. It works"},
	})
}

func TestPhone(t *testing.T) {
	runDetect(t, []detectCase{
		{"call +1 (415) 555-0132 now", "call [phone] now"},
		{"415.555.0132 / 415-555-0132 / (415) 555-0132", "[phone] / [phone] / [phone]"},
		{"toll free 1-800-555-0199.", "toll free [phone]."},
		{"E.164: +14155550132", "E.164: [phone]"},
		{"London +44 20 7946 0958 or +44 (0)20 7946 0958", "London [phone] or [phone]"},
		{"UK 020 7946 0958, mobile 07700 900123", "UK [phone], mobile [phone]"},
		{"Berlin 0049 30 1234567 oder 030/1234567 oder +49 (0) 30 1234567", "Berlin [phone] oder [phone] oder [phone]"},
		{"Handy 0171 1234567", "Handy [phone]"},
		{"Paris 06 12 34 56 78 ou 06.12.34.56.78 ou 0612345678", "Paris [phone] ou [phone] ou [phone]"},
		{"+33 6 12 34 56 78", "[phone]"},
		{"Madrid +34 612 345 678, 612 34 56 78", "Madrid [phone], [phone]"},
		{"東京 03-1234-5678 携帯 090-1234-5678", "東京 [phone] 携帯 [phone]"},
		{"São Paulo (11) 91234-5678", "São Paulo [phone]"},
		{"Sydney (02) 9876 5432, 0412 345 678", "Sydney [phone], [phone]"},
		{"Beijing 138 0013 8000", "Beijing [phone]"},
		{"tel:+4930123456", "tel:[phone]"},
		{"Tel. 4155550132", "Tel. [phone]"},
		{"please call 555-0132", "please call [phone]"},
		{"Call me, as I said, on 98765 43210", "Call me, as I said, on [phone]"},
		{"ref 12 415-555-0132", "ref 12 [phone]"},
		// Near misses.
		{"order ORD-2024-00917 on 2026-11-30 14:32:05", "order ORD-2024-00917 on 2026-11-30 14:32:05"},
		{"30/11/2026 30.11.2026 11/30/2026 2026/11/30 10:15", "30/11/2026 30.11.2026 11/30/2026 2026/11/30 10:15"},
		{"01/02/2026 10:30 and 06.12.2026 12", "01/02/2026 10:30 and 06.12.2026 12"},
		{"amounts $2,400.00 1,234,567.89 1.234.567,89 12 345,67 €", "amounts $2,400.00 1,234,567.89 1.234.567,89 12 345,67 €"},
		{"epoch 1732960800 and 1732960800123", "epoch 1732960800 and 1732960800123"},
		{"versions 1.2.3, v2.14.0, 10.0.19045.3693", "versions 1.2.3, v2.14.0, 10.0.19045.3693"},
		{"ISBN 978-3-16-148410-0", "ISBN 978-3-16-148410-0"},
		{"2+2=4, 1e+10, UTC+05:30, +20%", "2+2=4, 1e+10, UTC+05:30, +20%"},
		{"zip 94107-1234, PO-88213-B, 4711-0815-22", "zip 94107-1234, PO-88213-B, 4711-0815-22"},
		{"invoice 2024-000123 qty 3", "invoice 2024-000123 qty 3"},
		{"Please call about order 2024-118734 or invoice 4500012345", "Please call about order 2024-118734 or invoice 4500012345"},
		{"call center ticket 20261130-0042, contact us re PO 7700-1234-88", "call center ticket 20261130-0042, contact us re PO 7700-1234-88"},
		{"Rechnung 0616-3136-02, Kundennummer 0171 1234567", "Rechnung 0616-3136-02, Kundennummer 0171 1234567"},
		{"Order 4711, phone: 0171 1234567; Tel #: (415) 555-0132", "Order 4711, phone: [phone]; Tel #: [phone]"},
	})
}

func TestCard(t *testing.T) {
	runDetect(t, []detectCase{
		{"card 4111 1111 1111 1111 exp 12/27", "card [card] exp 12/27"},
		{"4111-1111-1111-1111", "[card]"},
		{"pan=4111111111111111;", "pan=[card];"},
		{"Amex 3782 822463 10005 and 378282246310005", "Amex [card] and [card]"},
		{"Diners 3056 930902 5904", "Diners [card]"},
		{"Visa-13 4222222222222", "Visa-13 [card]"},
		{"UnionPay 6200 0000 0000 0000 000", "UnionPay [card]"},
		{"Mastercard 2223003122003222", "Mastercard [card]"},
		{`{"n":"5555555555554444"}`, `{"n":"[card]"}`},
		{"Acct#4111111111111111", "Acct#[card]"},
		{`line\n4111111111111111`, `line\n[card]`},
		// Near misses: Luhn fails, timestamps, barcodes, longer numbers.
		{"card 4111 1111 1111 1112", "card 4111 1111 1111 1112"},
		{"4111-1111-1111-1113 and 4111111111111114", "4111-1111-1111-1113 and 4111111111111114"},
		{"ts 1732960800123 and ns 1732960800123456789", "ts 1732960800123 and ns 1732960800123456789"},
		{"EAN 4006381333931", "EAN 4006381333931"},
		{"USPS 9400 1000 0000 0000 0000 00", "USPS 9400 1000 0000 0000 0000 00"},
		{"id-4111111111111111", "id-4111111111111111"},
		{"Card no.4111 1111 1111 1111", "Card no.[card]"},
		{"ratio 0.4111111111111111", "ratio 0.4111111111111111"},
		{"0000000000000000", "0000000000000000"},
		// Grouped with dots or underscores, as some forms and exports
		// write them: 4-4-4-4, 4-4-4-4-3, 4-6-5 and 4-6-4 only.
		{"card 4111.1111.1111.1111 ok", "card [card] ok"},
		{"card 4111_1111_1111_1111 ok", "card [card] ok"},
		{`{"note":"pay with 4111.1111.1111.1111, thanks"}`, `{"note":"pay with [card], thanks"}`},
		{"Amex 3782.822463.10005 and 3782_822463_10005", "Amex [card] and [card]"},
		{"UnionPay 6200.0000.0000.0000.000", "UnionPay [card]"},
		{"4111.1111.1111.1111 12/28.", "[card] 12/28."},
		{"Card no.5555.5555.5555.4444", "Card no.[card]"},
		{"_4242_4242_4242_4242_", "_[card]_"},
		// Near misses: Luhn fails, a version, a longer dotted number, other
		// groupings, identifiers.
		{"4111.1111.1111.1112 and 4111_1111_1111_1113", "4111.1111.1111.1112 and 4111_1111_1111_1113"},
		{"version 4111.1111.1111.1111", "version 4111.1111.1111.1111"},
		{"oid 1.4111.1111.1111.1111 and 4111.1111.1111.1111.5678", "oid 1.4111.1111.1111.1111 and 4111.1111.1111.1111.5678"},
		{"4111.1111.1111.111 41.1111.1111.1111.11 411111.1111.111111", "4111.1111.1111.111 41.1111.1111.1111.11 411111.1111.111111"},
		{"id-4111_1111_1111_1111 a_4111_1111_1111_1111 4111_1111_1111_1111_1", "id-4111_1111_1111_1111 a_4111_1111_1111_1111 4111_1111_1111_1111_1"},
		{"build 10.0.19045.3693, 2026.11.30, 1.234.567,89 €, 3.14159265358979", "build 10.0.19045.3693, 2026.11.30, 1.234.567,89 €, 3.14159265358979"},
	})
}

func TestIBAN(t *testing.T) {
	runDetect(t, []detectCase{
		{"IBAN DE89 3704 0044 0532 0130 00.", "IBAN [iban]."},
		{"iban: de89370400440532013000", "iban: [iban]"},
		{"GB29 NWBK 6016 1331 9268 19 please", "[iban] please"},
		{"FR14 2004 1010 0505 0001 3M02 606", "[iban]"},
		{"NO9386011117947 BE68539007547034", "[iban] [iban]"},
		{"Konto (AT611904300234573201)", "Konto ([iban])"},
		{"MT84MALT011000012345MTLCAST001S", "[iban]"},
		// Near misses: mod-97 fails, wrong length, not a country.
		{"DE89 3704 0044 0532 0130 01", "DE89 3704 0044 0532 0130 01"},
		{"DE89 3704 0044 0532 0130 0", "DE89 3704 0044 0532 0130 0"},
		{"GB29NWBK60161331926818", "GB29NWBK60161331926818"},
		{"XX89370400440532013000", "XX89370400440532013000"},
		{"AT12 items in stock", "AT12 items in stock"},
		// Grouped with hyphens, periods or underscores (one kind each).
		{"IBAN DE89-3704-0044-0532-0130-00 ok", "IBAN [iban] ok"},
		{"IBAN GB82.WEST.1234.5698.7654.32.", "IBAN [iban]."},
		{`{"to":"gb82_west_1234_5698_7654_32"}`, `{"to":"[iban]"}`},
		{"FR14-2004-1010-0505-0001-3M02-606", "[iban]"},
		// Near misses: mod-97 fails, a group more, separators mixed.
		{"DE89-3704-0044-0532-0130-01", "DE89-3704-0044-0532-0130-01"},
		{"DE89-3704-0044-0532-0130-00-17", "DE89-3704-0044-0532-0130-00-17"},
		{"GB82.WEST.1234.5698.7654.33", "GB82.WEST.1234.5698.7654.33"},
		{"SN12-3456-7890 and DE12.3456.7890", "SN12-3456-7890 and DE12.3456.7890"},
	})
}

func TestSSN(t *testing.T) {
	runDetect(t, []detectCase{
		{"SSN 123-45-6789.", "SSN [ssn]."},
		{"ssn: 123 45 6789", "ssn: [ssn]"},
		{"SSN#078-05-1120", "SSN#[ssn]"},
		{"social security number 219099999", "social security number [ssn]"},
		// Near misses: ranges never issued, bare digits without context.
		{"000-12-3456 666-12-3456 900-12-3456 999-99-9999", "000-12-3456 666-12-3456 900-12-3456 999-99-9999"},
		{"123-00-4567 123-45-0000", "123-00-4567 123-45-0000"},
		{"order 219099999 shipped", "order 219099999 shipped"},
	})
}

func TestNINO(t *testing.T) {
	runDetect(t, []detectCase{
		{"NI number AB123456C", "NI number [nino]"},
		{"NINO: JG 10 37 86 A.", "NINO: [nino]."},
		{"ce 12 34 56 d", "ce 12 34 56 d"},
		// Prefixes never issued, suffix outside A–D.
		{"QQ123456C BG123456A GB123456B AB123456E", "QQ123456C BG123456A GB123456B AB123456E"},
		{"XAB123456C", "XAB123456C"},
	})
}

func TestIP(t *testing.T) {
	runDetect(t, []detectCase{
		{"from 10.0.0.1:8080 and 203.0.113.42.", "from [ip]:8080 and [ip]."},
		{"client=192.168.001.010", "client=[ip]"},
		{"net 10.20.0.0/16", "net [ip]/16"},
		{"v6 2001:db8::1, [2001:0db8:85a3:0000:0000:8a2e:0370:7334]:443", "v6 [ip], [[ip]]:443"},
		{"fe80::1ff:fe23:4567:890a%eth0 and ::1 and ::ffff:192.0.2.128", "[ip] and ::1 and [ip]"},
		// Loopback and unspecified addresses identify no one.
		{"listening on 127.0.0.1:8080, bound 0.0.0.0 and [::1]:9090", "listening on 127.0.0.1:8080, bound 0.0.0.0 and [::1]:9090"},
		{"X-Forwarded-For: 203.0.113.195, 70.41.3.18", "X-Forwarded-For: [ip], [ip]"},
		// Near misses.
		{"999.1.1.1 and 1.2.3 and 1.3.6.1.4.1.311", "999.1.1.1 and 1.2.3 and 1.3.6.1.4.1.311"},
		{"version 10.0.0.1, build: 4.2.0.1, 1.2.3.4-beta", "version 10.0.0.1, build: 4.2.0.1, 1.2.3.4-beta"},
		{"at 14:32:05, mac 00:1a:2b:3c:4d:5e, std::vector, a::b", "at 14:32:05, mac 00:1a:2b:3c:4d:5e, std::vector, a::b"},
	})
}

func TestSecrets(t *testing.T) {
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	runDetect(t, []detectCase{
		{"key wk_Z3kP9qL2mX8vR4tY6wB1nC5d", "key [secret]"},
		{"sk-proj-4fT9kQ2mX8vR4tY6wB1nC5dZ3kP9qL2m and sk-ant-api03-Xy7Qm2Lp9Rt4Vb6Nc8Zd1Kf3Hg5", "[secret] and [secret]"},
		{"sk_live_51HbQk2eZvKYlo2C8oIJv and rk_test_4eC39HqLyjWDarjtT1zdp7dc", "[secret] and [secret]"},
		{"ghp_16C7e42F292c6912E7710c838347Ae178B4a gho_16C7e42F292c6912E7710c838347Ae178B4a", "[secret] [secret]"},
		{"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ", "[secret]"},
		{"xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "[secret]"},
		{"AKIAIOSFODNN7EXAMPLE / AIzaSyA-1234567890abcdefghijklmnopqrstu", "[secret] / [secret]"},
		{"glpat-xxxxxxxxxx1234567890", "[secret]"},
		{"token " + jwt + " expired", "token [secret] expired"},
		{"Authorization: Bearer abcDEF123456789xyz", "Authorization: Bearer [secret]"},
		{"curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA=='", "curl -H 'Authorization: Basic [secret]'"},
		{"sent Bearer mF_9.B5f-4.1JqM to the API", "sent Bearer [secret] to the API"},
		{"basic auth: Basic YWxhZGRpbjpvcGVuc2VzYW1l", "basic auth: Basic [secret]"},
		{"postgres://admin:S3cret!@db.internal:5432/app", "postgres://admin:[secret]@db.internal:5432/app"},
		{"https://jane@example.com/path", "https://[email]/path"}, // a user name in a URL may be personal
		{"random aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY here", "random [secret] here"},
		{"aws wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws [secret]"},
		{"hook https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "hook [secret]"},
		{`key="-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----" ok`, `key="[secret]" ok`},
		// Near misses.
		{"sk-learn-pipeline and the basic plan and Bearer token", "sk-learn-pipeline and the basic plan and Bearer token"},
		{"lookup prefix wk_3f9a1c2b", "lookup prefix wk_3f9a1c2b"},
		{"commit 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12 sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "commit 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12 sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"uuid 3f2504e0-4f89-11d3-9a0c-0305e82c3301 ulid 01ARZ3NDEKTSV4RRFFQ69G5FAV req_01HZY3KQ8V2J6G1T4N5P7R9W0X", "uuid 3f2504e0-4f89-11d3-9a0c-0305e82c3301 ulid 01ARZ3NDEKTSV4RRFFQ69G5FAV req_01HZY3KQ8V2J6G1T4N5P7R9W0X"},
		{"getCustomerAccountBalanceById2 warden-gateway-7d9f8b6c5d-x2kqp X7-Pro-Max-256GB-Black", "getCustomerAccountBalanceById2 warden-gateway-7d9f8b6c5d-x2kqp X7-Pro-Max-256GB-Black"},
		{"/var/lib/warden/exports/2026/3f2504e0-4f89-11d3-9a0c-0305e82c3301.jsonl", "/var/lib/warden/exports/2026/3f2504e0-4f89-11d3-9a0c-0305e82c3301.jsonl"},
		{"Mozilla/5.0 (X11) AppleWebKit/537.36 Chrome/120.0.6099.109", "Mozilla/5.0 (X11) AppleWebKit/537.36 Chrome/120.0.6099.109"},
	})
}

func TestKeyValue(t *testing.T) {
	runDetect(t, []detectCase{
		{`password=hunter2 user=bob`, `password=[secret] user=bob`},
		{`msg="login" db_password="c0rrect horse" ok`, `msg="login" db_password="[secret]" ok`},
		{`{"api_key": "8f14e45fceea167a5a36dedd4bea2543", "region": "eu"}`, `{"api_key": "[secret]", "region": "eu"}`},
		{`X-Api-Key: 8f14e45fceea167a5a36dedd4bea2543`, `X-Api-Key: [secret]`},
		{`https://x.example/cb?code=1&access_token=abc123&state=2`, `https://x.example/cb?code=1&access_token=[secret]&state=2`},
		{`Authorization: Token 8f14e45fceea167a`, `Authorization: Token [secret]`},
		{`body="{\"password\":\"hunter2\",\"n\":1}"`, `body="{\"password\":\"[secret]\",\"n\":1}"`},
		{`DOB: 1990-04-12, dob=12/04/1990`, `DOB: [dob], dob=[dob]`},
		{`"address": "12 Main Street, Springfield"`, `"address": "[address]"`},
		{`"first_name": "Jane", "name": "refund"`, `"first_name": "[name]", "name": "refund"`},
		{`password: ******** token=null secret=${SECRET}`, `password: ******** token=null secret=${SECRET}`},
		{"my password is hunter2, my PIN is 4821. Mein Passwort ist Sommer2026!", "my password is [secret], my PIN is [secret]. Mein Passwort ist [secret]!"},
		{"your password is incorrect; the password is required; pin is missing", "your password is incorrect; the password is required; pin is missing"},
		// Kinds with a detector are left to it, so that a number failing
		// its check survives under any key.
		{`card_number: 4111 1111 1111 1112, email: nobody`, `card_number: 4111 1111 1111 1112, email: nobody`},
		{`"ssn": "000-12-3456"`, `"ssn": "000-12-3456"`},
		// Words that end like a sensitive name but are not one.
		{`tokens: 1234 input_tokens=99 max_tokens=4096`, `tokens: 1234 input_tokens=99 max_tokens=4096`},
		{`next_page_token=abc`, `next_page_token=abc`},
	})
}

func TestTokensSurvive(t *testing.T) {
	// Tokens already in the text must never be detected again, whatever
	// digits their hex holds.
	for _, in := range []string{
		"[phone:12345678] [card:41111111] [ip:10001000]",
		"Bearer [secret:0a1b2c3d]",
		"password=[secret:0a1b2c3d] ok",
		"phone [phone:12345678] 4155550133",
		"[email:3f9a1c2b]@example.com",
	} {
		r := New(testKey)
		once := r.String(in)
		if got := r.String(once); got != once {
			t.Errorf("String(%q) = %q, want %q (unchanged)", once, got, once)
		}
		for _, tok := range tokenPattern.FindAllString(in, -1) {
			if !strings.Contains(once, tok) {
				t.Errorf("String(%q) = %q, want token %s kept", in, once, tok)
			}
		}
	}
}

// idDetector finds a made-up national id, "ID-" and nine digits, to show
// that detectors plug in.
type idDetector struct{}

func (idDetector) Detect(dst []Match, s string) []Match {
	for i := 0; i+12 <= len(s); i++ {
		if s[i:i+3] == "ID-" && strings.Trim(s[i+3:i+12], "0123456789") == "" {
			dst = append(dst, Match{Start: i, End: i + 12, Kind: "national_id", Value: s[i+3 : i+12]})
			i += 11
		}
	}
	return dst
}

func TestWithDetector(t *testing.T) {
	r := New(testKey, WithDetector(idDetector{}))
	cases := []detectCase{
		{"citizen ID-123456789 registered", "citizen [national_id] registered"},
		{"ID-123456789 ID-987654321", "[national_id] [national_id]"},
		// A built-in match wins where they overlap.
		{"mail ID-123456789@example.com", "mail [email]"},
		{"ID-12345", "ID-12345"},
	}
	for _, c := range cases {
		if got := kinds(r.String(c.in)); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got, want := r.String("ID-123456789"), r.Token("national_id", "123456789"); got != want {
		t.Errorf("String(%q) = %q, want %q (the token of the detector's Value)", "ID-123456789", got, want)
	}
	if got := New(testKey).String("ID-123456789"); got != "ID-123456789" {
		t.Errorf("without the detector String(%q) = %q, want it unchanged", "ID-123456789", got)
	}
}

func TestCorrelation(t *testing.T) {
	// One value written in different ways gets one token.
	r := New(testKey)
	same := [][]string{
		{"jane.doe@example.com", "Jane.Doe@Example.COM"},
		{"4111 1111 1111 1111", "4111-1111-1111-1111", "4111111111111111"},
		{"DE89 3704 0044 0532 0130 00", "de89370400440532013000"},
		{"+1 (415) 555-0132", "415.555.0132", "+14155550132", "1-415-555-0132"},
		{"+49 30 1234567", "0049 30 1234567", "+49 (0)30 1234567"},
		{"2001:db8::1", "2001:0db8:0000:0000:0000:0000:0000:0001"},
		{"192.168.1.10", "192.168.001.010"},
	}
	for _, group := range same {
		first := r.String(group[0])
		if !tokenPattern.MatchString(first) || first != tokenPattern.FindString(first) {
			t.Errorf("String(%q) = %q, want a single token", group[0], first)
			continue
		}
		for _, v := range group[1:] {
			if got := r.String(v); got != first {
				t.Errorf("String(%q) = %q, want %q (the token of %q)", v, got, first, group[0])
			}
		}
	}
}
