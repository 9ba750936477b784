package saslprep

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/xdg-go/stringprep"
	"golang.org/x/text/unicode/norm"
)

// prepareCases are passwords and what PostgreSQL hashes for them under
// scram-sha-256: the prepared string, or (ok false) the password as given.
// TestPrepareAsPostgreSQL checks each against a real server.
var prepareCases = []struct {
	name, pw, want string
	ok             bool
}{
	{"ASCII", "Abc123def456", "Abc123def456", true},
	{"ASCII with a control character, taken as it is", "tab\there\x01", "tab\there\x01", true},
	{"URL characters", "p@ss:w/rd#1?x%&y=z", "p@ss:w/rd#1?x%&y=z", true},
	{"NFC already", "pässwörd-€", "pässwörd-€", true},
	{"CJK and an emoji Unicode 3.2 lacked", "密码🔑", "密码🔑", false},
	{"ligature", "ﬁ-ligature", "fi-ligature", true},
	{"trade mark", "tm™", "tmTM", true},
	{"circled digit", "circled①", "circled1", true},
	{"full-width letters", "ｆｕｌｌ", "full", true},
	{"Roman numeral", "\u2168", "IX", true},
	{"feminine ordinal", "\u00aa", "a", true},
	{"decomposed é composed", "e\u0301", "é", true},
	{"marks ordered by class, then composed", "a\u0302\u0323", "\u1ead", true},
	{"a mark of the same class blocks", "a\u0301\u0301", "á\u0301", true},
	{"31 marks, no joiner inserted", "e" + strings.Repeat("\u0301", 31), "é" + strings.Repeat("\u0301", 30), true},
	{"30 marks and a conjoining jamo, as they are", strings.Repeat("\u0301", 30) + "\u11a8", strings.Repeat("\u0301", 30) + "\u11a8", true},
	{"34 marks and no starter, ordered", strings.Repeat("\u0301\u0323", 17), strings.Repeat("\u0323", 17) + strings.Repeat("\u0301", 17), true},
	{"40 marks of two classes, ordered as one run", "a" + strings.Repeat("\u0301\u0323", 20), "\u1ea1" + strings.Repeat("\u0323", 19) + strings.Repeat("\u0301", 20), true},
	{"soft hyphen dropped", "soft\u00adhyphen", "softhyphen", true},
	{"RFC 4013's example", "I\u00adX", "IX", true},
	{"variation selector dropped", "heart❤\ufe0f", "heart❤", true},
	{"zero-width joiner dropped", "a\u200db", "ab", true},
	{"Mongolian todo soft hyphen dropped", "\u05d0\u1806\u05d1", "\u05d0\u05d1", true},
	{"zero-width space a space, PostgreSQL's order", "zero\u200bwidth", "zero width", true},
	{"no-break space a space", "no\u00a0break", "no break", true},
	{"ideographic space a space", "a\u3000b", "a b", true},
	{"nothing left", "\u00ad\u200d", "\u00ad\u200d", false},
	{"not UTF-8", "\xff\xfe not UTF-8", "\xff\xfe not UTF-8", false},
	{"not UTF-8 with a ligature", "ﬁ\xff", "ﬁ\xff", false},
	{"private use", "é\ue000", "é\ue000", false},
	{"a prohibited character NFKC would change", "a\u0340b", "a\u0340b", false},
	{"a control character beside non-ASCII", "ä\x01", "ä\x01", false},
	{"unassigned in Unicode 3.2", "\u0221", "\u0221", false},
	{"right to left", "\u05e9\u05dc\u05d5\u05dd", "\u05e9\u05dc\u05d5\u05dd", true},
	{"right to left, presentation form folded", "\ufb2a\u05d0", "\u05e9\u05c1\u05d0", true},
	{"right to left ending in a digit", "\u05d0\u05d11", "\u05d0\u05d11", false},
	{"right to left beside left to right", "\u05d0a\u05d0", "\u05d0a\u05d0", false},
	{"right to left beside left to right and a no-break space", "\u05d0\u00a0a\u05d0", "\u05d0\u00a0a\u05d0", false},
}

func TestPrepare(t *testing.T) {
	for _, tc := range prepareCases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Prepare(tc.pw)
			if got != tc.want || ok != tc.ok {
				t.Errorf("Prepare(%+q) = %+q, %v; want %+q, %v", tc.pw, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// pgxCases are passwords and what pgx hashes for them (Pgx): the cases
// where it differs from PostgreSQL are those Prepare closes, but for the
// last two, which it cannot.
var pgxCases = []struct{ pw, want string }{
	{"Abc123def456", "Abc123def456"},
	{"ﬁ-ligature", "ﬁ-ligature"},
	{"soft\u00adhyphen", "soft\u00adhyphen"},
	{"no\u00a0break", "no break"},
	{"e\u0301", "é"},
	{"tab\there", "tab\there"},   // PRECIS refuses the control character
	{"é\ue000", "é\ue000"},       // and the private-use one
	{"🔑\xff", "🔑\xff"},           // a code point Unicode 3.2 lacked
	{"\xff\xfe", "\ufffd\ufffd"}, // not UTF-8: replaced
	{"a\u0340b", "\u00e0b"},      // NFC, where SASLprep refused
	{"\u05d0\u00a0a\u05d0", "\u05d0 a\u05d0"},
	// PRECIS refuses the Stream-Safe joiner its NFC would insert after 30
	// marks, so pgx sends what PostgreSQL hashed
	{"é" + strings.Repeat("\u0301", 30), "é" + strings.Repeat("\u0301", 30)},
}

func TestPgx(t *testing.T) {
	for _, tc := range pgxCases {
		if got := Pgx(tc.pw); got != tc.want {
			t.Errorf("Pgx(%+q) = %+q, want %+q", tc.pw, got, tc.want)
		}
	}
}

// interesting are characters where SASLprep's steps meet, which
// FuzzPrepare strings together: ASCII, spaces, characters dropped,
// compatibility ones, combining marks, right-to-left letters, prohibited
// and unassigned ones.
var interesting = []rune{
	'a', 'Z', '1', ' ', '\t', 'e', 0xa0, 0xaa, 0xad, 0xe9, 0x221, 0x301, 0x308, 0x340, 0x5d0, 0x5d1, 0x627, 0x661,
	0x1100, 0x1161, 0x11a8, 0x1806, 0x180e, 0x2007, 0x200b, 0x200d, 0x200e, 0x2122, 0x2168, 0x2460, 0x2ff0, 0x3000,
	0xe000, 0xfb01, 0xfb2a, 0xfdd0, 0xfe0f, 0xfe8d, 0xfeff, 0xff21, 0xfffd, 0x1d400, 0x1f511, 0xe0041,
}

// FuzzPrepare holds Prepare to what the login relies on: a password
// SASLprep refuses is handed back as it is; a prepared one is UTF-8, NFKC,
// free of what SASLprep maps, and left as it is by pgx's own preparation,
// so that pgx hashes exactly what PostgreSQL hashed. It checks pw as it
// is, and the string picks makes of interesting characters (random bytes
// seldom make much of Unicode).
func FuzzPrepare(f *testing.F) {
	for _, tc := range prepareCases {
		f.Add(tc.pw, []byte(tc.pw))
	}
	f.Add("", []byte{})
	f.Add("\u05d0\u05d1\u2168\u05d0", []byte{14, 15, 28, 14})
	f.Add("\u0627\u0031", []byte{16, 2})
	f.Add("\u1100\u1161\u11a8", []byte{18, 19, 20}) // conjoining jamo, which NFKC composes
	f.Fuzz(func(t *testing.T, pw string, picks []byte) {
		built := make([]rune, len(picks))
		for i, b := range picks {
			built[i] = interesting[int(b)%len(interesting)]
		}
		checkPrepare(t, pw)
		checkPrepare(t, string(built))
		checkNFKC(t, pw)
		checkNFKC(t, string(built))
	})
}

// checkNFKC holds nfkc to x/text's NFKC, which it equals but where x/text
// inserts its Stream-Safe joiner.
func checkNFKC(t *testing.T, s string) {
	if !utf8.ValidString(s) || longRun(s) {
		return
	}
	if got, want := nfkc([]rune(s)), norm.NFKC.String(s); got != want {
		t.Fatalf("nfkc(%+q) = %+q, NFKC %+q", s, got, want)
	}
}

// longRun reports whether s, each character decomposed, holds more than 30
// characters in a row that join the one before (a combining mark, or a
// conjoining jamo such as U+11A8: no boundary before it), where x/text's
// NFC and NFKC insert U+034F and PostgreSQL does not. (x/text's NFKD of s
// would insert it too.)
func longRun(s string) bool {
	n := 0
	for _, c := range s {
		for _, r := range norm.NFKD.String(string(c)) {
			if norm.NFD.PropertiesString(string(r)).BoundaryBefore() {
				n = 0
			} else if n++; n > 30 {
				return true
			}
		}
	}
	return false
}

func checkPrepare(t *testing.T, pw string) {
	got, ok := Prepare(pw)
	if !ok {
		if got != pw {
			t.Fatalf("Prepare(%+q) refused it but gave %+q, not it", pw, got)
		}
		return
	}
	switch {
	case ascii(pw) && got != pw:
		t.Fatalf("Prepare(%+q) = %+q: ASCII is taken as it is", pw, got)
	case !utf8.ValidString(got):
		t.Fatalf("Prepare(%+q) = %+q, not UTF-8", pw, got)
	case !ascii(pw) && !longRun(got) && !norm.NFKC.IsNormalString(got):
		t.Fatalf("Prepare(%+q) = %+q, not NFKC", pw, got)
	case !ascii(pw) && nfkc([]rune(got)) != got:
		t.Fatalf("Prepare(%+q) = %+q, not NFKC as PostgreSQL computes it", pw, got)
	case !ascii(pw) && strings.ContainsFunc(got, func(r rune) bool {
		return mappedToNothing(r) || stringprep.TableC1_2.Contains(r)
	}):
		t.Fatalf("Prepare(%+q) = %+q, which holds a character SASLprep maps", pw, got)
	case Pgx(got) != got:
		t.Fatalf("Prepare(%+q) = %+q, which pgx hashes as %+q: the login would fail", pw, got, Pgx(got))
	}
}
