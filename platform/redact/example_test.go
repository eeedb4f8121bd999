package redact_test

import (
	"fmt"

	"github.com/wardenhq/warden/platform/redact"
)

// dni detects Spanish national identity numbers: eight digits and a check
// letter.
type dni struct{}

func (dni) Detect(dst []redact.Match, s string) []redact.Match {
	const letters = "TRWAGMYFPDXBNJZSQVHLCKE"
	isDigit := func(c byte) bool { return '0' <= c && c <= '9' }
	isWord := func(c byte) bool { return isDigit(c) || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' }
	for i := 0; i+9 <= len(s); i++ {
		if i > 0 && isWord(s[i-1]) || i+9 < len(s) && isWord(s[i+9]) {
			continue
		}
		n := 0
		for k := i; k < i+8 && isDigit(s[k]); k++ {
			n = n*10 + int(s[k]-'0')
			if k == i+7 && s[i+8] == letters[n%23] {
				dst = append(dst, redact.Match{Start: i, End: i + 9, Kind: "dni", Value: s[i : i+9]})
			}
		}
	}
	return dst
}

func ExampleWithDetector() {
	r := redact.New([]byte("example key"), redact.WithDetector(dni{}))
	fmt.Println(r.String("DNI 12345678Z, no 12345678A"))
	// Output: DNI [dni:660056d5], no 12345678A
}

func ExampleRedactor_String() {
	r := redact.New([]byte("example key"))
	fmt.Println(r.String("refund $2,400.00 for ORD-2024-00917 to jane.doe@example.com, card 4111 1111 1111 1111"))
	// Output: refund $2,400.00 for ORD-2024-00917 to [email:5cd09a60], card [card:e0250a9d]
}

func ExampleMaskLast4() {
	fmt.Println(redact.MaskLast4("4111 1111 1111 9182"))
	// Output: ••••9182
}
