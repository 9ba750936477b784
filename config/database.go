package config

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"mirrorql/redact"
	"mirrorql/saslprep"
)

// The database the service reads is given either as MIRRORQL_DATABASE_URL,
// or as separate settings: mirrorql's own MIRRORQL_DB_* variables, or the
// mirror node REST module's HIERO_MIRROR_REST_DB_* (HEDERA_MIRROR_REST_DB_*)
// as its umbrella chart's Secret mirror-passwords holds them. Separate
// settings never pass through a URL, so a password needs no escaping: it is
// handed to the driver as the bytes it was given (docs/configuration.md,
// "The database"), and the pool sends it to a scram-sha-256 login in the
// form PostgreSQL hashes (db/login.go).

// dbPart is one part of the database settings.
type dbPart int

const (
	partHost dbPart = iota
	partPort
	partName
	partUser
	partPassword
	partSSLMode
	partTLSEnabled
	partCA
	partCert
	partKey
	numParts
)

// dbParts names each part: in the log and the docs (key), as mirrorql's
// variable without the prefix (own; none for the module's tls.enabled, which
// MIRRORQL_DB_SSLMODE says), and as the REST module's variable after
// HIERO_MIRROR_REST_DB_ (module). The password file is own alone
// (passwordFileVar): the module has none.
var dbParts = [numParts]struct{ key, own, module string }{
	partHost:       {"host", "DB_HOST", "HOST"},
	partPort:       {"port", "DB_PORT", "PORT"},
	partName:       {"name", "DB_NAME", "NAME"},
	partUser:       {"username", "DB_USERNAME", "USERNAME"},
	partPassword:   {"password", "DB_PASSWORD", "PASSWORD"},
	partSSLMode:    {"sslmode", "DB_SSLMODE", "SSLMODE"},
	partTLSEnabled: {"tls_enabled", "", "TLS_ENABLED"},
	partCA:         {"tls_ca", "DB_TLS_CA", "TLS_CA"},
	partCert:       {"tls_cert", "DB_TLS_CERT", "TLS_CERT"},
	partKey:        {"tls_key", "DB_TLS_KEY", "TLS_KEY"},
}

// passwordFileVar is MIRRORQL_DB_PASSWORD_FILE without the prefix.
const passwordFileVar = "DB_PASSWORD_FILE"

// modulePrefixes start the REST module's database variables, the first
// winning: HEDERA_ is the module's older name, which it still accepts.
var modulePrefixes = []string{"HIERO_MIRROR_REST_DB_", "HEDERA_MIRROR_REST_DB_"}

// The parts' defaults: those of the default MIRRORQL_DATABASE_URL.
const (
	defaultHost    = "127.0.0.1"
	defaultPort    = 5432
	defaultName    = "mirror_node"
	defaultUser    = "postgres"
	defaultSSLMode = "disable"
)

// Limits on what a setting's file may hold: a password file is a line, a
// certificate file a chain or a bundle. A path to something else (a device,
// a log) is refused rather than read whole.
const (
	maxPasswordFile = 64 << 10
	maxPEMFile      = 4 << 20
)

// sslModes are libpq's, which the REST module names in upper case with
// underscores (VERIFY_FULL); both spellings are read.
var sslModes = []string{"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}

// Database is the database's separate settings, each with the variable it
// came from. Without any setting of where the database is (host, port,
// name, sslmode, TLS), the database is MIRRORQL_DATABASE_URL's (or its
// default) and only a user and password given separately apply over it.
type Database struct {
	Host     string
	Port     uint16
	Name     string
	User     string
	Password string
	SSLMode  string
	// CA, Cert and Key are the paths of the TLS files: the server's CA, the
	// client's certificate and its key.
	CA, Cert, Key string

	// separate: a part of where the database is was set, so the URL is not
	// used. passwordGiven, userGiven: a password (possibly empty) or user
	// was set, and replaces the URL's.
	separate, userGiven, passwordGiven bool
	// from names the variable each part came from ("" for its default);
	// passwordFile is the file the password was read from.
	from         [numParts]string
	passwordFile string
	// urlFrom: where MIRRORQL_DATABASE_URL's value came from, "" for its
	// default.
	urlFrom string
	// shadowed lists, per part, the variables that were set too but lost to
	// from's (for a warning at start).
	shadowed [numParts]string
}

// String is the settings fit to print, the password's source in place of
// the password, so that printing a Config (%v) never shows it.
func (d Database) String() string {
	pw := "no password"
	if d.passwordGiven {
		pw = "password from " + d.from[partPassword]
	}
	if !d.separate {
		return "the URL's database, " + pw
	}
	return fmt.Sprintf("%s@%s:%d/%s sslmode=%s, %s", d.User, d.Host, d.Port, d.Name, d.SSLMode, pw)
}

// GoString is String, for %#v.
func (d Database) GoString() string { return d.String() }

// dbSetting is one variable's value.
type dbSetting struct{ name, value string }

// lookupPart finds a part's variables in vars, most preferred first:
// mirrorql's own, then the module's HIERO_ and HEDERA_ names. An empty value
// is unset, but for the password, which may be empty.
func lookupPart(vars map[string]string, p dbPart) []dbSetting {
	var names []string
	if dbParts[p].own != "" {
		names = append(names, Prefix+dbParts[p].own)
	}
	if p == partPassword {
		names = append(names, Prefix+passwordFileVar)
	}
	for _, prefix := range modulePrefixes {
		names = append(names, prefix+dbParts[p].module)
	}
	var out []dbSetting
	for _, name := range names {
		v, ok := vars[name]
		if !ok || (v == "" && (p != partPassword || name == Prefix+passwordFileVar)) {
			continue
		}
		out = append(out, dbSetting{name, v})
	}
	return out
}

// loadDatabase reads the database's separate settings from vars and checks
// them (their files too), against MIRRORQL_DATABASE_URL when it is set. Each
// problem is one line, naming the variable; none holds the password.
func loadDatabase(vars map[string]string) (Database, []string) {
	d := Database{Host: defaultHost, Port: defaultPort, Name: defaultName, User: defaultUser, SSLMode: defaultSSLMode}
	var problems []string
	problem := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	value := map[dbPart]string{}
	for p := range numParts {
		found := lookupPart(vars, p)
		if len(found) == 0 {
			continue
		}
		// Host, names, modes and paths hold no control character: one
		// would be a mistake (a line ending pasted in), and would break the
		// one line that says what is wrong. The password may hold any but
		// NUL, which no PostgreSQL password holds (and no variable can).
		secret := p == partPassword && found[0].name != Prefix+passwordFileVar
		if i := strings.IndexFunc(found[0].value, func(r rune) bool {
			return r == 0 || (!secret && (r < 0x20 || r == 0x7f))
		}); i >= 0 {
			problem("%s holds a control character (byte %d)", found[0].name, i)
			continue
		}
		d.from[p], value[p] = found[0].name, found[0].value
		var lost []string
		for _, s := range found[1:] {
			if s.name == Prefix+passwordFileVar && found[0].name == Prefix+dbParts[partPassword].own {
				problem("%s and %s are both set: give the password one way", found[0].name, s.name)
			}
			lost = append(lost, s.name)
		}
		d.shadowed[p] = strings.Join(lost, ", ")
		switch p {
		case partUser:
			d.userGiven = true
		case partPassword:
			d.passwordGiven = true
		default:
			d.separate = true
		}
	}
	if u, ok := vars[Prefix+"DATABASE_URL"]; ok && u != "" {
		d.urlFrom = Prefix + "DATABASE_URL"
		if d.separate {
			var set []string
			for p := range numParts {
				if p != partUser && p != partPassword && d.from[p] != "" {
					set = append(set, d.from[p])
				}
			}
			problem("%s is set, and so is %s: give where the database is either as the URL or as separate settings "+
				"(a user and a password may come separately beside the URL)", d.urlFrom, strings.Join(set, ", "))
		}
	}

	if v, ok := value[partHost]; ok {
		d.Host = v
	}
	if v, ok := value[partPort]; ok {
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 16)
		if err != nil || n == 0 {
			problem("%s: %q is not a port (1 to 65535)", d.from[partPort], v)
		}
		d.Port = uint16(n)
	}
	if v, ok := value[partName]; ok {
		d.Name = v
	}
	if v, ok := value[partUser]; ok {
		d.User = v
	}
	if v, ok := value[partPassword]; ok {
		if d.from[partPassword] == Prefix+passwordFileVar {
			d.passwordFile = v
			pw, err := readPasswordFile(v)
			if err != nil {
				problem("%s: %v", d.from[partPassword], err)
			}
			d.Password = pw
		} else {
			d.Password = v
		}
	}
	if v, ok := value[partSSLMode]; ok {
		mode := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(v)), "_", "-")
		if !slices.Contains(sslModes, mode) {
			problem("%s: %q is not an sslmode (%s)", d.from[partSSLMode], v, strings.Join(sslModes, ", "))
		}
		d.SSLMode = mode
	}
	if v, ok := value[partTLSEnabled]; ok {
		on, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			problem("%s: %q is neither true nor false", d.from[partTLSEnabled], v)
		}
		// The REST module's tls.enabled is TLS without more: at least
		// require. mirrorql's own sslmode, when set, says alone.
		if on && !strings.HasPrefix(d.from[partSSLMode], Prefix) && (d.SSLMode == "disable" || d.SSLMode == "allow" || d.SSLMode == "prefer") {
			d.SSLMode = "require"
		}
	}
	d.CA, d.Cert, d.Key = value[partCA], value[partCert], value[partKey]
	problems = append(problems, d.checkTLS()...)
	return d, problems
}

// readPasswordFile reads a password file as Kubernetes mounts a Secret's
// key: the file holds the key's bytes as they are. One line ending at its
// end ("\n" or "\r\n"), which an editor or `echo` adds to a file a Secret is
// made from (kubectl create secret --from-file), is not part of the password;
// a password that ends in a line ending is written with one more.
func readPasswordFile(path string) (string, error) {
	b, err := readLimited(path, maxPasswordFile)
	if err != nil {
		return "", err
	}
	if bytesHasSuffix(b, "\r\n") {
		b = b[:len(b)-2]
	} else if bytesHasSuffix(b, "\n") {
		b = b[:len(b)-1]
	}
	// PostgreSQL's protocol ends strings at a NUL, so no password holds one.
	for _, c := range b {
		if c == 0 {
			return "", fmt.Errorf("%s holds a NUL byte, which no PostgreSQL password can", path)
		}
	}
	return string(b), nil
}

func bytesHasSuffix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[len(b)-len(s):]) == s
}

// readLimited reads the file at path, refusing one larger than limit.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes: not the file meant", path, limit)
	}
	return b, nil
}

// checkTLS checks the TLS files as the driver will use them, so that a file
// missing, unreadable or not what it should be, or a key that is not the
// certificate's, stops the start with the variable and file named.
func (d Database) checkTLS() []string {
	var problems []string
	problem := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if d.CA != "" {
		if err := checkCA(d.CA); err != nil {
			problem("%s: %v", d.from[partCA], err)
		}
	}
	switch {
	case d.Cert != "" && d.Key == "":
		problem("%s is set without a key: set %s%s (or %s%s) too", d.from[partCert], Prefix, dbParts[partKey].own, modulePrefixes[0], dbParts[partKey].module)
	case d.Cert == "" && d.Key != "":
		problem("%s is set without a certificate: set %s%s (or %s%s) too", d.from[partKey], Prefix, dbParts[partCert].own, modulePrefixes[0], dbParts[partCert].module)
	case d.Cert != "":
		problems = append(problems, d.checkKeyPair()...)
	}
	if d.SSLMode == "disable" && (d.CA != "" || d.Cert != "") {
		var set []string
		for _, p := range []dbPart{partCA, partCert, partKey} {
			if d.from[p] != "" {
				set = append(set, d.from[p])
			}
		}
		problem("%s given but sslmode is disable: set %s%s (or %s%s, or %s%s=true) to use TLS, or leave them out",
			strings.Join(set, ", "), Prefix, dbParts[partSSLMode].own, modulePrefixes[0], dbParts[partSSLMode].module,
			modulePrefixes[0], dbParts[partTLSEnabled].module)
	}
	return problems
}

// checkCA checks that path holds PEM certificates, each one parsing.
func checkCA(path string) error {
	b, err := readLimited(path, maxPEMFile)
	if err != nil {
		return err
	}
	n := 0
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		n++
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("%s: certificate %d does not parse: %v", path, n, err)
		}
	}
	if n == 0 {
		return fmt.Errorf("%s holds no PEM certificate (-----BEGIN CERTIFICATE-----)", path)
	}
	return nil
}

// checkKeyPair checks the client certificate and key: both readable, the key
// not encrypted (neither the driver nor the REST module asks for a
// passphrase), and the key the certificate's.
func (d Database) checkKeyPair() []string {
	cert, cerr := readLimited(d.Cert, maxPEMFile)
	key, kerr := readLimited(d.Key, maxPEMFile)
	var problems []string
	if cerr != nil {
		problems = append(problems, fmt.Sprintf("%s: %v", d.from[partCert], cerr))
	}
	if kerr != nil {
		problems = append(problems, fmt.Sprintf("%s: %v", d.from[partKey], kerr))
	}
	if len(problems) > 0 {
		return problems
	}
	if block, _ := pem.Decode(cert); block == nil || block.Type != "CERTIFICATE" {
		return []string{fmt.Sprintf("%s: %s holds no PEM certificate (-----BEGIN CERTIFICATE-----)", d.from[partCert], d.Cert)}
	}
	block, _ := pem.Decode(key)
	switch {
	case block == nil || !strings.HasSuffix(block.Type, "PRIVATE KEY"):
		return []string{fmt.Sprintf("%s: %s holds no PEM private key (-----BEGIN … PRIVATE KEY-----)", d.from[partKey], d.Key)}
	case block.Type == "ENCRYPTED PRIVATE KEY" || block.Headers["Proc-Type"] != "":
		return []string{fmt.Sprintf("%s: %s is encrypted: give the key unencrypted, in a Secret", d.from[partKey], d.Key)}
	}
	if _, err := tls.X509KeyPair(cert, key); err != nil {
		return []string{fmt.Sprintf("%s (%s) and %s (%s) are not a pair: %v", d.from[partKey], d.Key, d.from[partCert], d.Cert, err)}
	}
	return nil
}

// Separate reports whether where the database is was given in separate
// settings rather than in MIRRORQL_DATABASE_URL.
func (d Database) Separate() bool { return d.separate }

// Given lists the variables of the separate settings that were set.
func (d Database) Given() []string {
	var out []string
	for p := range numParts {
		if d.from[p] != "" {
			out = append(out, d.from[p])
		}
	}
	return out
}

// ConnConfig is the driver's configuration of the database: the separate
// settings when where the database is was given that way, else url
// (MIRRORQL_DATABASE_URL, or its default) with a user and password given
// separately in place of the URL's. The password is set on the parsed
// configuration, never written into a connection string, so that it reaches
// the server byte for byte. Where the database is goes through a
// keyword/value string, each value quoted, because the driver derives from
// it what depends on the host: the TLS configuration (the name verify-full
// checks) and, for sslmode allow and prefer, the attempt without TLS.
func (d Database) ConnConfig(url string) (*pgx.ConnConfig, error) {
	var c *pgx.ConnConfig
	if !d.separate {
		var err error
		if c, err = pgx.ParseConfig(url); err != nil {
			return nil, fmt.Errorf("%sDATABASE_URL: %s", Prefix, redact.Secret(err.Error(), url))
		}
	} else {
		var kv strings.Builder
		for _, s := range [][2]string{
			{"host", d.Host}, {"port", strconv.Itoa(int(d.Port))}, {"dbname", d.Name}, {"user", d.User},
			// Every TLS setting said, so that the driver's defaults
			// (PGSSLROOTCERT, ~/.postgresql/root.crt and the like) add
			// nothing the settings did not ask for.
			{"sslmode", d.SSLMode}, {"sslrootcert", d.CA}, {"sslcert", d.Cert}, {"sslkey", d.Key},
		} {
			kv.WriteString(s[0])
			kv.WriteString("=")
			kv.WriteString(quoteKeywordValue(s[1]))
			kv.WriteString(" ")
		}
		var err error
		if c, err = pgx.ParseConfig(kv.String()); err != nil {
			return nil, fmt.Errorf("database settings: %w", err)
		}
	}
	if d.userGiven {
		c.User = d.User
	}
	if d.passwordGiven {
		c.Password = d.Password
	}
	return c, nil
}

// quoteKeywordValue quotes s for a keyword/value connection string: in
// single quotes, a quote or backslash escaped by a backslash (libpq's rule).
func quoteKeywordValue(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// DBConnConfig is the driver's configuration of the service's database (see
// Database.ConnConfig).
func (c Config) DBConnConfig() (*pgx.ConnConfig, error) { return c.Database.ConnConfig(c.DatabaseURL) }

// LogDatabase says at start where the database is and where each part of
// its settings came from, never the password (only where it came from),
// and warns of a setting that another overrides.
func (c Config) LogDatabase(log *slog.Logger) {
	d := c.Database
	var attrs, from []any
	if d.separate {
		attrs = append(attrs, "host", d.Host, "port", d.Port, "name", d.Name, "username", d.User, "sslmode", d.SSLMode)
		for _, f := range []struct {
			p    dbPart
			path string
		}{{partCA, d.CA}, {partCert, d.Cert}, {partKey, d.Key}} {
			if f.path != "" {
				attrs = append(attrs, dbParts[f.p].key, f.path)
			}
		}
		for _, p := range []dbPart{partHost, partPort, partName, partUser, partSSLMode} {
			from = append(from, dbParts[p].key, orDefault(d.from[p]))
		}
		for _, p := range []dbPart{partTLSEnabled, partCA, partCert, partKey} {
			if d.from[p] != "" {
				from = append(from, dbParts[p].key, d.from[p])
			}
		}
	} else {
		attrs = append(attrs, "url", redact.URL(c.DatabaseURL))
		from = append(from, "url", orDefault(d.urlFrom))
		if d.userGiven {
			attrs = append(attrs, "username", d.User)
			from = append(from, "username", d.from[partUser])
		}
	}
	switch {
	case d.passwordFile != "":
		from = append(from, "password", d.from[partPassword]+" "+d.passwordFile)
	case d.passwordGiven:
		from = append(from, "password", d.from[partPassword])
	case d.separate:
		from = append(from, "password", "not set")
	default:
		from = append(from, "password", "url")
	}
	attrs = append(attrs, slog.Group("from", from...))
	log.Info("database settings", attrs...)
	if d.passwordGiven {
		if why := scramTrouble(d.Password); why != "" {
			log.Warn("database password: a scram-sha-256 login may fail: "+why+" (docs/configuration.md, \"Passwords the driver cannot send\")",
				"from", d.from[partPassword])
		}
	}
	for p := range numParts {
		if d.shadowed[p] != "" {
			log.Warn("database setting overridden", "part", dbParts[p].key, "used", d.from[p], "ignored", d.shadowed[p])
		}
	}
}

func orDefault(s string) string {
	if s == "" {
		return "default"
	}
	return s
}

// scramTrouble says why the driver's scram-sha-256 login fails with pw, or
// "". PostgreSQL hashes the password after its SASLprep (RFC 4013), or as
// given where SASLprep refuses it; the pool hands the driver what
// PostgreSQL hashes (db's login.go), and the driver prepares that once more
// (PRECIS OpaqueString, RFC 8265), which leaves whatever SASLprep made as it
// is. What it changes is a password SASLprep refuses: bytes that are not
// UTF-8, which it replaces, and text it normalizes otherwise. No string the
// driver is handed makes it hash such a password as PostgreSQL does; md5
// and password logins, which take the password as given, succeed.
func scramTrouble(pw string) string {
	prepared, _ := saslprep.Prepare(pw)
	switch {
	case saslprep.Pgx(prepared) == prepared:
		return ""
	case !utf8.ValidString(pw):
		return "the password is not UTF-8, and the driver sends it as UTF-8 with replacement characters"
	}
	return "PostgreSQL's SASLprep refuses the password (a character it prohibits, or right-to-left letters beside others) " +
		"and hashes it as given, and the driver changes it (NFC, a non-ASCII space)"
}
