package saslprep

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"mirrorql/tests/throwaway"
	"mirrorql/tools/pgcluster"
)

// sampled are the code points TestPrepareAsPostgreSQL prepares, alone and
// between two Hebrew letters (the bidirectional checks): where SASLprep's
// tables and the two orders of mapping meet.
var sampled = [][2]rune{
	{0x80, 0x24f},      // C1 controls, no-break space, soft hyphen, ª, ¹, ½; 0x221 and on unassigned in 3.2
	{0x300, 0x36f},     // combining marks, U+0340 and U+0341 prohibited
	{0x590, 0x65f},     // Hebrew and Arabic: right to left
	{0x1680, 0x1680},   // Ogham space mark
	{0x1806, 0x180e},   // Mongolian: mapped to nothing, prohibited
	{0x2000, 0x206f},   // spaces, zero-width ones, direction marks and controls
	{0x2100, 0x218f},   // ™, ℃, Roman numerals
	{0x2460, 0x24ff},   // circled and parenthesized
	{0x3000, 0x3002},   // ideographic space
	{0xe000, 0xe001},   // private use
	{0xfb00, 0xfb4f},   // ligatures, Hebrew presentation forms
	{0xfdd0, 0xfdd0},   // not a character
	{0xfe00, 0xfe0f},   // variation selectors
	{0xfe70, 0xfe7f},   // Arabic presentation forms
	{0xfeff, 0xfeff},   // byte order mark
	{0xff00, 0xff65},   // full-width and half-width forms
	{0xfff9, 0xfffd},   // specials
	{0x1d400, 0x1d40f}, // mathematical bold letters
	{0x1f511, 0x1f511}, // 🔑: Unicode 6
	{0xe0001, 0xe0001}, // language tag
	{0xe0041, 0xe0041},
}

// TestPrepareAsPostgreSQL holds Prepare to a real server: it has PostgreSQL
// store a SCRAM verifier of each password (ALTER ROLE … PASSWORD, which
// prepares it with the server's own SASLprep) and checks that the verifier
// is that of what Prepare makes of the password, with the server's salt.
func TestPrepareAsPostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	ctx := context.Background()
	_, conn := throwaway.Cluster(t, pgcluster.Options{})
	// PostgreSQL 16 and later hash as few rounds as asked, which spares
	// both sides time; 15 hashes its 4096.
	if _, err := conn.Exec(ctx, "set scram_iterations = 1"); err != nil {
		t.Logf("the server hashes 4096 rounds: %v", err)
	}
	var passwords []string
	for _, tc := range prepareCases {
		if utf8.ValidString(tc.pw) { // SQL text holds nothing else
			passwords = append(passwords, tc.pw)
		}
	}
	for _, r := range sampled {
		for c := r[0]; c <= r[1]; c++ {
			passwords = append(passwords, string(c), "\u05d0"+string(c)+"\u05d1")
		}
	}
	if _, err := conn.Exec(ctx, "set password_encryption = 'scram-sha-256'; create role prepared; "+
		"create temporary table pw (n int primary key, pw text not null, verifier text)"); err != nil {
		t.Fatal(err)
	}
	rows := make([][]any, len(passwords))
	for i, pw := range passwords {
		rows[i] = []any{i, pw}
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"pw"}, []string{"n", "pw"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `DO $$ DECLARE r record; BEGIN
		FOR r IN SELECT n, pw FROM pw LOOP
			EXECUTE format('ALTER ROLE prepared PASSWORD %L', r.pw);
			UPDATE pw SET verifier = (SELECT rolpassword FROM pg_authid WHERE rolname = 'prepared') WHERE n = r.n;
		END LOOP; END $$`); err != nil {
		t.Fatal(err)
	}
	res, err := conn.Query(ctx, "select pw, verifier from pw order by n")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for res.Next() {
		var pw, verifier string
		if err := res.Scan(&pw, &verifier); err != nil {
			t.Fatal(err)
		}
		prepared, ok := Prepare(pw)
		if !verifies(t, verifier, prepared) {
			t.Errorf("Prepare(%+q) = %+q, %v: not what the server hashed", pw, prepared, ok)
		}
		checked++
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	if checked != len(passwords) {
		t.Fatalf("checked %d passwords of %d", checked, len(passwords))
	}
}

// verifies reports whether verifier, PostgreSQL's SCRAM-SHA-256 verifier
// (SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>), is pw's.
func verifies(t *testing.T, verifier, pw string) bool {
	t.Helper()
	rest, ok := strings.CutPrefix(verifier, "SCRAM-SHA-256$")
	params, keys, ok2 := strings.Cut(rest, "$")
	iterations, salt64, ok3 := strings.Cut(params, ":")
	storedKey, _, ok4 := strings.Cut(keys, ":")
	n, err := strconv.Atoi(iterations)
	salt, err2 := base64.StdEncoding.DecodeString(salt64)
	if !ok || !ok2 || !ok3 || !ok4 || err != nil || err2 != nil {
		t.Fatalf("not a SCRAM verifier: %q", verifier)
	}
	salted, err := pbkdf2.Key(sha256.New, pw, salt, n, sha256.Size)
	if err != nil {
		t.Fatal(err)
	}
	h := hmac.New(sha256.New, salted)
	h.Write([]byte("Client Key"))
	stored := sha256.Sum256(h.Sum(nil))
	return base64.StdEncoding.EncodeToString(stored[:]) == storedKey
}
