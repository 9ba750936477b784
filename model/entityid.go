package model

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
)

// EntityID is the encoded form stored in every entity-id column:
// |10-bit shard|16-bit realm|38-bit num| as a signed 64-bit integer.
type EntityID int64

const (
	MaxShard = 1<<10 - 1
	MaxRealm = 1<<16 - 1
	MaxNum   = 1<<38 - 1
)

// NewEntityID encodes shard.realm.num; the caller has checked the limits.
func NewEntityID(shard, realm, num int64) EntityID {
	return EntityID(shard<<54 | realm<<38 | num)
}

func (e EntityID) Shard() int64 { return int64(uint64(e)>>54) & MaxShard }
func (e EntityID) Realm() int64 { return int64(e>>38) & MaxRealm }
func (e EntityID) Num() int64   { return int64(e) & MaxNum }

// String renders shard.realm.num, whatever the num.
func (e EntityID) String() string {
	b := make([]byte, 0, 24)
	return string(e.Append(b))
}

// Append appends shard.realm.num to b.
func (e EntityID) Append(b []byte) []byte {
	b = strconv.AppendInt(b, e.Shard(), 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, e.Realm(), 10)
	b = append(b, '.')
	return strconv.AppendInt(b, e.Num(), 10)
}

// IsNull reports whether the id renders as JSON null: the mirror node treats
// any id whose num is 0 as absent (docs/reference/behavior.md §1.7).
func (e EntityID) IsNull() bool { return e.Num() == 0 }

// StringPtr is the nullable string form used by both faces: nil for an id
// that renders as null, else a pointer to String.
func (e EntityID) StringPtr() *string {
	if e.IsNull() {
		return nil
	}
	s := e.String()
	return &s
}

// EntityDefaults fill in the shard and realm that short ids leave out.
type EntityDefaults struct {
	Shard int64
	Realm int64
}

// InvalidEntityIDError is the parse failure that the mirror node reports as
// `Invalid entity ID "<rebuilt>"` (with the defaults filled in).
type InvalidEntityIDError struct{ Rebuilt string }

// Error is the message verbatim: the mirror node interpolates the rebuilt
// string into `"…"` without escaping anything.
func (e *InvalidEntityIDError) Error() string {
	return `Invalid entity ID "` + e.Rebuilt + `"`
}

// ErrOpaqueEVMAddress marks a valid 40-hex EVM address that does not embed a
// num: it names no entity id, so a filter on it matches nothing.
var ErrOpaqueEVMAddress = errors.New("evm address without entity num")

// ValidEntityIDSyntax is the mirror node's isValidEntityId pre-check: the
// shapes an id may have before it is parsed (docs/reference/behavior.md §1.7, §2.1, §6.1).
// With allowEVM an EVM address may be bare, 0x-prefixed or carry a
// `shard.realm.` / `realm.` prefix.
func ValidEntityIDSyntax(s string, allowEVM bool) bool {
	if matchEntityID(s) || matchEncodedID(s) {
		return true
	}
	return allowEVM && isEVMAddress(s)
}

func isEVMAddress(s string) bool { return matchEVMShardRealm(s) || matchEVMAddress(s) }

// The mirror node's regexes (entityId.js), matched by hand:
//
//	entityIdRegex              ^(\d{1,4}\.)?\d{1,5}\.\d{1,12}$
//	encodedEntityIdRegex       ^-?\d{1,19}$
//	evmAddressRegex            ^(0x)?[A-Fa-f0-9]{40}$
//	evmAddressShardRealmRegex  ^(\d{1,4}\.)?(\d{1,5}\.)?[A-Fa-f0-9]{40}$

func matchEntityID(s string) bool {
	a, rest, ok := strings.Cut(s, ".")
	if !ok {
		return false
	}
	b, c, ok := strings.Cut(rest, ".")
	if !ok {
		return isDigits(a, 5) && isDigits(rest, 12)
	}
	return isDigits(a, 4) && isDigits(b, 5) && isDigits(c, 12)
}

func matchEncodedID(s string) bool { return isDigits(strings.TrimPrefix(s, "-"), 19) }

func matchEVMAddress(s string) bool { return isHex40(strings.TrimPrefix(s, "0x")) }

func matchEVMShardRealm(s string) bool {
	i := strings.LastIndexByte(s, '.')
	if !isHex40(s[i+1:]) {
		return false
	}
	if i < 0 {
		return true
	}
	// one prefix may be either optional group, so up to five digits
	a, b, ok := strings.Cut(s[:i], ".")
	if !ok {
		return isDigits(a, 5)
	}
	return isDigits(a, 4) && isDigits(b, 5)
}

// isDigits reports whether s is 1 to max ASCII digits.
func isDigits(s string, max int) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isHex40(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// ParseEntityID is EntityId.parseString (docs/reference/behavior.md §1.7): a bare number is a
// num, never an encoded id; missing shard and realm come from the defaults.
// Failures are *InvalidEntityIDError; an EVM address without a num (only when
// allowEVM) is ErrOpaqueEVMAddress.
//
// The steps, and so the rebuilt text of the error, follow the mirror node:
// strip one leading "0x"; unless the input is an opaque EVM address, prefix
// the missing parts from the defaults; check the rebuilt string against
// ValidEntityIDSyntax; then read shard, realm and num (or the EVM address,
// whose shard and realm must equal the defaults) and check the limits.
func (d EntityDefaults) ParseEntityID(s string, allowEVM bool) (EntityID, error) {
	body := strings.TrimPrefix(s, "0x")
	rebuilt := body
	if !isEVMAddress(body) || isLongZero(lastPart(body)) {
		// JS [shard, realm].slice(0, 3-parts): two for one part, the shard alone
		// for two parts and (slice(0, -1)) for four, nothing otherwise.
		switch strings.Count(body, ".") + 1 {
		case 1:
			rebuilt = strconv.FormatInt(d.Shard, 10) + "." + strconv.FormatInt(d.Realm, 10) + "." + body
		case 2, 4:
			rebuilt = strconv.FormatInt(d.Shard, 10) + "." + body
		}
	}
	if !ValidEntityIDSyntax(rebuilt, allowEVM) {
		return 0, &InvalidEntityIDError{Rebuilt: rebuilt}
	}
	// rebuilt now holds a dot or is a 40-hex address, so the mirror node reads it
	// as parts (parseFromString), never as an encoded id.
	parts := strings.Split(strings.TrimPrefix(rebuilt, "0x"), ".")
	last := parts[len(parts)-1]
	shard, realm := d.Shard, d.Realm
	if len(parts) == 3 {
		shard, _ = strconv.ParseInt(parts[0], 10, 64)
		parts = parts[1:]
	}
	if len(parts) == 2 {
		realm, _ = strconv.ParseInt(parts[0], 10, 64)
	}
	var num int64
	if len(last) == 40 {
		if shard != d.Shard || realm != d.Realm {
			return 0, &InvalidEntityIDError{Rebuilt: rebuilt}
		}
		if !isLongZero(last) {
			return 0, ErrOpaqueEVMAddress
		}
		n, _ := strconv.ParseUint(last[24:], 16, 64)
		num = int64(n)
	} else {
		num, _ = strconv.ParseInt(last, 10, 64)
	}
	if shard < 0 || shard > MaxShard || realm < 0 || realm > MaxRealm || num > MaxNum {
		return 0, &InvalidEntityIDError{Rebuilt: rebuilt}
	}
	return NewEntityID(shard, realm, num), nil
}

func lastPart(s string) string {
	s = strings.TrimPrefix(s, "0x")
	return s[strings.LastIndexByte(s, '.')+1:]
}

// isLongZero reports whether a 40-hex address is a "long-zero" alias of a num:
// twelve zero bytes, then a num that fits 38 bits.
func isLongZero(hexAddr string) bool {
	if len(hexAddr) != 40 || strings.TrimLeft(hexAddr[:24], "0") != "" {
		return false
	}
	n, err := strconv.ParseUint(hexAddr[24:], 16, 64)
	return err == nil && n <= MaxNum
}

var javaEntityIDPattern = regexp.MustCompile(`^(?:(\d{1,4})\.)?(?:(\d{1,5})\.)?(\d{1,12})$`)

// ParseEntityIDNum is rest-java's EntityIdNumParameter (docs/reference/behavior.md §5.1),
// used by the topic details route: `a.b.c`, `realm.num` or `num`.
func (d EntityDefaults) ParseEntityIDNum(s string) (EntityID, bool) {
	m := javaEntityIDPattern.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	shard, realm := d.Shard, d.Realm
	switch {
	case m[1] != "" && m[2] != "":
		shard, _ = strconv.ParseInt(m[1], 10, 64)
		realm, _ = strconv.ParseInt(m[2], 10, 64)
	case m[1] != "" || m[2] != "":
		// a single dotted prefix is the realm, whichever group the regex put it in
		realm, _ = strconv.ParseInt(m[1]+m[2], 10, 64)
	}
	num, _ := strconv.ParseInt(m[3], 10, 64)
	if shard > MaxShard || realm > MaxRealm || num > MaxNum {
		return 0, false
	}
	return NewEntityID(shard, realm, num), true
}
