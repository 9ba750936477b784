package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mirrorql/redact"
	"mirrorql/tests/testpki"
)

// hostilePasswords are passwords an operator may set in the umbrella's
// rest.db.password (any string): every character a URL, a keyword/value
// string, a shell or the kubelet's $(VAR) gives a meaning to, spaces,
// quotes, backslashes, non-ASCII, bytes that are no UTF-8, and none.
var hostilePasswords = []string{
	"Abc123def456",
	"p@ss:w/rd#1?x%&y=z",
	"@", ":", "/", "?", "#", "%", "&", "=", "%41", "%zz",
	"a space", " leading", "trailing ", "  ",
	"quote'single", `quote"double`, "'", "''", `"`, "`back`tick",
	`back\slash`, `\`, `\\`, `\'`, `'\`,
	"pässwörd-€", "密码🔑", "ﬀ\u00a0nbsp",
	"tab\there", "new\nline", "cr\r\n", "\x01\x7f",
	"$(MIRROR_DB_PASSWORD)", "$$(X)", "${HOME}", "$HOME",
	"postgres://u:p@h:5432/db?sslmode=disable", "host=evil password=x", "password='x'",
	"\xff\xfe not UTF-8",
	strings.Repeat("long-", 200),
	"",
}

// pki is a CA with a client pair, written as files in dir.
type pki struct {
	ca, cert, key, otherKey, notPEM string
}

func writePKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	ca := testpki.NewCA(t, "mirrorql test CA")
	client := ca.Client(t, "mirror_rest")
	other := ca.Client(t, "someone else")
	p := pki{
		ca: filepath.Join(dir, "ca.crt"), cert: filepath.Join(dir, "tls.crt"), key: filepath.Join(dir, "tls.key"),
		otherKey: filepath.Join(dir, "other.key"), notPEM: filepath.Join(dir, "not.pem"),
	}
	for path, b := range map[string][]byte{p.ca: ca.PEM, p.cert: client.Cert, p.key: client.Key, p.otherKey: other.Key,
		p.notPEM: []byte("not a certificate\n")} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// writeFile writes content into a new file of t's and returns its path.
func writeFile(t *testing.T, content string) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "setting")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// environ is vars as os.Environ gives them.
func environ(vars map[string]string) []string {
	var out []string
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	return out
}

// secret is a password each table row sets beside its own settings where it
// sets none: no error may show it.
const secret = "s3cr3t:P@ss wörd"

// The settings from every source, their precedence, the password as given,
// and each bad setting refused with its variable named and the password
// nowhere.
func TestDatabaseSettings(t *testing.T) {
	p := writePKI(t)
	type want struct {
		host, name, user, password, sslmode string
		port                                uint16
		separate, tls, clientCert           bool
		from                                map[string]string // part key → variable
	}
	defaults := want{host: "127.0.0.1", port: 5432, name: "mirror_node", user: "postgres", sslmode: "disable"}
	with := func(f func(*want)) want { w := defaults; w.separate = true; f(&w); return w }
	for _, tc := range []struct {
		name string
		vars map[string]string
		want want
		errs []string // each in the error; none: no error
	}{
		{name: "nothing: the default URL", vars: map[string]string{}, want: defaults},
		{name: "the umbrella's Secret", vars: map[string]string{
			"HIERO_MIRROR_REST_DB_HOST": "mirror-citus-reads", "HIERO_MIRROR_REST_DB_NAME": "mirror_node",
			"HIERO_MIRROR_REST_DB_USERNAME": "mirror_rest", "HIERO_MIRROR_REST_DB_PASSWORD": secret,
		}, want: with(func(w *want) {
			w.host, w.user, w.password = "mirror-citus-reads", "mirror_rest", secret
			w.from = map[string]string{"host": "HIERO_MIRROR_REST_DB_HOST", "username": "HIERO_MIRROR_REST_DB_USERNAME",
				"password": "HIERO_MIRROR_REST_DB_PASSWORD", "port": ""}
		})},
		{name: "the module's older HEDERA_ names", vars: map[string]string{
			"HEDERA_MIRROR_REST_DB_HOST": "db", "HEDERA_MIRROR_REST_DB_PORT": "6432", "HEDERA_MIRROR_REST_DB_PASSWORD": secret,
		}, want: with(func(w *want) {
			w.host, w.port, w.password = "db", 6432, secret
			w.from = map[string]string{"host": "HEDERA_MIRROR_REST_DB_HOST", "port": "HEDERA_MIRROR_REST_DB_PORT"}
		})},
		{name: "own names over HIERO_ over HEDERA_", vars: map[string]string{
			"MIRRORQL_DB_HOST": "own", "HIERO_MIRROR_REST_DB_HOST": "hiero", "HEDERA_MIRROR_REST_DB_HOST": "hedera",
			"HIERO_MIRROR_REST_DB_NAME": "hiero", "HEDERA_MIRROR_REST_DB_NAME": "hedera",
			"HEDERA_MIRROR_REST_DB_USERNAME": "hedera", "MIRRORQL_DB_PASSWORD": "own", "HIERO_MIRROR_REST_DB_PASSWORD": "hiero",
		}, want: with(func(w *want) {
			w.host, w.name, w.user, w.password = "own", "hiero", "hedera", "own"
			w.from = map[string]string{"host": "MIRRORQL_DB_HOST", "name": "HIERO_MIRROR_REST_DB_NAME",
				"username": "HEDERA_MIRROR_REST_DB_USERNAME", "password": "MIRRORQL_DB_PASSWORD"}
		})},
		{name: "an empty value is unset, but for the password", vars: map[string]string{
			"MIRRORQL_DB_HOST": "", "HIERO_MIRROR_REST_DB_HOST": "db", "MIRRORQL_DB_PASSWORD": "", "HIERO_MIRROR_REST_DB_PASSWORD": secret,
		}, want: with(func(w *want) {
			w.host = "db"
			w.from = map[string]string{"host": "HIERO_MIRROR_REST_DB_HOST", "password": "MIRRORQL_DB_PASSWORD"}
		})},
		{name: "variables of other settings and modules are ignored", vars: map[string]string{
			"HIERO_MIRROR_REST_DB_PRIMARYHOST": "primary", "HIERO_MIRROR_REST_DB_POOL_MAXCONNECTIONS": "x",
			"HIERO_MIRROR_IMPORTER_DB_HOST": "importer", "HIERO_MIRROR_REST_RESPONSE_LIMIT_MAX": "nonsense",
			"HEDERA_MIRROR_GRPC_DB_PASSWORD": "grpc", "hiero_mirror_rest_db_host": "lower case",
		}, want: defaults},
		{name: "the URL with a separate user and password", vars: map[string]string{
			"MIRRORQL_DATABASE_URL":         "postgres://nobody:url-password@db.example:6432/mirror?sslmode=disable",
			"HIERO_MIRROR_REST_DB_USERNAME": "mirror_rest", "MIRRORQL_DB_PASSWORD": secret,
		}, want: func() want {
			w := defaults
			w.host, w.port, w.name, w.user, w.password = "db.example", 6432, "mirror", "mirror_rest", secret
			return w
		}()},
		{name: "the URL's own password", vars: map[string]string{
			"MIRRORQL_DATABASE_URL": "postgres://u:p%40ss@db.example/mirror",
		}, want: func() want {
			w := defaults
			w.host, w.name, w.user, w.password, w.sslmode, w.tls = "db.example", "mirror", "u", "p@ss", "", true
			return w
		}()},
		{name: "the module's sslMode spelling", vars: map[string]string{"HIERO_MIRROR_REST_DB_SSLMODE": "VERIFY_FULL"},
			want: with(func(w *want) { w.sslmode, w.tls = "verify-full", true })},
		{name: "tls.enabled is require", vars: map[string]string{"HIERO_MIRROR_REST_DB_TLS_ENABLED": "true"},
			want: with(func(w *want) { w.sslmode, w.tls = "require", true })},
		{name: "tls.enabled below the module's sslMode", vars: map[string]string{
			"HIERO_MIRROR_REST_DB_TLS_ENABLED": "true", "HIERO_MIRROR_REST_DB_SSLMODE": "verify-ca", "HIERO_MIRROR_REST_DB_TLS_CA": p.ca,
		}, want: with(func(w *want) { w.sslmode, w.tls = "verify-ca", true })},
		{name: "own sslmode decides alone", vars: map[string]string{
			"HIERO_MIRROR_REST_DB_TLS_ENABLED": "true", "MIRRORQL_DB_SSLMODE": "prefer",
		}, want: with(func(w *want) { w.sslmode, w.tls = "prefer", true })},
		{name: "tls.enabled false", vars: map[string]string{"HIERO_MIRROR_REST_DB_TLS_ENABLED": "false"}, want: with(func(*want) {})},
		{name: "TLS files", vars: map[string]string{
			"MIRRORQL_DB_SSLMODE": "verify-full", "HIERO_MIRROR_REST_DB_TLS_CA": p.ca,
			"HIERO_MIRROR_REST_DB_TLS_CERT": p.cert, "MIRRORQL_DB_TLS_KEY": p.key,
		}, want: with(func(w *want) {
			w.sslmode, w.tls, w.clientCert = "verify-full", true, true
			w.from = map[string]string{"tls_ca": "HIERO_MIRROR_REST_DB_TLS_CA", "tls_key": "MIRRORQL_DB_TLS_KEY"}
		})},

		{name: "password file with a line ending", vars: map[string]string{"MIRRORQL_DB_PASSWORD_FILE": writeFile(t, secret+"\n")},
			want: func() want { w := defaults; w.password = secret; return w }()},
		{name: "password file with a CRLF", vars: map[string]string{"MIRRORQL_DB_PASSWORD_FILE": writeFile(t, secret+"\r\n")},
			want: func() want { w := defaults; w.password = secret; return w }()},
		{name: "password file without a line ending", vars: map[string]string{"MIRRORQL_DB_PASSWORD_FILE": writeFile(t, secret)},
			want: func() want { w := defaults; w.password = secret; return w }()},
		{name: "password file: a password ending in a line ending", vars: map[string]string{"MIRRORQL_DB_PASSWORD_FILE": writeFile(t, secret+"\n\n")},
			want: func() want { w := defaults; w.password = secret + "\n"; return w }()},
		{name: "password file, empty", vars: map[string]string{"MIRRORQL_DB_PASSWORD_FILE": writeFile(t, "")},
			want: defaults},
		{name: "password file over the module's password", vars: map[string]string{
			"MIRRORQL_DB_PASSWORD_FILE": writeFile(t, secret), "HIERO_MIRROR_REST_DB_PASSWORD": "module",
		}, want: func() want { w := defaults; w.password = secret; return w }()},

		{name: "URL and a separate host", vars: map[string]string{
			"MIRRORQL_DATABASE_URL": "postgres://u:" + secret + "@db/mirror_node", "HIERO_MIRROR_REST_DB_HOST": "other",
		}, errs: []string{"MIRRORQL_DATABASE_URL is set, and so is HIERO_MIRROR_REST_DB_HOST"}},
		{name: "URL that does not parse", vars: map[string]string{"MIRRORQL_DATABASE_URL": "postgres://u:" + secret + "@db:port/x"},
			errs: []string{"MIRRORQL_DATABASE_URL: cannot parse"}},
		{name: "password twice", vars: map[string]string{"MIRRORQL_DB_PASSWORD": secret, "MIRRORQL_DB_PASSWORD_FILE": writeFile(t, secret)},
			errs: []string{"MIRRORQL_DB_PASSWORD and MIRRORQL_DB_PASSWORD_FILE are both set"}},
		{name: "password file missing", vars: map[string]string{"MIRRORQL_DB_PASSWORD_FILE": "/nonexistent/password"},
			errs: []string{"MIRRORQL_DB_PASSWORD_FILE: open /nonexistent/password: no such file or directory"}},
		{name: "password file a directory", vars: map[string]string{"MIRRORQL_DB_PASSWORD_FILE": t.TempDir()},
			errs: []string{"MIRRORQL_DB_PASSWORD_FILE: read ", "is a directory"}},
		{name: "password file with a NUL", vars: map[string]string{"MIRRORQL_DB_PASSWORD_FILE": writeFile(t, secret+"\x00")},
			errs: []string{"MIRRORQL_DB_PASSWORD_FILE: ", "holds a NUL byte"}},
		{name: "password file too large", vars: map[string]string{"MIRRORQL_DB_PASSWORD_FILE": writeFile(t, strings.Repeat(secret, 10000))},
			errs: []string{"MIRRORQL_DB_PASSWORD_FILE: ", "is larger than 65536 bytes"}},
		{name: "port not a number", vars: map[string]string{"HIERO_MIRROR_REST_DB_PORT": "postgres"},
			errs: []string{`HIERO_MIRROR_REST_DB_PORT: "postgres" is not a port`}},
		{name: "port 0", vars: map[string]string{"MIRRORQL_DB_PORT": "0"}, errs: []string{`MIRRORQL_DB_PORT: "0" is not a port`}},
		{name: "port too large", vars: map[string]string{"MIRRORQL_DB_PORT": "65536"}, errs: []string{`MIRRORQL_DB_PORT: "65536" is not a port`}},
		{name: "sslmode unknown", vars: map[string]string{"HIERO_MIRROR_REST_DB_SSLMODE": "strict"},
			errs: []string{`HIERO_MIRROR_REST_DB_SSLMODE: "strict" is not an sslmode (disable, allow, prefer, require, verify-ca, verify-full)`}},
		{name: "tls.enabled not a boolean", vars: map[string]string{"HIERO_MIRROR_REST_DB_TLS_ENABLED": "yes please"},
			errs: []string{`HIERO_MIRROR_REST_DB_TLS_ENABLED: "yes please" is neither true nor false`}},
		{name: "a line ending in the host", vars: map[string]string{"HIERO_MIRROR_REST_DB_HOST": "db\n"},
			errs: []string{"HIERO_MIRROR_REST_DB_HOST holds a control character (byte 2)"}},
		{name: "CA missing", vars: map[string]string{"MIRRORQL_DB_SSLMODE": "verify-full", "MIRRORQL_DB_TLS_CA": "/nonexistent/ca.crt"},
			errs: []string{"MIRRORQL_DB_TLS_CA: open /nonexistent/ca.crt: no such file or directory"}},
		{name: "CA not PEM", vars: map[string]string{"MIRRORQL_DB_SSLMODE": "verify-full", "HIERO_MIRROR_REST_DB_TLS_CA": p.notPEM},
			errs: []string{"HIERO_MIRROR_REST_DB_TLS_CA: " + p.notPEM + " holds no PEM certificate"}},
		{name: "CA a key", vars: map[string]string{"MIRRORQL_DB_SSLMODE": "verify-full", "MIRRORQL_DB_TLS_CA": p.key},
			errs: []string{"MIRRORQL_DB_TLS_CA: " + p.key + " holds no PEM certificate"}},
		{name: "certificate without key", vars: map[string]string{"MIRRORQL_DB_SSLMODE": "require", "HIERO_MIRROR_REST_DB_TLS_CERT": p.cert},
			errs: []string{"HIERO_MIRROR_REST_DB_TLS_CERT is set without a key: set MIRRORQL_DB_TLS_KEY (or HIERO_MIRROR_REST_DB_TLS_KEY) too"}},
		{name: "key without certificate", vars: map[string]string{"MIRRORQL_DB_SSLMODE": "require", "MIRRORQL_DB_TLS_KEY": p.key},
			errs: []string{"MIRRORQL_DB_TLS_KEY is set without a certificate"}},
		{name: "key of another certificate", vars: map[string]string{
			"MIRRORQL_DB_SSLMODE": "require", "MIRRORQL_DB_TLS_CERT": p.cert, "HIERO_MIRROR_REST_DB_TLS_KEY": p.otherKey,
		}, errs: []string{"HIERO_MIRROR_REST_DB_TLS_KEY (" + p.otherKey + ") and MIRRORQL_DB_TLS_CERT (" + p.cert + ") are not a pair: tls: private key does not match public key"}},
		{name: "key missing", vars: map[string]string{"MIRRORQL_DB_SSLMODE": "require", "MIRRORQL_DB_TLS_CERT": p.cert, "MIRRORQL_DB_TLS_KEY": "/nonexistent/tls.key"},
			errs: []string{"MIRRORQL_DB_TLS_KEY: open /nonexistent/tls.key: no such file or directory"}},
		{name: "key not PEM", vars: map[string]string{"MIRRORQL_DB_SSLMODE": "require", "MIRRORQL_DB_TLS_CERT": p.cert, "MIRRORQL_DB_TLS_KEY": p.notPEM},
			errs: []string{"MIRRORQL_DB_TLS_KEY: " + p.notPEM + " holds no PEM private key"}},
		{name: "key encrypted", vars: map[string]string{"MIRRORQL_DB_SSLMODE": "require", "MIRRORQL_DB_TLS_CERT": p.cert,
			"MIRRORQL_DB_TLS_KEY": writeFile(t, "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n")},
			errs: []string{"MIRRORQL_DB_TLS_KEY: ", "is encrypted"}},
		{name: "certificate not PEM", vars: map[string]string{"MIRRORQL_DB_SSLMODE": "require", "MIRRORQL_DB_TLS_CERT": p.key, "MIRRORQL_DB_TLS_KEY": p.key},
			errs: []string{"MIRRORQL_DB_TLS_CERT: " + p.key + " holds no PEM certificate"}},
		{name: "TLS files without TLS", vars: map[string]string{"HIERO_MIRROR_REST_DB_TLS_CA": p.ca},
			errs: []string{"HIERO_MIRROR_REST_DB_TLS_CA given but sslmode is disable"}},
		{name: "several at once", vars: map[string]string{"MIRRORQL_DB_PORT": "x", "MIRRORQL_DB_SSLMODE": "y"},
			errs: []string{`MIRRORQL_DB_PORT: "x"`, `MIRRORQL_DB_SSLMODE: "y"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := tc.vars
			if len(tc.errs) > 0 {
				if _, set := vars["MIRRORQL_DB_PASSWORD"]; !set {
					if _, set := vars["MIRRORQL_DB_PASSWORD_FILE"]; !set {
						vars["HIERO_MIRROR_REST_DB_PASSWORD"] = secret
					}
				}
			}
			c, err := LoadEnv(environ(vars))
			if len(tc.errs) > 0 {
				if err == nil {
					t.Fatalf("no error; want %q", tc.errs)
				}
				for _, e := range tc.errs {
					if !strings.Contains(err.Error(), e) {
						t.Errorf("error %q\n  does not say %q", err, e)
					}
				}
				if redact.Fragments(err.Error(), secret) != err.Error() {
					t.Errorf("error %q shows (a piece of) the password", err)
				}
				if strings.ContainsAny(err.Error(), "\n\r") {
					t.Errorf("error %q is not one line", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w := tc.want
			if c.Database.Separate() != w.separate {
				t.Errorf("separate %v, want %v", c.Database.Separate(), w.separate)
			}
			cc, err := c.DBConnConfig()
			if err != nil {
				t.Fatal(err)
			}
			if cc.Host != w.host || cc.Port != w.port || cc.Database != w.name || cc.User != w.user || cc.Password != w.password {
				t.Errorf("host %q port %d database %q user %q password %q;\nwant %q %d %q %q %q",
					cc.Host, cc.Port, cc.Database, cc.User, cc.Password, w.host, w.port, w.name, w.user, w.password)
			}
			if w.sslmode != "" && c.Database.Separate() && c.Database.SSLMode != w.sslmode {
				t.Errorf("sslmode %q, want %q", c.Database.SSLMode, w.sslmode)
			}
			if (cc.TLSConfig != nil) != w.tls {
				t.Errorf("TLS %v, want %v", cc.TLSConfig != nil, w.tls)
			}
			if w.clientCert && (cc.TLSConfig == nil || len(cc.TLSConfig.Certificates) != 1 || cc.TLSConfig.RootCAs == nil) {
				t.Errorf("TLS without the client certificate or the CA: %+v", cc.TLSConfig)
			}
			for part, variable := range w.from {
				got := ""
				for q := range numParts {
					if dbParts[q].key == part {
						got = c.Database.from[q]
					}
				}
				if got != variable {
					t.Errorf("%s from %q, want %q", part, got, variable)
				}
			}
		})
	}
}

// Every sslmode gives the driver's TLS for it: verify-full checks the host's
// name, prefer and allow try the other way too, disable has none.
func TestDatabaseSSLModes(t *testing.T) {
	p := writePKI(t)
	for mode, want := range map[string]struct {
		first, fallback bool // TLS on the first attempt, and an attempt the other way
		serverName      string
	}{
		"disable":     {},
		"allow":       {first: false, fallback: true},
		"prefer":      {first: true, fallback: true},
		"require":     {first: true},
		"verify-ca":   {first: true},
		"verify-full": {first: true, serverName: "db.example"},
	} {
		vars := map[string]string{"MIRRORQL_DB_HOST": "db.example", "MIRRORQL_DB_SSLMODE": mode}
		if mode != "disable" {
			vars["MIRRORQL_DB_TLS_CA"] = p.ca
		}
		c, err := LoadEnv(environ(vars))
		if err != nil {
			t.Fatal(mode, err)
		}
		cc, err := c.DBConnConfig()
		if err != nil {
			t.Fatal(mode, err)
		}
		if (cc.TLSConfig != nil) != want.first || (len(cc.Fallbacks) > 0) != want.fallback {
			t.Errorf("%s: TLS first %v, fallbacks %d", mode, cc.TLSConfig != nil, len(cc.Fallbacks))
		}
		if want.serverName != "" && (cc.TLSConfig.ServerName != want.serverName || cc.TLSConfig.InsecureSkipVerify) {
			t.Errorf("%s: server name %q, skip verify %v", mode, cc.TLSConfig.ServerName, cc.TLSConfig.InsecureSkipVerify)
		}
	}
}

// The driver's own environment adds nothing to TLS that the settings did
// not ask for: a stray PGSSLROOTCERT leaves require unverified.
func TestDatabasePGVariablesIgnored(t *testing.T) {
	p := writePKI(t)
	t.Setenv("PGSSLROOTCERT", p.ca)
	t.Setenv("PGHOST", "elsewhere")
	c, err := LoadEnv(environ(map[string]string{"HIERO_MIRROR_REST_DB_TLS_ENABLED": "true"}))
	if err != nil {
		t.Fatal(err)
	}
	cc, err := c.DBConnConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cc.Host != "127.0.0.1" || cc.TLSConfig == nil || cc.TLSConfig.RootCAs != nil || cc.TLSConfig.VerifyPeerCertificate != nil {
		t.Errorf("host %q, TLS %+v: the PG variables leaked in", cc.Host, cc.TLSConfig)
	}
	// A password given, even empty, is the password; none given leaves
	// the driver's own (PGPASSWORD, ~/.pgpass), as for a URL without one.
	t.Setenv("PGPASSWORD", "from PGPASSWORD")
	for vars, want := range map[string]string{"MIRRORQL_DB_PASSWORD=": "", "HIERO_MIRROR_REST_DB_HOST=db": "from PGPASSWORD"} {
		c, err := LoadEnv([]string{vars})
		if err != nil {
			t.Fatal(err)
		}
		if cc, err := c.DBConnConfig(); err != nil || cc.Password != want {
			t.Errorf("%s: password %q (%v), want %q", vars, cc.Password, err, want)
		}
	}
}

// The start warns of a password the driver's scram-sha-256 login cannot
// send, and of no other: not those the pool sends in PostgreSQL's form.
func TestScramTrouble(t *testing.T) {
	for _, pw := range hostilePasswords {
		if why := scramTrouble(pw); (why != "") != (pw == "\xff\xfe not UTF-8") {
			t.Errorf("%q: %q", pw, why)
		}
	}
	for pw, want := range map[string]string{
		"ﬁ": "", "™": "", "①": "", "Ａ": "", "soft\u00adhyphen": "", "❤\ufe0f": "", "zw\u200bj": "",
		// Not UTF-8, but pgx leaves it as it is: it holds a character
		// Unicode 3.2 lacked, or one PRECIS refuses.
		"🔑\xff": "", "\xff\t": "",
		"ﬁ\xff":               "not UTF-8",
		"a\u0340b":            "SASLprep refuses",
		"\u05d0\u00a0a\u05d0": "SASLprep refuses",
	} {
		if why := scramTrouble(pw); (want == "" && why != "") || !strings.Contains(why, want) {
			t.Errorf("%+q: %q, want %q", pw, why, want)
		}
	}
}

// Every hostile password reaches the driver as it was given, through the
// module's variable, mirrorql's own, its file, and beside a URL.
func TestDatabaseHostilePasswords(t *testing.T) {
	for _, pw := range hostilePasswords {
		file := pw + "\n"
		for _, vars := range []map[string]string{
			{"HIERO_MIRROR_REST_DB_HOST": "db", "HIERO_MIRROR_REST_DB_PASSWORD": pw},
			{"MIRRORQL_DB_HOST": "db", "MIRRORQL_DB_PASSWORD": pw},
			{"MIRRORQL_DB_HOST": "db", "MIRRORQL_DB_PASSWORD_FILE": writeFile(t, file)},
			{"MIRRORQL_DATABASE_URL": "postgres://u@db/mirror_node", "HEDERA_MIRROR_REST_DB_PASSWORD": pw},
		} {
			c, err := LoadEnv(environ(vars))
			if err != nil {
				t.Fatalf("%q via %v: %v", pw, vars, err)
			}
			cc, err := c.DBConnConfig()
			if err != nil {
				t.Fatalf("%q via %v: %v", pw, vars, err)
			}
			if cc.Password != pw || cc.Host != "db" {
				t.Errorf("via %v: password %q (host %q), want %q", vars, cc.Password, cc.Host, pw)
			}
		}
	}
}

// The variables the service reads include the database's; a typo of one is
// refused as any MIRRORQL_ typo is, and the module's names never are.
func TestDatabaseNames(t *testing.T) {
	names := Names()
	for _, n := range []string{"MIRRORQL_DB_HOST", "MIRRORQL_DB_PORT", "MIRRORQL_DB_NAME", "MIRRORQL_DB_USERNAME",
		"MIRRORQL_DB_PASSWORD", "MIRRORQL_DB_PASSWORD_FILE", "MIRRORQL_DB_SSLMODE", "MIRRORQL_DB_TLS_CA",
		"MIRRORQL_DB_TLS_CERT", "MIRRORQL_DB_TLS_KEY", "MIRRORQL_DATABASE_URL"} {
		if !names[n] {
			t.Errorf("Names() lacks %s", n)
		}
	}
	if _, err := LoadEnv([]string{"MIRRORQL_DB_HSOT=db"}); err == nil || !strings.Contains(err.Error(), "MIRRORQL_DB_HSOT") {
		t.Errorf("typo: %v", err)
	}
	if _, err := LoadEnv([]string{"HIERO_MIRROR_REST_DB_HSOT=db", "HIERO_MIRROR_WEB3_EVM_NETWORK=x"}); err != nil {
		t.Errorf("a module's variable was refused: %v", err)
	}
}

// The log at start says where each part came from, and never the password.
func TestLogDatabase(t *testing.T) {
	pwFile := writeFile(t, secret+"\n")
	for name, tc := range map[string]struct {
		vars map[string]string
		want map[string]string // "from" as logged
	}{
		"separate": {vars: map[string]string{"HIERO_MIRROR_REST_DB_HOST": "db", "HEDERA_MIRROR_REST_DB_HOST": "old",
			"MIRRORQL_DB_PASSWORD_FILE": pwFile, "HIERO_MIRROR_REST_DB_PASSWORD": secret},
			want: map[string]string{"host": "HIERO_MIRROR_REST_DB_HOST", "port": "default", "username": "default",
				"password": "MIRRORQL_DB_PASSWORD_FILE " + pwFile}},
		"url": {vars: map[string]string{"MIRRORQL_DATABASE_URL": "postgres://" + url.UserPassword("u", secret).String() + "@db/x", "MIRRORQL_DB_USERNAME": "me"},
			want: map[string]string{"url": "MIRRORQL_DATABASE_URL", "username": "MIRRORQL_DB_USERNAME", "password": "url"}},
		"defaults": {vars: map[string]string{}, want: map[string]string{"url": "default", "password": "url"}},
	} {
		c, err := LoadEnv(environ(tc.vars))
		if err != nil {
			t.Fatal(name, err)
		}
		var buf bytes.Buffer
		c.LogDatabase(slog.New(slog.NewJSONHandler(&buf, nil)))
		if redact.Fragments(buf.String(), secret) != buf.String() {
			t.Errorf("%s: the log shows the password:\n%s", name, buf.String())
		}
		var line struct {
			Msg  string
			From map[string]string
		}
		if err := json.Unmarshal(bytes.SplitN(buf.Bytes(), []byte("\n"), 2)[0], &line); err != nil {
			t.Fatal(err)
		}
		for k, v := range tc.want {
			if line.From[k] != v {
				t.Errorf("%s: from.%s %q, want %q\n%s", name, k, line.From[k], v, buf.String())
			}
		}
		if name == "separate" && !strings.Contains(buf.String(), `"ignored":"HEDERA_MIRROR_REST_DB_HOST"`) {
			t.Errorf("no warning of the ignored HEDERA_ variable:\n%s", buf.String())
		}
	}
}

// A Config printed whole shows where the password came from, never it.
func TestDatabasePrinted(t *testing.T) {
	c, err := LoadEnv([]string{"HIERO_MIRROR_REST_DB_HOST=db", "HIERO_MIRROR_REST_DB_PASSWORD=" + secret})
	if err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(verb, c); strings.Contains(s, secret) || !strings.Contains(s, "password from HIERO_MIRROR_REST_DB_PASSWORD") {
			t.Errorf("%s: %s", verb, s)
		}
	}
}

// Defaults are the default URL's parts.
func TestDatabaseDefaultsAreTheURLs(t *testing.T) {
	c := Defaults()
	fromURL, err := c.Database.ConnConfig(c.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	d := c.Database
	d.separate = true
	fromParts, err := d.ConnConfig("")
	if err != nil {
		t.Fatal(err)
	}
	if fromURL.Host != fromParts.Host || fromURL.Port != fromParts.Port || fromURL.Database != fromParts.Database ||
		fromURL.User != fromParts.User || (fromURL.TLSConfig == nil) != (fromParts.TLSConfig == nil) {
		t.Errorf("default URL %+v, default parts %+v", fromURL.Config, fromParts.Config)
	}
}

// FuzzDatabaseSettings: any values of the module's variables load into one
// line of error that never shows the password, or into the driver's
// configuration with each part as given, the password byte for byte.
func FuzzDatabaseSettings(f *testing.F) {
	for _, pw := range hostilePasswords {
		f.Add("db.example", "5432", "mirror_node", "mirror_rest", pw, "disable", false)
	}
	f.Add("/var/run/postgresql", "6432", "name with 'quote'", `user\`, "x", "VERIFY_FULL", true)
	f.Add("a,b", "5432,5433", "", "", "p", "prefer", false)
	f.Add("db", "0", "n", "u", "pw\x00", "bogus", true)
	// Calls in one process come one after another: one file serves them.
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, host, port, name, user, password, sslmode string, viaFile bool) {
		vars := map[string]string{
			"HIERO_MIRROR_REST_DB_HOST": host, "HIERO_MIRROR_REST_DB_PORT": port, "HIERO_MIRROR_REST_DB_NAME": name,
			"HIERO_MIRROR_REST_DB_USERNAME": user, "HIERO_MIRROR_REST_DB_SSLMODE": sslmode,
		}
		want := password
		if viaFile {
			path := filepath.Join(dir, "password")
			if err := os.WriteFile(path, []byte(password), 0o600); err != nil {
				t.Fatal(err)
			}
			vars["MIRRORQL_DB_PASSWORD_FILE"] = path
			switch {
			case strings.HasSuffix(password, "\r\n"):
				want = password[:len(password)-2]
			case strings.HasSuffix(password, "\n"):
				want = password[:len(password)-1]
			}
		} else {
			vars["HIERO_MIRROR_REST_DB_PASSWORD"] = password
		}
		// The database's part of LoadEnv, without the rest of the
		// configuration: what LoadEnv adds is the check below.
		d, problems := loadDatabase(vars)
		c := Config{Database: d, DatabaseURL: Defaults().DatabaseURL}
		var err error
		if len(problems) > 0 {
			err = errors.New(strings.Join(problems, "; "))
		} else if _, err = c.DBConnConfig(); err != nil {
			err = fmt.Errorf("loaded, then: %w", err)
		}
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") {
				t.Errorf("error is not one line: %q", msg)
			}
			// A password long enough to be told apart from the other
			// values and the message's own words never shows.
			if len(password) >= 8 && strings.Contains(msg, password) &&
				!strings.Contains(host+port+name+user+sslmode+dir, password) {
				t.Errorf("error shows the password %q: %s", password, msg)
			}
			return
		}
		cc, err := c.DBConnConfig()
		if err != nil {
			t.Fatal(err)
		}
		if cc.Password != want {
			t.Errorf("password %q, want %q", cc.Password, want)
		}
		if user != "" && cc.User != user {
			t.Errorf("user %q, want %q", cc.User, user)
		}
		if name != "" && cc.Database != name {
			t.Errorf("database %q, want %q", cc.Database, name)
		}
		if host != "" && !strings.Contains(host, ",") && cc.Host != host {
			t.Errorf("host %q, want %q", cc.Host, host)
		}
	})
}
