package rest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseQuery(t *testing.T) {
	v := func(raw ...string) []QueryValue {
		out := make([]QueryValue, len(raw))
		for i, r := range raw {
			out[i] = QueryValue{Raw: r}
		}
		return out
	}
	tests := []struct {
		name    string
		raw     string
		keys    []string
		values  map[string][]QueryValue
		wantErr string
	}{
		{name: "empty", raw: "", keys: nil, values: map[string][]QueryValue{}},
		{name: "plain", raw: "limit=2&order=desc", keys: []string{"limit", "order"},
			values: map[string][]QueryValue{"limit": v("2"), "order": v("desc")}},
		{name: "keys lower-cased and merged", raw: "sequenceNumber=1&SEQUENCENUMBER=gt:2&Limit=3",
			keys:   []string{"sequencenumber", "limit"},
			values: map[string][]QueryValue{"sequencenumber": v("1", "gt:2"), "limit": v("3")}},
		{name: "order value lower-cased, others kept", raw: "order=DESC&encoding=UTF-8",
			keys:   []string{"order", "encoding"},
			values: map[string][]QueryValue{"order": v("desc"), "encoding": v("UTF-8")}},
		{name: "percent and plus decoded", raw: "timestamp=gt%3A1.2&memo=a+b%20c", keys: []string{"timestamp", "memo"},
			values: map[string][]QueryValue{"timestamp": v("gt:1.2"), "memo": v("a b c")}},
		{name: "malformed escape kept", raw: "a=%ZZ&b=%E0%A4%A", keys: []string{"a", "b"},
			values: map[string][]QueryValue{"a": v("%ZZ"), "b": v("%E0%A4%A")}},
		{name: "non-utf8 escape kept", raw: "a=%FF", keys: []string{"a"}, values: map[string][]QueryValue{"a": v("%FF")}},
		{name: "no equals is empty value", raw: "limit", keys: []string{"limit"}, values: map[string][]QueryValue{"limit": v("")}},
		{name: "empty pairs and keys skipped", raw: "&&=5&limit=1&", keys: []string{"limit"}, values: map[string][]QueryValue{"limit": v("1")}},
		{name: "array brackets", raw: "a[]=1&a[]=2", keys: []string{"a"}, values: map[string][]QueryValue{"a": v("1", "2")}},
		{name: "array index", raw: "a[0]=1", keys: []string{"a"}, values: map[string][]QueryValue{"a": v("1")}},
		{name: "object key", raw: "limit[b]=1", keys: []string{"limit"},
			values: map[string][]QueryValue{"limit": {{Object: true}}}},
		{name: "index at the array limit", raw: "a[100]=1", wantErr: "Array limit exceeded. Only 100 elements allowed in an array."},
		{name: "index below the array limit", raw: "a[99]=1", keys: []string{"a"}, values: map[string][]QueryValue{"a": v("1")}},
		{name: "indexes ordered", raw: "a[1]=3&a[0]=2", keys: []string{"a"}, values: map[string][]QueryValue{"a": v("2", "3")}},
		{name: "index then plain", raw: "a[0]=2&a=3", keys: []string{"a"}, values: map[string][]QueryValue{"a": v("2", "3")}},
		{name: "plain then index", raw: "a=3&a[0]=2", keys: []string{"a"}, values: map[string][]QueryValue{"a": v("3", "2")}},
		{name: "index fills a hole", raw: "a[5]=3&a[]=2", keys: []string{"a"}, values: map[string][]QueryValue{"a": v("2", "3")}},
		{name: "one index twice is a nested array", raw: "a[0]=2&a[0]=3", keys: []string{"a"},
			values: map[string][]QueryValue{"a": {{Object: true}}}},
		{name: "encoded brackets", raw: "a%5B%5d=2&a%5b1%5D=3", keys: []string{"a"}, values: map[string][]QueryValue{"a": v("2", "3")}},
		{name: "bracket key alone", raw: "[limit]=2&[0]=1", keys: []string{"0", "limit"}, values: map[string][]QueryValue{"limit": v("2"), "0": v("1")}},
		{name: "prototype segment dropped", raw: "a[toString]=1&b=2", keys: []string{"b"}, values: map[string][]QueryValue{"b": v("2")}},
		{name: "unclosed bracket is part of the name", raw: "a[=1", keys: []string{"a["}, values: map[string][]QueryValue{"a[": v("1")}},
		{name: "101 values of one bracket key", raw: strings.Repeat("a[]=1&", 101), wantErr: "Array limit exceeded. Only 100 elements allowed in an array."},
		{name: "depth exceeded", raw: "a[b][c]=1", wantErr: "Input depth exceeded depth option of 1 and strictDepth is true"},
		{name: "prototype key dropped", raw: "toString=1&limit=2", keys: []string{"limit"}, values: map[string][]QueryValue{"limit": v("2")}},
		{name: "prototype key in other case kept", raw: "TOSTRING=1", keys: []string{"tostring"}, values: map[string][]QueryValue{"tostring": v("1")}},
		{name: "100 repeats allowed", raw: strings.Repeat("a=1&", 100), keys: []string{"a"},
			values: map[string][]QueryValue{"a": v(strings.Split(strings.Repeat("1,", 100), ",")[:100]...)}},
		{name: "101 repeats refused", raw: strings.Repeat("a=1&", 101), wantErr: "Array limit exceeded. Only 100 elements allowed in an array."},
		{name: "repeats counted per raw key", raw: strings.Repeat("a=1&", 60) + strings.Repeat("A=1&", 60), keys: []string{"a"},
			values: map[string][]QueryValue{"a": v(strings.Split(strings.Repeat("1,", 120), ",")[:120]...)}},
		{name: "integer-like keys first, in numeric order, as in a JavaScript object", raw: "foo=1&10[]=a&2=b&02=c&limit=3",
			keys:   []string{"2", "10", "foo", "02", "limit"},
			values: map[string][]QueryValue{"foo": v("1"), "10": v("a"), "2": v("b"), "02": v("c"), "limit": v("3")}},
		{name: "parameter limit", raw: strings.Repeat("x&", 1000), wantErr: "Parameter limit exceeded. Only 1000 parameters allowed."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := ParseQuery(tt.raw)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.keys, q.Keys); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.values, q.Values); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"", "limit=2&order=DESC", "a[b][c]=1", "a[]=1&a[0]=2&a[x]=3", "%ZZ=%FF&+=+",
		strings.Repeat("a=1&", 101), "timestamp=gt:1&timestamp=lt:2", "Foo=1&foo=2&FOO=3&foo=4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := ParseQuery(raw)
		if err != nil {
			if _, ok := err.(*queryError); !ok {
				t.Fatalf("unexpected error type %T", err)
			}
			return
		}
		if len(q.Keys) != len(q.Values) {
			t.Fatalf("keys %d != values %d", len(q.Keys), len(q.Values))
		}
		for _, k := range q.Keys {
			if k != strings.ToLower(k) || len(q.Values[k]) == 0 {
				t.Fatalf("key %q: not lower-case or no values", k)
			}
		}
		if !strings.Contains(raw, "[") && !strings.Contains(raw, "%5") {
			// the general path agrees with the one for keys without brackets
			order, err := groupValues(raw)
			if err != nil {
				t.Fatal(err)
			}
			g, err := parseBrackets(order)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(q, g) {
				t.Fatalf("%q: %+v, the general path %+v", raw, q, g)
			}
		}
		_ = q.Encode()
	})
}

func ExampleQuery_Encode() {
	q, _ := ParseQuery("sequenceNumber=gt:2&timestamp=lte%3A1&Order=DESC")
	fmt.Println(q.Encode())
	// Output: sequencenumber=gt:2&timestamp=lte:1&order=desc
}
