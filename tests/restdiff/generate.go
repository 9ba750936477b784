package restdiff

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// The routes the generator aims at, in ordinary form over the recorded data
// set (tests/testdata/restdiff/data.sql), with the keys each accepts.
var routes = []struct {
	path   []string // segments; a "{...}" segment is a parameter, by kind
	params []string
}{
	{[]string{"api", "v1", "topics", "{topic}", "messages"}, []string{"encoding", "limit", "order", "sequencenumber", "timestamp"}},
	{[]string{"api", "v1", "topics", "{topic}", "messages", "{seq}"}, nil},
	{[]string{"api", "v1", "topics", "messages", "{ts}"}, nil},
	{[]string{"api", "v1", "schedules"}, []string{"account.id", "limit", "order", "schedule.id"}},
	{[]string{"api", "v1", "schedules", "{schedule}"}, nil},
	{[]string{"api", "v1", "topics", "{topic}"}, nil},
}

// Values by kind: ordinary ones over the data set, then edge and invalid ones.
var values = map[string][]string{
	"{topic}":        {"7", "0.0.7", "0.7", "00007", "8", "9", "10", "999", "0.0.999", "0x07", "-5", "274877906944", "messages", "MESSAGES", "0.0.7.0", "1.2", "0.0.0", "%37", "7%2F1", "7%2f", "%zz", "%", "a%E9", "%C3%A9", "+7", "7.", ".7", "0.0.-3", "9223372036854775807", "schedules"},
	"{seq}":          {"1", "3", "30", "0", "31", "-1", "a", "1.5", "1700000000.000000003", "9223372036854775807", "9223372036854775808", "%31", "1%2F2", "%zz", "+1", "01", "1e1", "messages"},
	"{ts}":           {"1700000000.000000003", "1700000000", "1700000000.1", "123abc", "9999999999.999999999", "0.000000001", "-1", "1700000000.0000000031", "%31700000000.000000003", "%zz", "1.2.3", "messages"},
	"{schedule}":     {"100", "0.0.100", "0.100", "101", "131", "132", "0.0.7", "0x0000000000000000000000000000000000000064", "0.7.8.9", "-1", "abc", "%31%30%30", "%zz", "1%2F0"},
	"timestamp":      {"1700000000.000000003", "1700000000", "1700000000.5", "0", "-1", "9999999999.999999999", "1.2.3", "abc", "1700000000.0000000031", "", "1700000000.000000010"},
	"sequencenumber": {"0", "1", "3", "10", "30", "31", "-1", "9223372036854775807", "9223372036854775808", "abc", "1.5", ""},
	"limit":          {"1", "2", "5", "25", "100", "101", "0", "-1", "abc", "1e1", "", " 2", "2.0"},
	"order":          {"asc", "desc", "ASC", "Desc", "up", ""},
	"encoding":       {"base64", "utf-8", "utf8", "UTF-8", "binary", ""},
	"schedule.id":    {"100", "0.0.100", "0.105", "0x0000000000000000000000000000000000000064", "0.0.-1", "abc", "99999999999999", "120", ""},
	"account.id":     {"2", "0.0.2", "0.0.3", "4", "0xabcdefabcdefabcdefabcdefabcdefabcdefabcd", "-1", "abc", ""},
}

var operators = []string{"", "", "", "eq:", "ne:", "gt:", "gte:", "lt:", "lte:", "GT:", "Lte:", "xx:", ":", "gt:gt:"}

// Keys that no route accepts, and keys JavaScript objects already have.
var unknownKeys = []string{"foo", "Foo", "FOO", "bar", "timestamp", "topic.id", "constructor", "toString", "__proto__", "hasOwnProperty", "valueOf", "Constructor", "TOSTRING", "__PROTO__", "1", "0", "10"}

// Generate makes n request targets from seed: the same seed and n give the
// same requests. It goes through every route's path shapes first, then
// combines query strings at random.
func Generate(seed uint64, n int) []Request {
	g := &generator{r: rand.New(rand.NewPCG(seed, 0x6d69726f72716c))}
	out := g.shapes()
	for len(out) < n {
		out = append(out, g.random())
	}
	return out[:max(n, 0)]
}

type generator struct{ r *rand.Rand }

func (g *generator) pick(s []string) string { return s[g.r.IntN(len(s))] }

// ordinary is route i's path with the first (ordinary) value of each parameter.
func ordinary(i int) []string {
	segs := append([]string(nil), routes[i].path...)
	for j, s := range segs {
		if strings.HasPrefix(s, "{") {
			segs[j] = values[s][0]
		}
	}
	return segs
}

func join(segs []string) string { return "/" + strings.Join(segs, "/") }

// shapes lists, for every route, each odd path shape and every parameter
// value of its path, once.
func (g *generator) shapes() []Request {
	var out []Request
	add := func(via, target string) { out = append(out, Request{Target: target, Via: via}) }
	for i, rt := range routes {
		base := ordinary(i)
		p := join(base)
		add("ordinary", p)
		for j, s := range rt.path {
			if !strings.HasPrefix(s, "{") {
				continue
			}
			for _, v := range values[s] {
				segs := append([]string(nil), base...)
				segs[j] = v
				add("path value", join(segs))
			}
		}
		for _, suffix := range []string{"/", "//", "/.", "/..", "/x", "/messages", "/%20", "/%zz", "%zz", "x", "#frag", "/#", "?", "??", "?&", "?#x", "#?limit=1", "?limit=1#limit=2", "/?", ";x", "%2F", "/%2e", "/%2E%2E"} {
			add("path suffix", p+suffix)
		}
		for j := 1; j <= len(base); j++ {
			for _, ins := range []string{"", ".", "..", "x", "%2e"} {
				segs := append(append(append([]string(nil), base[:j]...), ins), base[j:]...)
				add("path insert", join(segs))
			}
		}
		for j := range base {
			for _, m := range []func(string) string{strings.ToUpper, title, badEscape, escapeFirst, nonASCII, hashInside} {
				segs := append([]string(nil), base...)
				segs[j] = m(segs[j])
				add("segment spelling", join(segs))
			}
		}
		add("prefix", "/"+p)
		add("prefix", strings.Replace(p, "/api/v1/", "/api/v1//", 1))
		add("prefix", strings.Replace(p, "/api/v1/", "/api/v1/./", 1))
		add("prefix", strings.Replace(p, "/api/v1/", "/api/v2/../v1/", 1))
		add("prefix", strings.Replace(p, "/api/", "/API/", 1))
		if rt.params != nil {
			for _, k := range rt.params {
				for _, v := range values[k] {
					for _, op := range []string{"", "gt:", "lte:", "ne:", "eq:"} {
						add("parameter", p+"?"+k+"="+op+v)
					}
				}
			}
			for _, q := range qsShapes(rt.params[1]) {
				add("qs syntax", p+"?"+q)
			}
		} else {
			add("parameter on a single route", p+"?limit=1")
			add("parameter on a single route", p+"?foo=1&Foo=2&foo=3")
		}
		// Over 16 KiB: the target itself, and the head through a header.
		add("size", p+"?foo="+strings.Repeat("a", 16<<10))
		add("size", p+"?foo="+strings.Repeat("a", 16<<10-600))
		out = append(out, Request{Target: p, Header: map[string]string{"X-Pad": strings.Repeat("b", 16<<10)}, Via: "size"})
		out = append(out, Request{Target: p, Header: map[string]string{"X-Pad": strings.Repeat("b", 15<<10)}, Via: "size"})
	}
	return out
}

// qsShapes are qs's syntaxes around key k (an accepted key: limit or a filter).
func qsShapes(k string) []string {
	rep := func(s string, n int) string { return strings.TrimSuffix(strings.Repeat(s+"&", n), "&") }
	return []string{
		k + "[]=2", k + "[]=2&" + k + "[]=3", k + "[0]=2", k + "[1]=3&" + k + "[0]=2", k + "[100]=2", k + "[101]=2",
		k + "[a]=2", k + "[a][b]=2", k + "[]=2&" + k + "=3", k + "=2&" + k + "[]=3", "[" + k + "]=2", k + "[=2", k + "]=2",
		k + "[0]=2&" + k + "[0]=3", k + "%5B%5D=2", k + "%5b0%5d=2",
		rep(k+"=2", 99), rep(k+"=2", 100), rep(k+"=2", 101), rep(k+"[]=2", 101), rep(k+"[0]=2", 101),
		rep("foo=1", 3), rep("foo=1", 101), "foo=1&Foo=2&FOO=3&foo=4", "foo[]=1&foo[]=2", "foo[a]=1",
		"=1", "&&", k, k + "=", "&" + k + "=2&", k + "=2=3", "%zz=1", k + "=%zz", k + "=%", k + "+=2", k + "=+2", "a=%E9",
		"constructor=1", "__proto__=1", "Constructor=1", "ToString=1&" + k + "=2", "__Proto__[]=1", "a[__proto__]=1&" + k + "=2", "a[valueOf]=1", "toString=1&" + k + "=2", "hasOwnProperty[]=1", "1=1&0=0", "b=1&a=2&10=1&2=1",
		strings.ToUpper(k) + "=2&" + k + "=3", k + "=2&" + strings.ToUpper(k) + "=3",
		rep(k+"=2", 50) + "&" + rep(strings.ToUpper(k)+"=2", 51),
	}
}

func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func badEscape(s string) string { return s + "%G1" }

func escapeFirst(s string) string {
	if s == "" {
		return s
	}
	return "%" + strings.ToUpper(strconv.FormatInt(int64(s[0]), 16)) + s[1:]
}

func nonASCII(s string) string { return s + "\xc3\xa9" }

func hashInside(s string) string {
	if len(s) < 2 {
		return s + "#"
	}
	return s[:1] + "#" + s[1:]
}

// random is a route with a random query string: accepted keys with their
// operators and values, spelt in qs's syntaxes, mixed with unknown keys.
func (g *generator) random() Request {
	i := g.r.IntN(len(routes))
	rt := routes[i]
	segs := ordinary(i)
	for j, s := range rt.path {
		if strings.HasPrefix(s, "{") && g.r.IntN(3) == 0 {
			segs[j] = g.pick(values[s][:min(len(values[s]), 8)])
		}
	}
	path := join(segs)
	if g.r.IntN(8) == 0 {
		path = strings.ToUpper(path)
	}
	if g.r.IntN(8) == 0 {
		path += "/"
	}
	keys := rt.params
	if keys == nil {
		keys = []string{"limit"}
	}
	var parts []string
	for range g.r.IntN(5) {
		switch g.r.IntN(10) {
		case 0:
			parts = append(parts, g.pick(unknownKeys)+"="+strconv.Itoa(g.r.IntN(3)))
		default:
			k := g.pick(keys)
			v := g.pick(values[k])
			op := g.pick(operators)
			switch g.r.IntN(10) {
			case 0:
				k = strings.ToUpper(k)
			case 1:
				k += "[]"
			case 2:
				k += "[" + strconv.Itoa(g.r.IntN(3)) + "]"
			case 3:
				v = strings.ReplaceAll(op+v, ":", "%3A")
				op = ""
			}
			parts = append(parts, k+"="+op+v)
		}
	}
	target := path
	if len(parts) > 0 || g.r.IntN(10) == 0 {
		target += "?" + strings.Join(parts, "&")
	}
	return Request{Target: target, Via: "random"}
}
