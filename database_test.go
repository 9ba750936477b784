package main

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"mirrorql/config"
	"mirrorql/db"
	"mirrorql/redact"
	"mirrorql/tests/prereq"
	"mirrorql/tests/testpki"
	"mirrorql/tests/throwaway"
	"mirrorql/tools/pgcluster"
)

// patience bounds the waits of these tests for a server or a process to
// answer: a passing test never waits it out, however busy the machine.
const patience = 2 * time.Minute

// hostilePasswords are passwords an operator may set in the umbrella's
// rest.db.password: every character a URL, a keyword/value string, a shell
// or the kubelet's $(VAR) gives a meaning to, spaces, quotes, backslashes,
// control characters, non-ASCII, characters PostgreSQL's SASLprep changes
// before it hashes a scram-sha-256 password (a no-break or ideographic
// space, compatibility characters, characters it drops), which the pool
// sends in that form (db/login.go), bytes that are no UTF-8 that the driver
// leaves as they are, 31 combining marks in a row (where the Unicode
// library's normalization, unlike PostgreSQL's, inserts a joiner), and a
// long one.
var hostilePasswords = []string{
	"Abc123def456",
	"p@ss:w/rd#1?x%&y=z",
	"@:/?#%&=", "%41%zz",
	"a space", " leading and trailing ",
	"quote'single", `quote"double`, "''", "`tick`",
	`back\slash`, `\`, `\'`,
	"pässwörd-€", "密码🔑", "no\u00a0break", "ideographic\u3000space",
	"ﬁ-ligature", "tm™", "circled①", "ｆｕｌｌ-width", "Ｐ@ss ﬁ™①",
	"soft\u00adhyphen", "zero\u200bwidth", "heart❤\ufe0f", "e" + strings.Repeat("\u0301", 31),
	"tab\there", "new\nline", "\x01\x7f",
	"🔑\xff not UTF-8", "\xff\tnot UTF-8",
	"$(MIRROR_DB_PASSWORD)", "$$(X)", "${HOME}",
	"postgres://u:p@h:5432/db?sslmode=disable", "host=evil password='x'",
	strings.Repeat("long-", 200),
}

// driverLimits are passwords PostgreSQL accepts that the driver's
// scram-sha-256 login cannot send in any form (config.scramTrouble says
// why; the docs' "Passwords the driver cannot send"): bytes that are not
// UTF-8, which the driver replaces, and passwords SASLprep refuses (so that
// PostgreSQL hashes them as given) that the driver normalizes. md5 logins
// take them.
var driverLimits = []string{"\xff\xfe not UTF-8", "ﬁ\xff", "a\u0340b", "\u05d0\u00a0a\u05d0"}

// methods are the pg_hba.conf methods the tests log in by, each with the
// passwords stored as it needs them (password_encryption).
var methods = []string{"scram-sha-256", "md5"}

// wrongTarget is the role the tests try wrong passwords on, with a
// password in two forms.
const wrongTarget, wrongTargetPassword = "wrong target", "ﬁ-Ｐ@55-Q9"

// pwCluster is a throwaway cluster that checks passwords over TCP by
// method, with a role per password of hostilePasswords and driverLimits;
// the tests of a process share one per method.
type pwCluster struct {
	*pgcluster.Cluster
	method string
	roles  map[string]string // password → its role
}

var (
	clustersMu sync.Mutex
	clusters   = map[string]*sharedCluster{}
)

type sharedCluster struct {
	once sync.Once
	c    *pwCluster
	err  error
}

// sharedScram is the cluster that checks scram-sha-256 passwords.
func sharedScram(t *testing.T) *pwCluster { return shared(t, "scram-sha-256") }

// shared starts the cluster of method once per test process; it ends with
// the tests (TestMain).
func shared(t *testing.T, method string) *pwCluster {
	t.Helper()
	if _, err := pgcluster.FindBinaries(); errors.Is(err, pgcluster.ErrNotInstalled) {
		prereq.Missing(t, err.Error())
	}
	clustersMu.Lock()
	s := clusters[method]
	if s == nil {
		s = &sharedCluster{}
		clusters[method] = s
	}
	clustersMu.Unlock()
	s.once.Do(func() {
		var c *pgcluster.Cluster
		c, s.err = pgcluster.Start(context.Background(), pgcluster.Options{})
		if s.err != nil {
			return
		}
		atExit(func() { _ = c.Stop() })
		s.c = &pwCluster{Cluster: c, method: method, roles: map[string]string{}}
		s.err = s.c.createRoles(append(append([]string{}, hostilePasswords...), driverLimits...))
		if s.err == nil {
			s.err = c.SetAccess(context.Background(), pgcluster.Access{
				HBA: []string{
					// A role without a password, which a password-less
					// login reaches (as a client certificate's would).
					"host all trusted 127.0.0.1/32 trust",
					"host all all 127.0.0.1/32 " + method,
				},
			})
		}
	})
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.c
}

// createRoles makes a login role for each password, with a name that needs
// quoting too (a space, a quote, a backslash), and wrongTarget.
func (c *pwCluster) createRoles(passwords []string) error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.AdminURL())
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	// PostgreSQL 18 warns of setting an md5 password (md5 is deprecated),
	// and logs in by it as 15 to 17 do.
	if _, err := conn.Exec(ctx, "set password_encryption = "+literal(c.method)+"; create role trusted login"); err != nil {
		return err
	}
	create := func(role, pw string) error {
		_, err := conn.Exec(ctx, "create role "+pgx.Identifier{role}.Sanitize()+" login password "+literal(c.rolePassword(role, pw)))
		return err
	}
	for i, pw := range passwords {
		role := fmt.Sprintf(`reader %d 'q' \`, i)
		if err := create(role, pw); err != nil {
			return fmt.Errorf("role for password %d: %w", i, err)
		}
		c.roles[pw] = role
	}
	return create(wrongTarget, wrongTargetPassword)
}

// rolePassword is what CREATE ROLE is given for pw: pw itself, which the
// server stores as the method needs it (a SCRAM verifier of SASLprep's
// form, an MD5 hash of the password as given), but for bytes that are no
// UTF-8, which no SQL text may hold: their verifier or hash made here, as
// a client (psql's \password) makes it from such bytes.
func (c *pwCluster) rolePassword(role, pw string) string {
	switch {
	case utf8.ValidString(pw):
		return pw
	case c.method == "md5":
		return fmt.Sprintf("md5%x", md5.Sum([]byte(pw+role)))
	}
	return scramVerifier(pw)
}

// scramVerifier is PostgreSQL's SCRAM-SHA-256 verifier of pw (RFC 5802, in
// the server's format); bytes that are no UTF-8 are used as they are.
func scramVerifier(pw string) string {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	const iterations = 4096
	salted, err := pbkdf2.Key(sha256.New, pw, salt, iterations, sha256.Size)
	if err != nil {
		panic(err)
	}
	mac := func(key []byte, msg string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	stored := sha256.Sum256(mac(salted, "Client Key"))
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", iterations, b64(salt), b64(stored[:]), b64(mac(salted, "Server Key")))
}

// literal is s as an SQL string literal (standard_conforming_strings).
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// connectAs loads the configuration from vars as the service does and opens
// its pool as serve does (openDB), then asks the server who logged in and
// whether over TLS.
func connectAs(t *testing.T, vars map[string]string) (user string, ssl bool, err error) {
	t.Helper()
	env := []string{"MIRRORQL_DB_POOL_SIZE=1", "MIRRORQL_DB_CONNECT_TIMEOUT=30s"}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	cfg, err := config.LoadEnv(env)
	if err != nil {
		return "", false, err
	}
	d, err := openDB(cfg)
	if err != nil {
		return "", false, err
	}
	defer d.Close()
	d.Health().Log = slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	err = d.Bun().QueryRowContext(ctx, "select current_user, coalesce((select ssl from pg_stat_ssl where pid = pg_backend_pid()), false)").Scan(&user, &ssl)
	return user, ssl, err
}

// writeTemp writes content into a new file of t's and returns its path.
func writeTemp(t *testing.T, name string, content []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDatabasePasswords logs in to servers that check passwords, by
// scram-sha-256 and by md5, with every hostile password, through the
// service's own path (config.LoadEnv, openDB): as the umbrella's Secret
// gives it in the REST module's variables, from a mounted file, and beside
// a URL. A wrong password is refused, and the error does not show it. Under
// md5, a password that logs in in two forms leaves no failed login in the
// server's log: the driver refuses to offer md5 the SCRAM form.
func TestDatabasePasswords(t *testing.T) {
	t.Parallel()
	for _, method := range methods {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			c := shared(t, method)
			t.Run("logins", func(t *testing.T) { testPasswords(t, c) })
			if method != "md5" {
				return
			}
			log, err := os.ReadFile(filepath.Join(c.Dir(), "postgres.log"))
			if err != nil {
				t.Fatal(err)
			}
			for l := range strings.Lines(string(log)) {
				if strings.Contains(l, "authentication failed") && !strings.Contains(l, `"`+wrongTarget+`"`) {
					t.Errorf("a failed login in the server's log: %s", l)
				}
			}
		})
	}
}

func testPasswords(t *testing.T, c *pwCluster) {
	port := strconv.Itoa(c.Port())
	for i, pw := range hostilePasswords {
		role := c.roles[pw]
		forms := map[string]map[string]string{
			"umbrella Secret": {"HIERO_MIRROR_REST_DB_HOST": "127.0.0.1", "HIERO_MIRROR_REST_DB_PORT": port,
				"HIERO_MIRROR_REST_DB_NAME": "mirror_node", "HIERO_MIRROR_REST_DB_USERNAME": role, "HIERO_MIRROR_REST_DB_PASSWORD": pw},
			"password file": {"MIRRORQL_DB_HOST": "127.0.0.1", "MIRRORQL_DB_PORT": port, "MIRRORQL_DB_USERNAME": role,
				"MIRRORQL_DB_PASSWORD_FILE": writeTemp(t, "password", []byte(pw+"\n"))},
			"beside a URL": {"MIRRORQL_DATABASE_URL": "postgres://" + url.User(role).String() + "@127.0.0.1:" + port + "/mirror_node",
				"HEDERA_MIRROR_REST_DB_PASSWORD": pw},
		}
		for form, vars := range forms {
			t.Run(fmt.Sprintf("%d %s", i, form), func(t *testing.T) {
				t.Parallel()
				user, _, err := connectAs(t, vars)
				if err != nil {
					t.Fatalf("password %+q: %v", pw, err)
				}
				if user != role {
					t.Errorf("logged in as %q, want %q", user, role)
				}
			})
		}
	}
	t.Run("one connection", func(t *testing.T) {
		t.Parallel()
		// seed's, beside its pool: the same forms.
		for _, pw := range []string{"ﬁ-ligature", "Ｐ@ss ﬁ™①", hostilePasswords[1]} {
			cfg, err := config.LoadEnv([]string{"MIRRORQL_DB_HOST=127.0.0.1", "MIRRORQL_DB_PORT=" + port,
				"MIRRORQL_DB_USERNAME=" + c.roles[pw], "MIRRORQL_DB_PASSWORD=" + pw})
			if err != nil {
				t.Fatal(err)
			}
			cc, err := cfg.DBConnConfig()
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), patience)
			defer cancel()
			conn, err := db.Connect(ctx, cc)
			if err != nil {
				t.Fatalf("password %+q: %v", pw, err)
			}
			var user string
			err = conn.QueryRow(ctx, "select current_user").Scan(&user)
			_ = conn.Close(ctx)
			if err != nil || user != c.roles[pw] {
				t.Errorf("password %+q: logged in as %q (%v), want %q", pw, user, err, c.roles[pw])
			}
		}
	})
	t.Run("empty password", func(t *testing.T) {
		t.Parallel()
		// Set and empty: sent as empty. PostgreSQL holds no empty
		// password, so only a login that asks for none gets in.
		for role, want := range map[string]string{"trusted": "", wrongTarget: "password authentication failed"} {
			user, _, err := connectAs(t, map[string]string{"MIRRORQL_DB_HOST": "127.0.0.1", "MIRRORQL_DB_PORT": port,
				"MIRRORQL_DB_USERNAME": role, "MIRRORQL_DB_PASSWORD": ""})
			switch {
			case want == "" && (err != nil || user != role):
				t.Errorf("%s without a password: %q, %v", role, user, err)
			case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
				t.Errorf("%s with an empty password: %v, want %q", role, err, want)
			}
		}
	})
	// Wrong: another password (in two forms, so that under md5 the wrong
	// one is tried after the driver refused SCRAM's) and, under md5, the
	// right one's SCRAM form.
	wrongs := []string{"wr0ng:P@ss wörd ﬁ/" + hostilePasswords[1]}
	if c.method == "md5" {
		wrongs = append(wrongs, "fi-P@55-Q9")
	}
	for _, wrong := range wrongs {
		t.Run("wrong password "+wrong, func(t *testing.T) {
			t.Parallel()
			_, _, err := connectAs(t, map[string]string{"HIERO_MIRROR_REST_DB_HOST": "127.0.0.1", "HIERO_MIRROR_REST_DB_PORT": port,
				"HIERO_MIRROR_REST_DB_USERNAME": wrongTarget, "HIERO_MIRROR_REST_DB_PASSWORD": wrong})
			if err == nil || !strings.Contains(err.Error(), "password authentication failed") {
				t.Fatalf("a wrong password: %v", err)
			}
			if redact.Fragments(err.Error(), wrong) != err.Error() {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// TestDatabaseTLS connects to a server that takes TLS connections alone
// (ssl=on, hostssl lines only), its certificate signed by a CA the test
// makes, one role also needing a client certificate: verify-full with the
// CA, the module's tls.enabled with its files, and each way it must fail.
func TestDatabaseTLS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cluster, conn := throwaway.Cluster(t, pgcluster.Options{})
	const password = `tls p@ss'word\`
	_, err := conn.Exec(ctx, "set password_encryption = 'scram-sha-256'; "+
		"create role tls_reader login password "+literal(password)+"; create role cert_reader login password "+literal(password))
	_ = conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ca := testpki.NewCA(t, "mirrorql test CA")
	server := ca.Server(t, "127.0.0.1")
	if err := cluster.SetAccess(ctx, pgcluster.Access{
		Files: map[string][]byte{"server.crt": server.Cert, "server.key": server.Key, "root.crt": ca.PEM},
		Settings: map[string]string{"ssl": "on", "ssl_cert_file": "server.crt", "ssl_key_file": "server.key",
			"ssl_ca_file": "root.crt"},
		HBA: []string{
			"hostssl all cert_reader 127.0.0.1/32 scram-sha-256 clientcert=verify-full",
			"hostssl all all 127.0.0.1/32 scram-sha-256",
		},
	}); err != nil {
		t.Fatal(err)
	}
	client := ca.Client(t, "cert_reader")
	other := testpki.NewCA(t, "another CA")
	dir := t.TempDir()
	files := map[string]string{}
	for name, b := range map[string][]byte{"ca.crt": ca.PEM, "other-ca.crt": other.PEM, "tls.crt": client.Cert, "tls.key": client.Key} {
		files[name] = filepath.Join(dir, name)
		if err := os.WriteFile(files[name], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	port := strconv.Itoa(cluster.Port())
	login := func(user, host string, more map[string]string) map[string]string {
		vars := map[string]string{"HIERO_MIRROR_REST_DB_HOST": host, "HIERO_MIRROR_REST_DB_PORT": port,
			"HIERO_MIRROR_REST_DB_USERNAME": user, "HIERO_MIRROR_REST_DB_PASSWORD": password}
		for k, v := range more {
			vars[k] = v
		}
		return vars
	}
	for _, tc := range []struct {
		name string
		vars map[string]string
		user string // who logs in; "": refused
		err  string // in the refusal
	}{
		{"verify-full with the CA", login("tls_reader", "127.0.0.1",
			map[string]string{"MIRRORQL_DB_SSLMODE": "verify-full", "MIRRORQL_DB_TLS_CA": files["ca.crt"]}), "tls_reader", ""},
		{"verify-full with a client certificate", login("cert_reader", "127.0.0.1",
			map[string]string{"HIERO_MIRROR_REST_DB_SSLMODE": "VERIFY_FULL", "HIERO_MIRROR_REST_DB_TLS_CA": files["ca.crt"],
				"HIERO_MIRROR_REST_DB_TLS_CERT": files["tls.crt"], "HIERO_MIRROR_REST_DB_TLS_KEY": files["tls.key"]}), "cert_reader", ""},
		{"the module's tls.enabled and files", login("cert_reader", "127.0.0.1",
			map[string]string{"HIERO_MIRROR_REST_DB_TLS_ENABLED": "true", "HIERO_MIRROR_REST_DB_TLS_CA": files["ca.crt"],
				"HIERO_MIRROR_REST_DB_TLS_CERT": files["tls.crt"], "HIERO_MIRROR_REST_DB_TLS_KEY": files["tls.key"]}), "cert_reader", ""},
		{"verify-ca by another name", login("tls_reader", "localhost",
			map[string]string{"MIRRORQL_DB_SSLMODE": "verify-ca", "MIRRORQL_DB_TLS_CA": files["ca.crt"]}), "tls_reader", ""},
		{"verify-full by another name", login("tls_reader", "localhost",
			map[string]string{"MIRRORQL_DB_SSLMODE": "verify-full", "MIRRORQL_DB_TLS_CA": files["ca.crt"]}), "", "wanted to match localhost"},
		{"verify-full with another CA", login("tls_reader", "127.0.0.1",
			map[string]string{"MIRRORQL_DB_SSLMODE": "verify-full", "MIRRORQL_DB_TLS_CA": files["other-ca.crt"]}), "", "certificate signed by unknown authority"},
		{"without the client certificate", login("cert_reader", "127.0.0.1",
			map[string]string{"MIRRORQL_DB_SSLMODE": "verify-full", "MIRRORQL_DB_TLS_CA": files["ca.crt"]}), "", "certificate"},
		{"without TLS", login("tls_reader", "127.0.0.1", nil), "", "no encryption"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			user, ssl, err := connectAs(t, tc.vars)
			if tc.user == "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("connected as %q (%v), want a refusal saying %q", user, err, tc.err)
				}
				if redact.Fragments(err.Error(), password) != err.Error() {
					t.Errorf("the error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if user != tc.user || !ssl {
				t.Errorf("logged in as %q, TLS %v; want %q over TLS", user, ssl, tc.user)
			}
		})
	}
}

// TestPasswordsTheDriverCannotSend pins the limit the docs state: PostgreSQL
// takes these passwords, md5 logins send them, the driver's scram-sha-256
// login cannot (it replaces bytes that are not UTF-8, and normalizes what
// SASLprep refuses and PostgreSQL hashes as given), and the service warns of
// each at start. When the driver learns them, this test fails: drop the
// warning (config.scramTrouble) and the docs' paragraph.
func TestPasswordsTheDriverCannotSend(t *testing.T) {
	t.Parallel()
	for _, method := range methods {
		c := shared(t, method)
		for _, pw := range driverLimits {
			t.Run(fmt.Sprintf("%s %+q", method, pw), func(t *testing.T) {
				t.Parallel()
				vars := map[string]string{"MIRRORQL_DB_HOST": "127.0.0.1", "MIRRORQL_DB_PORT": strconv.Itoa(c.Port()),
					"MIRRORQL_DB_USERNAME": c.roles[pw], "MIRRORQL_DB_PASSWORD": pw}
				user, _, err := connectAs(t, vars)
				switch {
				case method == "md5" && (err != nil || user != c.roles[pw]):
					t.Errorf("%+q: %q, %v; want an md5 login", pw, user, err)
				case method != "md5" && (err == nil || !strings.Contains(err.Error(), "password authentication failed")):
					t.Errorf("%+q: %v; want the driver's login refused (if it now gets in, see this test's comment)", pw, err)
				}
				var env []string
				for k, v := range vars {
					env = append(env, k+"="+v)
				}
				cfg, err := config.LoadEnv(env)
				if err != nil {
					t.Fatal(err)
				}
				var buf strings.Builder
				cfg.LogDatabase(slog.New(slog.NewTextHandler(&buf, nil)))
				if !strings.Contains(buf.String(), "a scram-sha-256 login may fail") {
					t.Errorf("%+q: no warning at start:\n%s", pw, buf.String())
				}
			})
		}
	}
}

// runMain runs mirrorql (this test binary as main, asMain) with args and
// exactly env, and returns what it wrote to stderr and its exit code.
func runMain(t *testing.T, env []string, args ...string) (stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append([]string{asMain + "=1"}, env...)
	var out strings.Builder
	cmd.Stderr = &out
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// Bad database settings stop every command that reads the database at
// start: exit code 2, one line on stderr naming the variable and saying what
// is wrong, no panic, and never the password, wherever it was.
func TestDatabaseSettingsRefused(t *testing.T) {
	t.Parallel()
	const pw = "s3cr3t:P@ss wörd/#?"
	p := t.TempDir()
	ca := testpki.NewCA(t, "test CA")
	pair, other := ca.Client(t, "u"), ca.Client(t, "v")
	for name, b := range map[string][]byte{"ca.crt": ca.PEM, "tls.crt": pair.Cert, "tls.key": pair.Key, "other.key": other.Key,
		"garbage": []byte("garbage\n"), "nul": []byte(pw + "\x00\n")} {
		if err := os.WriteFile(filepath.Join(p, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := func(name string) string { return filepath.Join(p, name) }
	for _, tc := range []struct {
		name string
		cmd  string
		env  []string
		want string
	}{
		{"password file missing", "serve", []string{"MIRRORQL_DB_PASSWORD_FILE=" + path("missing")},
			"MIRRORQL_DB_PASSWORD_FILE: open " + path("missing") + ": no such file or directory"},
		{"password file with a NUL", "migrate", []string{"MIRRORQL_DB_PASSWORD_FILE=" + path("nul")}, "holds a NUL byte"},
		{"password twice", "serve", []string{"MIRRORQL_DB_PASSWORD_FILE=" + path("garbage"), "MIRRORQL_DB_PASSWORD=" + pw},
			"MIRRORQL_DB_PASSWORD and MIRRORQL_DB_PASSWORD_FILE are both set"},
		{"port", "serve", []string{"HIERO_MIRROR_REST_DB_PORT=54 32"}, `HIERO_MIRROR_REST_DB_PORT: "54 32" is not a port`},
		{"sslmode", "seed", []string{"HIERO_MIRROR_REST_DB_SSLMODE=on"}, `HIERO_MIRROR_REST_DB_SSLMODE: "on" is not an sslmode`},
		{"CA missing", "serve", []string{"HIERO_MIRROR_REST_DB_TLS_ENABLED=true", "HIERO_MIRROR_REST_DB_TLS_CA=" + path("missing")},
			"HIERO_MIRROR_REST_DB_TLS_CA: open " + path("missing")},
		{"CA not a certificate", "serve", []string{"MIRRORQL_DB_SSLMODE=verify-full", "MIRRORQL_DB_TLS_CA=" + path("garbage")},
			"MIRRORQL_DB_TLS_CA: " + path("garbage") + " holds no PEM certificate"},
		{"key of another certificate", "serve", []string{"MIRRORQL_DB_SSLMODE=require", "MIRRORQL_DB_TLS_CERT=" + path("tls.crt"),
			"MIRRORQL_DB_TLS_KEY=" + path("other.key")}, "are not a pair: tls: private key does not match public key"},
		{"certificate without its key", "serve", []string{"HIERO_MIRROR_REST_DB_TLS_ENABLED=true", "HIERO_MIRROR_REST_DB_TLS_CERT=" + path("tls.crt")},
			"HIERO_MIRROR_REST_DB_TLS_CERT is set without a key"},
		{"URL beside a host", "serve", []string{"MIRRORQL_DATABASE_URL=postgres://u:" + url.PathEscape(pw) + "@db/x", "HIERO_MIRROR_REST_DB_HOST=db"},
			"MIRRORQL_DATABASE_URL is set, and so is HIERO_MIRROR_REST_DB_HOST"},
		{"URL with the password as it is", "serve", []string{"MIRRORQL_DATABASE_URL=postgres://u:" + pw + "@db/x"},
			"MIRRORQL_DATABASE_URL: cannot parse"},
		{"demo given separate settings", "demo", []string{"HIERO_MIRROR_REST_DB_HOST=db"},
			"mirrorql demo: takes its database as MIRRORQL_DATABASE_URL (or finds its own), not as HIERO_MIRROR_REST_DB_HOST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := append([]string{"HIERO_MIRROR_REST_DB_PASSWORD=" + pw}, tc.env...)
			stderr, code := runMain(t, env, tc.cmd)
			if code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
			line := strings.TrimSuffix(stderr, "\n")
			if strings.Contains(line, "\n") || !strings.HasPrefix(line, "mirrorql") || !strings.Contains(line, tc.want) {
				t.Errorf("stderr %q\nwant one line saying %q", stderr, tc.want)
			}
			if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine") {
				t.Errorf("a panic: %s", stderr)
			}
			if redact.Fragments(stderr, pw) != stderr {
				t.Errorf("stderr shows (a piece of) the password: %s", stderr)
			}
		})
	}
}

// TestDatabaseLogAtStart runs serve with the umbrella's settings and a
// hostile password from a file: the log says where each part came from and
// which variable another overrode, the service gets ready, and no line shows
// the password. With a wrong password it starts unready, and its log shows
// neither password.
func TestDatabaseLogAtStart(t *testing.T) {
	t.Parallel()
	c := sharedScram(t)
	pw := hostilePasswords[1]
	env := []string{"HIERO_MIRROR_REST_DB_HOST=127.0.0.1", "HEDERA_MIRROR_REST_DB_HOST=elsewhere",
		"HIERO_MIRROR_REST_DB_PORT=" + strconv.Itoa(c.Port()), "HIERO_MIRROR_REST_DB_USERNAME=" + c.roles[pw],
		"MIRRORQL_LISTEN=127.0.0.1:0", "MIRRORQL_GRPC_LISTEN=", "MIRRORQL_DB_POOL_SIZE=1", "MIRRORQL_LOG_FLUSH=0"}
	t.Run("right password", func(t *testing.T) {
		t.Parallel()
		file := writeTemp(t, "password", []byte(pw+"\n"))
		logs := serveUntilReady(t, append(env, "MIRRORQL_DB_PASSWORD_FILE="+file), http.StatusOK)
		var settings struct{ From map[string]string }
		for _, l := range logs {
			if l.fields["msg"] == "database settings" {
				_ = json.Unmarshal([]byte(l.raw), &settings)
			}
		}
		for part, want := range map[string]string{"host": "HIERO_MIRROR_REST_DB_HOST", "port": "HIERO_MIRROR_REST_DB_PORT",
			"name": "default", "password": "MIRRORQL_DB_PASSWORD_FILE " + file} {
			if settings.From[part] != want {
				t.Errorf("from.%s %q, want %q", part, settings.From[part], want)
			}
		}
		if !hasLine(logs, "database setting overridden", "ignored", "HEDERA_MIRROR_REST_DB_HOST") {
			t.Errorf("no warning of the overridden HEDERA_MIRROR_REST_DB_HOST")
		}
		checkNoPassword(t, logs, pw)
	})
	t.Run("wrong password", func(t *testing.T) {
		t.Parallel()
		wrong := "wr0ng " + pw
		logs := serveUntilReady(t, append(env, "HIERO_MIRROR_REST_DB_PASSWORD="+wrong), http.StatusServiceUnavailable)
		if !hasLine(logs, "database unavailable", "err", "password authentication failed") {
			t.Errorf("no word of the refused login")
		}
		checkNoPassword(t, logs, wrong)
	})
}

// logLine is a line of the service's log, as written and decoded.
type logLine struct {
	raw    string
	fields map[string]any
}

// serveUntilReady runs `mirrorql serve` with env until its readiness answers
// status, then stops it, and returns its log lines.
func serveUntilReady(t *testing.T, env []string, status int) []logLine {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve")
	cmd.Env = append([]string{asMain + "=1"}, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		lines []logLine
	)
	addr := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var l map[string]any
			_ = json.Unmarshal(sc.Bytes(), &l)
			mu.Lock()
			lines = append(lines, logLine{sc.Text(), l})
			mu.Unlock()
			if l["msg"] == "listening" {
				addr <- fmt.Sprint(l["addr"])
			}
		}
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(patience):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = cmd.Wait()
	}
	defer stop()
	fail := func(format string, args ...any) {
		stop()
		mu.Lock()
		defer mu.Unlock()
		var raw []string
		for _, l := range lines {
			raw = append(raw, l.raw)
		}
		t.Fatalf(format+"\nlog:\n%s", append(args, strings.Join(raw, "\n"))...)
	}
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-done:
		fail("serve ended before it listened")
	case <-time.After(patience):
		fail("serve did not listen")
	}
	deadline := time.Now().Add(patience)
	for {
		resp, err := http.Get(base + "/health/readiness")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == status {
				break
			}
		}
		if time.Now().After(deadline) {
			fail("readiness never answered %d", status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	mu.Lock()
	defer mu.Unlock()
	for _, l := range lines {
		if l.fields == nil {
			t.Errorf("a log line that is not JSON: %q", l.raw)
		}
	}
	return lines
}

// hasLine reports whether a log line has msg and, when key is given,
// key's value holding value.
func hasLine(logs []logLine, msg, key, value string) bool {
	for _, l := range logs {
		if l.fields["msg"] == msg && (key == "" || strings.Contains(fmt.Sprint(l.fields[key]), value)) {
			return true
		}
	}
	return false
}

// checkNoPassword fails t if a log line holds a run of pw's bytes, as they
// are or as JSON escapes them.
func checkNoPassword(t *testing.T, logs []logLine, pw string) {
	t.Helper()
	q, _ := json.Marshal(pw)
	for _, l := range logs {
		if redact.Fragments(l.raw, pw) != l.raw || redact.Fragments(l.raw, strings.Trim(string(q), `"`)) != l.raw {
			t.Errorf("a log line shows (a piece of) the password: %s", l.raw)
		}
	}
}
