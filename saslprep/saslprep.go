// Package saslprep prepares a password as PostgreSQL does before it hashes
// it for SCRAM-SHA-256, so that a client whose own preparation differs (pgx)
// can be handed the password PostgreSQL hashed.
//
// PostgreSQL prepares a password with SASLprep (RFC 4013) in its own way
// (src/common/saslprep.c, pg_saslprep, the same in the server and in libpq,
// 10 to 18), which differs from the RFC and from other SASLprep libraries
// in ways that change the result:
//
//   - a string of ASCII alone is taken as it is, control characters too;
//   - a zero-width space (U+200B), in both tables, is mapped to a space
//     (table C.1.2, tried first), not to nothing (B.1);
//   - the prohibited, unassigned and bidirectional checks look at the
//     string as mapped, before NFKC, not at the normalized output;
//   - a string that nothing is left of is refused.
//
// Where pg_saslprep refuses a password (bytes that are not UTF-8, a
// prohibited character, a code point Unicode 3.2 had not assigned, mixed
// directions, nothing left), PostgreSQL hashes the bytes as they are.
//
// The tables are RFC 3454's, from github.com/xdg-go/stringprep (but B.1,
// which it lacks a character of). Normalization is NFKC as PostgreSQL runs
// it (src/common/unicode_norm.c): each character decomposed, the combining
// marks ordered, the result composed, with golang.org/x/text's tables for
// each step. x/text's own NFKC differs from it in one way: after 30
// combining marks in a row it inserts a combining grapheme joiner (U+034F,
// Unicode's Stream-Safe Text Format), which PostgreSQL never does.
// PostgreSQL normalizes with tables of a newer Unicode than 3.2, as x/text
// does; the two agree on every string this package prepares, since it
// prepares only characters Unicode 3.2 assigned, whose normalization
// Unicode keeps stable.
package saslprep

import (
	"sort"
	"unicode/utf8"

	"github.com/xdg-go/stringprep"
	"golang.org/x/text/secure/precis"
	"golang.org/x/text/unicode/norm"
)

// Prepare returns pw as PostgreSQL prepares it before hashing it for
// SCRAM-SHA-256, and true; or pw itself and false when PostgreSQL's SASLprep
// refuses it and PostgreSQL hashes pw's bytes as they are.
func Prepare(pw string) (string, bool) {
	if ascii(pw) {
		return pw, true
	}
	if !utf8.ValidString(pw) {
		return pw, false
	}
	// 1. Map: non-ASCII spaces to a space, then the characters commonly
	// mapped to nothing to nothing (PostgreSQL's order: U+200B, in both,
	// becomes a space).
	mapped := make([]rune, 0, len(pw))
	for _, r := range pw {
		switch {
		case stringprep.TableC1_2.Contains(r):
			mapped = append(mapped, ' ')
		case !mappedToNothing(r):
			mapped = append(mapped, r)
		}
	}
	if len(mapped) == 0 {
		return pw, false
	}
	// 3. Prohibit, and 4. check the directions: on the mapped string, as
	// PostgreSQL checks them (not on step 2's output).
	randAL := false
	for _, r := range mapped {
		if prohibited(r) || stringprep.TableA1.Contains(r) {
			return pw, false
		}
		randAL = randAL || stringprep.TableD1.Contains(r)
	}
	if randAL {
		for _, r := range mapped {
			if stringprep.TableD2.Contains(r) {
				return pw, false
			}
		}
		if !stringprep.TableD1.Contains(mapped[0]) || !stringprep.TableD1.Contains(mapped[len(mapped)-1]) {
			return pw, false
		}
	}
	// 2. Normalize.
	return nfkc(mapped), true
}

// nfkc is NFKC as PostgreSQL's unicode_normalize computes it: every
// character's full compatibility decomposition, each run of combining marks
// ordered by combining class (a stable sort), and the canonical
// composition, which joins a mark to the last starter unless a mark of the
// same or a higher class, or a starter, stands between. It equals x/text's
// norm.NFKC but where a run of more than 30 combining marks makes x/text
// insert U+034F (FuzzPrepare compares the two).
func nfkc(rs []rune) string {
	type char struct {
		r   rune
		ccc uint8 // canonical combining class; 0 for a starter
	}
	var d []char
	for _, r := range rs {
		for _, c := range norm.NFKD.String(string(r)) {
			d = append(d, char{c, class(c)})
		}
	}
	// Canonical ordering: a stable sort of each run of marks by class.
	for i := 0; i < len(d); {
		j := i + 1
		if d[i].ccc != 0 {
			for j < len(d) && d[j].ccc != 0 {
				j++
			}
			run := d[i:j]
			sort.SliceStable(run, func(a, b int) bool { return run[a].ccc < run[b].ccc })
		}
		i = j
	}
	if len(d) == 0 {
		return ""
	}
	// Canonical composition, in unicode_normalize's order.
	out := []rune{d[0].r}
	starter, last := 0, -1
	for _, ch := range d[1:] {
		c := int(ch.ccc)
		if last < c {
			if p, ok := compose(out[starter], ch.r); ok {
				out[starter] = p
				continue
			}
		}
		if c == 0 {
			starter, last = len(out), -1
		} else {
			last = c
		}
		out = append(out, ch.r)
	}
	return string(out)
}

// class is r's canonical combining class.
func class(r rune) uint8 {
	return norm.NFD.PropertiesString(string(r)).CCC()
}

// compose returns the primary composite of starter and r, if Unicode has
// one: x/text's NFC of the pair alone (two characters are too few for its
// Stream-Safe joiner), when that is a single character.
func compose(starter, r rune) (rune, bool) {
	c := norm.NFC.String(string([]rune{starter, r}))
	p, size := utf8.DecodeRuneInString(c)
	return p, size == len(c) && p != utf8.RuneError
}

// Pgx returns what pgx v5 hashes for SCRAM-SHA-256 when handed pw, a copy
// of its preparation (pgconn's normalizeScramPassword): pw as it is when it
// holds a code point Unicode 3.2 had not assigned, or when PRECIS's
// OpaqueString (RFC 8265) refuses it (a control character, a private-use
// one, …); else OpaqueString's output: NFC, non-ASCII spaces as a space,
// and bytes that are not UTF-8 replaced by U+FFFD. Where Pgx(x) is not
// Prepare(pw) for any x, pgx cannot log in with pw under scram-sha-256; the
// tests hold the copy to the driver in use, against real servers.
func Pgx(pw string) string {
	if ascii(pw) {
		// OpaqueString maps and normalizes no ASCII, and what it refuses
		// (a control character, the empty string) pgx sends as given: the
		// tables are not paged in for the passwords most operators have
		return pw
	}
	for _, r := range pw {
		if stringprep.TableA1.Contains(r) {
			return pw
		}
	}
	out, err := precis.OpaqueString.String(pw)
	if err != nil {
		return pw
	}
	return out
}

// mappedToNothing reports whether r is one of the characters SASLprep
// drops: RFC 3454's table B.1 ("commonly mapped to nothing"), written out
// here since stringprep's TableB1 (v1.0.4) lacks U+1806, MONGOLIAN TODO
// SOFT HYPHEN, which PostgreSQL drops (TestPrepareAsPostgreSQL).
func mappedToNothing(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x034F, r == 0x1806, r >= 0x180B && r <= 0x180D, r >= 0x200B && r <= 0x200D,
		r == 0x2060, r >= 0xFE00 && r <= 0xFE0F, r == 0xFEFF:
		return true
	}
	return false
}

// prohibitedTables are SASLprep's prohibited output (RFC 4013, 2.3):
// RFC 3454's C.1.2 and C.2.1 to C.9.
var prohibitedTables = []stringprep.Set{
	stringprep.TableC1_2, stringprep.TableC2_1, stringprep.TableC2_2, stringprep.TableC3, stringprep.TableC4,
	stringprep.TableC5, stringprep.TableC6, stringprep.TableC7, stringprep.TableC8, stringprep.TableC9,
}

func prohibited(r rune) bool {
	for _, t := range prohibitedTables {
		if t.Contains(r) {
			return true
		}
	}
	return false
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
