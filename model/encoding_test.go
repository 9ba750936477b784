package model_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"mirrorql/model"
)

func TestBase64(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"NULL", nil, ""},
		{"empty", []byte{}, ""},
		{"two pads", []byte("f"), "Zg=="},
		{"one pad", []byte("fo"), "Zm8="},
		{"no pad", []byte("foobar"), "Zm9vYmFy"},
		{"standard alphabet", []byte{0xfb, 0xff}, "+/8="},
		{"no line breaks", bytes.Repeat([]byte{0}, 64), strings.Repeat("A", 85) + "A=="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := model.Base64(tt.in); got != tt.want {
				t.Errorf("Base64(%x) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// seqBytes is byte(i*37+n), the input recorded in testdata/postgres_base64.txt.
func seqBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*37 + n)
	}
	return b
}

func TestPostgresBase64(t *testing.T) {
	sig := seqBytes(64) // an ED25519 or ECDSA signature
	tests := []struct {
		name  string
		in    []byte
		lines []int // line lengths; a trailing 0 is a final line feed
	}{
		{"empty", nil, []int{0}},
		{"short", seqBytes(32), []int{44}},
		{"56 bytes fit one line", seqBytes(56), []int{76}},
		{"57 bytes fill a line and end with a line feed", seqBytes(57), []int{76, 0}},
		{"58 bytes", seqBytes(58), []int{76, 4}},
		{"64-byte signature", sig, []int{76, 12}},
		{"114 bytes", seqBytes(114), []int{76, 76, 0}},
		{"115 bytes", seqBytes(115), []int{76, 76, 4}},
		{"384-byte RSA_3072 signature", seqBytes(384), []int{76, 76, 76, 76, 76, 76, 56}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := model.PostgresBase64(tt.in)
			var lines []int
			for _, l := range strings.Split(got, "\n") {
				lines = append(lines, len(l))
			}
			if !equalInts(lines, tt.lines) {
				t.Errorf("PostgresBase64(%d bytes) lines %v, want %v:\n%q", len(tt.in), lines, tt.lines, got)
			}
			if joined := strings.ReplaceAll(got, "\n", ""); joined != model.Base64(tt.in) {
				t.Errorf("without line feeds %q, want %q", joined, model.Base64(tt.in))
			}
		})
	}
	if got, want := model.PostgresBase64(sig), model.Base64(sig)[:76]+"\n"+model.Base64(sig)[76:]; got != want {
		t.Errorf("signature = %q, want %q", got, want)
	}
}

// TestPostgresBase64Vectors replays PostgreSQL's own encode(x, 'base64').
func TestPostgresBase64Vectors(t *testing.T) {
	f, err := os.Open("testdata/postgres_base64.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	count := 0
	for sc.Scan() {
		nStr, want, _ := strings.Cut(sc.Text(), " ")
		n, err := strconv.Atoi(nStr)
		if err != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		count++
		want = strings.ReplaceAll(want, "~", "\n")
		if got := model.PostgresBase64(seqBytes(n)); got != want {
			t.Errorf("PostgresBase64(%d bytes) = %q, want %q", n, got, want)
		}
	}
	if count < 70 {
		t.Fatalf("only %d vectors read", count)
	}
}

func TestDecodeUTF8(t *testing.T) {
	const fffd = "\uFFFD"
	tests := []struct {
		name string
		in   string // hex
		want string
	}{
		{"empty", "", ""},
		{"ASCII", "48656c6c6f", "Hello"},
		{"NUL is kept", "00", "\x00"},
		{"2-byte", "c3a9", "é"},
		{"3-byte", "e282ac", "€"},
		{"4-byte", "f09f9880", "😀"},
		{"BOM is kept", "efbbbf41", "\uFEFFA"},
		{"U+FFFD itself", "efbfbd", fffd},
		{"max code point", "f48fbfbf", "\U0010FFFF"},
		{"lone continuation", "80", fffd},
		{"each lone continuation", "808080", fffd + fffd + fffd},
		{"0xFF", "ff", fffd},
		{"0xFE 0xFF", "feff", fffd + fffd},
		{"0xFF inside text", "41ff42", "A" + fffd + "B"},
		{"truncated 2-byte at end", "c3", fffd},
		{"truncated 3-byte at end is one subpart", "e282", fffd},
		{"truncated 4-byte at end is one subpart", "f09f98", fffd},
		{"truncated 4-byte mid text", "41f09f9842", "A" + fffd + "B"},
		{"truncated then complete", "e282e282ac", fffd + "€"},
		{"truncated by a new lead", "f09ff09f9880", fffd + "😀"},
		{"overlong C0 80", "c080", fffd + fffd},
		{"overlong C1 BF", "c1bf", fffd + fffd},
		{"overlong E0 80 80", "e08080", fffd + fffd + fffd},
		{"overlong E0 9F BF", "e09fbf", fffd + fffd + fffd},
		{"overlong F0 80 80 80", "f0808080", fffd + fffd + fffd + fffd},
		{"overlong F0 8F BF BF", "f08fbfbf", fffd + fffd + fffd + fffd},
		{"smallest valid E0", "e0a080", "\u0800"},
		{"smallest valid F0", "f0908080", "\U00010000"},
		{"high surrogate", "eda080", fffd + fffd + fffd},
		{"low surrogate", "edbfbf", fffd + fffd + fffd},
		{"surrogate pair (CESU-8)", "eda0bdedb280", strings.Repeat(fffd, 6)},
		{"last before surrogates", "ed9fbf", "\uD7FF"},
		{"above U+10FFFF", "f4908080", fffd + fffd + fffd + fffd},
		{"F5 lead", "f5808080", fffd + fffd + fffd + fffd},
		{"5-byte form", "f888808080", strings.Repeat(fffd, 5)},
		{"E0 then ASCII", "e041", fffd + "A"},
		{"E0 A0 then ASCII", "e0a041", fffd + "A"},
		{"C2 C2 A9", "c2c2a9", fffd + "©"},
		{"invalid middle of valid", "ceb1ffcebb", "α" + fffd + "λ"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := mustHex(t, tt.in)
			if got := model.DecodeUTF8(in); got != tt.want {
				t.Errorf("DecodeUTF8(%s) = %q, want %q", tt.in, got, tt.want)
			}
			if got := whatwgDecode(in); got != tt.want {
				t.Errorf("reference decoder(%s) = %q, want %q (bad test row)", tt.in, got, tt.want)
			}
		})
	}
}

// TestDecodeUTF8NodeVectors replays Node's Buffer.toString('utf8').
func TestDecodeUTF8NodeVectors(t *testing.T) {
	f, err := os.Open("testdata/utf8_node.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	count := 0
	for sc.Scan() {
		inHex, wantHex, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			t.Fatalf("bad line %q", sc.Text())
		}
		count++
		in, want := mustHex(t, inHex), string(mustHex(t, wantHex))
		if got := model.DecodeUTF8(in); got != want {
			t.Errorf("DecodeUTF8(%s) = %x, want %s", inHex, got, wantHex)
		}
		if got := whatwgDecode(in); got != want {
			t.Errorf("reference decoder(%s) = %x, want %s", inHex, got, wantHex)
		}
	}
	if count < 1000 {
		t.Fatalf("only %d vectors read", count)
	}
}

// TestDecodeUTF8Exhaustive compares every 1- and 2-byte input, and every
// 3-byte input over the bytes where the decoder's boundaries lie, with the
// reference decoder.
func TestDecodeUTF8Exhaustive(t *testing.T) {
	for a := 0; a < 256; a++ {
		for b := -1; b < 256; b++ {
			in := []byte{byte(a)}
			if b >= 0 {
				in = append(in, byte(b))
			}
			if got, want := model.DecodeUTF8(in), whatwgDecode(in); got != want {
				t.Fatalf("DecodeUTF8(%x) = %q, want %q", in, got, want)
			}
		}
	}
	edges := []byte{0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1,
		0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xf7, 0xf8, 0xfe, 0xff}
	for _, a := range edges {
		for _, b := range edges {
			for _, c := range edges {
				for _, d := range edges {
					in := []byte{a, b, c, d}
					if got, want := model.DecodeUTF8(in), whatwgDecode(in); got != want {
						t.Fatalf("DecodeUTF8(%x) = %q, want %q", in, got, want)
					}
				}
			}
		}
	}
}

// whatwgDecode is the WHATWG Encoding Standard's UTF-8 decoder written out
// step by step (code points accumulated, one U+FFFD per error, the offending
// byte reprocessed), as an oracle independent of model.DecodeUTF8.
func whatwgDecode(b []byte) string {
	var out strings.Builder
	var cp rune
	needed, seen := 0, 0
	lower, upper := byte(0x80), byte(0xBF)
	for i := 0; i < len(b); {
		c := b[i]
		if needed == 0 {
			i++
			switch {
			case c <= 0x7F:
				out.WriteByte(c)
			case 0xC2 <= c && c <= 0xDF:
				needed, cp = 1, rune(c&0x1F)
			case 0xE0 <= c && c <= 0xEF:
				if c == 0xE0 {
					lower = 0xA0
				}
				if c == 0xED {
					upper = 0x9F
				}
				needed, cp = 2, rune(c&0x0F)
			case 0xF0 <= c && c <= 0xF4:
				if c == 0xF0 {
					lower = 0x90
				}
				if c == 0xF4 {
					upper = 0x8F
				}
				needed, cp = 3, rune(c&0x07)
			default:
				out.WriteRune(utf8.RuneError)
			}
			continue
		}
		if c < lower || c > upper {
			cp, needed, seen, lower, upper = 0, 0, 0, 0x80, 0xBF
			out.WriteRune(utf8.RuneError)
			continue // the byte is processed again as a new start
		}
		lower, upper = 0x80, 0xBF
		cp = cp<<6 | rune(c&0x3F)
		seen++
		i++
		if seen == needed {
			out.WriteRune(cp)
			cp, needed, seen = 0, 0, 0
		}
	}
	if needed != 0 {
		out.WriteRune(utf8.RuneError)
	}
	return out.String()
}

func FuzzDecodeUTF8(f *testing.F) {
	for _, s := range []string{
		"", "48656c6c6f", "c3a9", "e282ac", "f09f9880", "80", "ff", "e282", "f09f98", "c080", "e08080", "eda080",
		"f4908080", "41f09f9842", "f09ff09f9880", "efbbbf",
	} {
		b, _ := hex.DecodeString(s)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := model.DecodeUTF8(b)
		if !utf8.ValidString(got) {
			t.Fatalf("DecodeUTF8(%x) = %q, not valid UTF-8", b, got)
		}
		if utf8.Valid(b) && got != string(b) {
			t.Fatalf("DecodeUTF8(%x) = %q, changed valid input", b, got)
		}
		if want := whatwgDecode(b); got != want {
			t.Fatalf("DecodeUTF8(%x) = %q, WHATWG gives %q", b, got, want)
		}
	})
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
