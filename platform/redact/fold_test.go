package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// foldOffsets is the offset map fold keeps, written out one entry a byte:
// for each folded byte, the offset of the character it came from (a byte
// of the copied prefix, before the first character that folds, maps to
// itself).
func foldOffsets(s string) (string, []int) {
	first := -1
	for j := 0; j < len(s); {
		if s[j] < utf8.RuneSelf {
			if s[j] == '_' && emphasis(s, j) {
				first = j
				break
			}
			j++
			continue
		}
		_, size, changes := foldRune(s[j:])
		if changes {
			first = j
			break
		}
		j += size
	}
	if first < 0 {
		return s, nil
	}
	var b []byte
	var off []int
	for k := 0; k < first; k++ {
		b = append(b, s[k])
		off = append(off, k)
	}
	for j := first; j < len(s); {
		if s[j] < utf8.RuneSelf {
			if s[j] == '_' && emphasis(s, j) {
				b = append(b, ' ')
				off = append(off, j)
				j++
				continue
			}
			b = append(b, s[j])
			off = append(off, j)
			j++
			continue
		}
		rep, size, changes := foldRune(s[j:])
		if !changes {
			rep = s[j : j+size]
		}
		for range len(rep) {
			off = append(off, j)
		}
		b = append(b, rep...)
		j += size
	}
	return string(b), off
}

// TestFoldOffsets checks that the folded text's offsets, kept as runs,
// map every span as an offset a byte would.
func TestFoldOffsets(t *testing.T) {
	parts := []string{"a", "7", " ", "é", "東", "\u00a0", "\u202f", "４", "＠", "\u200b", "\u2011", "ﬁ", "⑩", "\xff", "\x80", "\xc3", "Ω", "'", "_", "__"}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 3000 {
		var sb strings.Builder
		for range 1 + rng.IntN(12) {
			sb.WriteString(parts[rng.IntN(len(parts))])
		}
		s := sb.String()
		wantS, off := foldOffsets(s)
		f, ok := fold(s)
		if !ok {
			if off != nil {
				t.Fatalf("fold(%q) did not fold; it should give %q", s, wantS)
			}
			continue
		}
		if f.s != wantS {
			t.Fatalf("fold(%q) = %q, want %q", s, f.s, wantS)
		}
		for i := 0; i <= len(f.s); i++ {
			ws, we := len(s), len(s)
			if i < len(off) {
				ws = off[i]
			}
			if i < len(off) && i == 0 {
				we = 0
			} else if i < len(off) {
				for j := i; j < len(off); j++ {
					if off[j] != off[i-1] {
						we = off[j]
						break
					}
				}
			}
			if got := f.start(i); got != ws {
				t.Fatalf("%d: fold(%q).start(%d) = %d, want %d", n, s, i, got, ws)
			}
			if got := f.end(i); got != we {
				t.Fatalf("%d: fold(%q).end(%d) = %d, want %d", n, s, i, got, we)
			}
		}
	}
}
