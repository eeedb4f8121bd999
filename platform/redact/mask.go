package redact

// MaskLast4 masks an account or card number for people to recognise:
// "4111 1111 1111 9182" becomes "••••9182". Only the last four digits are
// kept, and only when there are at least eight digits; shorter input,
// whose last four would be most of it, becomes "••••".
func MaskLast4(s string) string {
	const mask = "••••"
	var last [4]byte
	n := 0
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			last[n%4] = s[i]
			n++
		}
	}
	if n < 8 {
		return mask
	}
	out := make([]byte, 0, len(mask)+4)
	out = append(out, mask...)
	for k := 0; k < 4; k++ {
		out = append(out, last[(n+k)%4])
	}
	return string(out)
}
