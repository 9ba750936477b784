// Package config reads the service's settings from MIRRORQL_* environment
// variables, and the database's also from the mirror node REST module's
// HIERO_MIRROR_REST_DB_* ones, and rejects unknown or malformed ones at
// start-up.
package config

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"
	"github.com/redis/go-redis/v9"

	"mirrorql/redact"
)

// Config is every setting of the service. Each field's env tag is its
// variable name without the MIRRORQL_ prefix.
type Config struct {
	// DatabaseURL is the database unless Database says where it is
	// (Database.Separate); a user and password in Database apply over it.
	DatabaseURL string `env:"DATABASE_URL" envDefault:"postgres://postgres@127.0.0.1:5432/mirror_node?sslmode=disable"`
	// Database is the database's separate settings (database.go):
	// MIRRORQL_DB_HOST and the rest, and the mirror node REST module's
	// HIERO_MIRROR_REST_DB_* variables.
	Database Database
	// DBDriver is kept so that a deployment that names pgx still starts:
	// pgx is the one driver (the query layer's one execution path).
	DBDriver           string        `env:"DB_DRIVER" envDefault:"pgx"`
	DBPrepare          bool          `env:"DB_PREPARE" envDefault:"true"`
	DBCoalesce         int           `env:"DB_COALESCE" envDefault:"4"`
	DBPoolSize         int           `env:"DB_POOL_SIZE" envDefault:"10"`
	DBStatementTimeout time.Duration `env:"DB_STATEMENT_TIMEOUT" envDefault:"20s"`
	DBConnectTimeout   time.Duration `env:"DB_CONNECT_TIMEOUT" envDefault:"1s"`
	// TopicMessageLookup: auto, on or off (docs/layouts.md).
	TopicMessageLookup string        `env:"TOPIC_MESSAGE_LOOKUP" envDefault:"auto"`
	LayoutRefresh      time.Duration `env:"DB_LAYOUT_REFRESH" envDefault:"30s"`
	Listen             string        `env:"LISTEN" envDefault:":8080"`
	PprofListen        string        `env:"PPROF_LISTEN"`
	// GRPCListen is the SDKs' listener (package consensus), the mirror
	// node's port; set empty, there is none (the main listener serves the
	// face all the same).
	GRPCListen           string        `env:"GRPC_LISTEN" envDefault:":5600"`
	ResponseLimitDef     int           `env:"RESPONSE_LIMIT_DEFAULT" envDefault:"25"`
	ResponseLimitMax     int           `env:"RESPONSE_LIMIT_MAX" envDefault:"100"`
	Shard                int64         `env:"SHARD" envDefault:"0"`
	Realm                int64         `env:"REALM" envDefault:"0"`
	ScheduleLifetime     time.Duration `env:"SCHEDULE_LIFETIME" envDefault:"30m"`
	GraphQLIntrospection bool          `env:"GRAPHQL_INTROSPECTION" envDefault:"true"`
	GraphQLMaxBodyBytes  int64         `env:"GRAPHQL_MAX_BODY_BYTES" envDefault:"65536"`
	GraphQLCompiled      bool          `env:"GRAPHQL_COMPILED_OPERATIONS" envDefault:"true"`
	DashboardEnabled     bool          `env:"DASHBOARD_ENABLED" envDefault:"true"` // GET /dashboard
	// PostgresBin is the server build whose initdb and postgres the demo's
	// throwaway cluster runs (package pgcluster reads it, as the tests'
	// clusters do); empty: the installed one.
	PostgresBin string `env:"POSTGRES_BIN"`

	// Live topic messages: GraphQL subscriptions (package live).
	LiveEnabled          bool          `env:"LIVE_ENABLED" envDefault:"true"`
	LivePollInterval     time.Duration `env:"LIVE_POLL_INTERVAL" envDefault:"250ms"`
	LiveRedisURL         string        `env:"LIVE_REDIS_URL"`
	LiveMaxSubscriptions int           `env:"LIVE_MAX_SUBSCRIPTIONS" envDefault:"10000"`
	LiveMaxPerConnection int           `env:"LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION" envDefault:"10"`
	LiveBuffer           int           `env:"LIVE_BUFFER" envDefault:"4096"`
	LiveKeepAlive        time.Duration `env:"LIVE_KEEPALIVE" envDefault:"15s"`
	LiveWriteTimeout     time.Duration `env:"LIVE_WRITE_TIMEOUT" envDefault:"10s"`
	LiveOutage           time.Duration `env:"LIVE_OUTAGE" envDefault:"30s"`
	GraphQLWSOrigins     string        `env:"GRAPHQL_WS_ORIGINS"`
	GraphQLWSInitTimeout time.Duration `env:"GRAPHQL_WS_INIT_TIMEOUT" envDefault:"10s"`

	// Operations: logging, HTTP server timeouts, shutdown.
	LogFormat             string        `env:"LOG_FORMAT" envDefault:"json"`
	LogLevel              string        `env:"LOG_LEVEL" envDefault:"info"`
	LogFlush              time.Duration `env:"LOG_FLUSH" envDefault:"100ms"`
	ShutdownGrace         time.Duration `env:"SHUTDOWN_GRACE" envDefault:"15s"`
	HTTPReadHeaderTimeout time.Duration `env:"HTTP_READ_HEADER_TIMEOUT" envDefault:"5s"`
	HTTPReadTimeout       time.Duration `env:"HTTP_READ_TIMEOUT" envDefault:"15s"`
	HTTPWriteTimeout      time.Duration `env:"HTTP_WRITE_TIMEOUT" envDefault:"30s"`
	HTTPIdleTimeout       time.Duration `env:"HTTP_IDLE_TIMEOUT" envDefault:"120s"`
	RequestTimeout        time.Duration `env:"REQUEST_TIMEOUT" envDefault:"10s"`

	// Response cache of GET /api/v1/schedules.
	CacheEnabled  bool          `env:"CACHE_ENABLED" envDefault:"true"`
	CacheEntries  int           `env:"CACHE_ENTRIES" envDefault:"1000"`
	CacheMaxBytes int64         `env:"CACHE_MAX_BYTES" envDefault:"8388608"`
	RedisURL      string        `env:"REDIS_URL"`
	RedisTimeout  time.Duration `env:"REDIS_TIMEOUT" envDefault:"250ms"`
	// RedisKeyPrefix starts every key, so deployments can share one Redis.
	RedisKeyPrefix string `env:"REDIS_KEY_PREFIX" envDefault:"mirrorql:"`

	// Request limits (package limits): 414, 431, 413, and 429 per client IP.
	MaxURLLength   int     `env:"MAX_URL_LENGTH" envDefault:"16384"`
	MaxHeaderBytes int     `env:"MAX_HEADER_BYTES" envDefault:"32768"`
	MaxBodyBytes   int64   `env:"MAX_BODY_BYTES" envDefault:"1048576"`
	RateLimit      float64 `env:"RATE_LIMIT" envDefault:"0"` // requests/s per client IP; 0 is off
	RateBurst      int     `env:"RATE_BURST" envDefault:"50"`
}

// MaxServerHeaderBytes is the HTTP server's own limit on a request's head
// (request line and headers), past which net/http answers a plain 431
// itself; MIRRORQL_MAX_URL_LENGTH and MIRRORQL_MAX_HEADER_BYTES must stay
// below it to be answered with the documented body.
const MaxServerHeaderBytes = 64 << 10

// Prefix is the common prefix of every variable.
const Prefix = "MIRRORQL_"

// TestPrefix starts the variables of the test suites (MIRRORQL_TEST_DATABASE_URL
// and the like), which the service itself ignores rather than rejects.
const TestPrefix = Prefix + "TEST_"

// Load reads the environment. An unknown MIRRORQL_ variable is an error, so
// a typo cannot silently fall back to a default.
func Load() (Config, error) { return LoadEnv(os.Environ()) }

// LoadEnv is Load over environ, NAME=value pairs as os.Environ gives them
// (of a name given twice, the last, as a process started with them sees).
func LoadEnv(environ []string) (Config, error) {
	var c Config
	vars := make(map[string]string, len(environ))
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		vars[name] = value
	}
	known := Names()
	var unknown []string
	for name := range vars {
		if strings.HasPrefix(name, Prefix) && !strings.HasPrefix(name, TestPrefix) && !known[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return c, fmt.Errorf("unknown configuration variable(s): %s", strings.Join(unknown, ", "))
	}
	if err := env.ParseWithOptions(&c, env.Options{Prefix: Prefix, Environment: vars}); err != nil {
		return c, fmt.Errorf("configuration: %w", err)
	}
	if v, set := vars[Prefix+"GRPC_LISTEN"]; set && strings.TrimSpace(v) == "" {
		c.GRPCListen = "" // the parser would take an empty value for the default
	}
	var problems []string
	c.Database, problems = loadDatabase(vars)
	if len(problems) == 0 {
		// The driver's own checks (the URL, the files it reads) at start,
		// where a bad setting stops the service rather than each connect.
		if _, err := c.DBConnConfig(); err != nil {
			problems = append(problems, err.Error())
		}
	}
	return c, c.validate(problems...)
}

// Defaults is the configuration of an empty environment: every default.
func Defaults() Config {
	var c Config
	if err := env.ParseWithOptions(&c, env.Options{Prefix: Prefix, Environment: map[string]string{}}); err != nil {
		panic("config: the defaults do not parse: " + err.Error())
	}
	c.Database, _ = loadDatabase(map[string]string{})
	return c
}

// Names lists every variable the service reads.
func Names() map[string]bool {
	names := map[string]bool{}
	t := reflect.TypeOf(Config{})
	for i := 0; i < t.NumField(); i++ {
		if tag := t.Field(i).Tag.Get("env"); tag != "" {
			names[Prefix+tag] = true
		}
	}
	for _, p := range dbParts {
		if p.own != "" {
			names[Prefix+p.own] = true
		}
	}
	names[Prefix+passwordFileVar] = true
	return names
}

func (c Config) validate(problems ...string) error {
	check := func(ok bool, format string, args ...any) {
		if !ok {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	check(c.DBDriver == "pgx", "%sDB_DRIVER must be pgx (the only driver since pgdriver was dropped), got %q", Prefix, c.DBDriver)
	check(c.DBPoolSize >= 1, "%sDB_POOL_SIZE must be at least 1", Prefix)
	check(c.DBStatementTimeout > 0, "%sDB_STATEMENT_TIMEOUT must be positive", Prefix)
	check(c.DBConnectTimeout > 0, "%sDB_CONNECT_TIMEOUT must be positive", Prefix)
	switch strings.ToLower(c.TopicMessageLookup) {
	case "auto", "on", "off":
	default:
		problems = append(problems, fmt.Sprintf("%sTOPIC_MESSAGE_LOOKUP must be auto, on or off, got %q", Prefix, c.TopicMessageLookup))
	}
	check(c.LayoutRefresh > 0, "%sDB_LAYOUT_REFRESH must be positive", Prefix)
	check(c.ResponseLimitMax >= 1, "%sRESPONSE_LIMIT_MAX must be at least 1", Prefix)
	check(c.ResponseLimitDef >= 1 && c.ResponseLimitDef <= c.ResponseLimitMax,
		"%sRESPONSE_LIMIT_DEFAULT must be between 1 and %sRESPONSE_LIMIT_MAX", Prefix, Prefix)
	check(c.Shard >= 0 && c.Shard <= 1023, "%sSHARD must be 0..1023", Prefix)
	check(c.Realm >= 0 && c.Realm <= 65535, "%sREALM must be 0..65535", Prefix)
	check(c.ScheduleLifetime > 0, "%sSCHEDULE_LIFETIME must be positive", Prefix)
	check(c.Listen != "", "%sLISTEN must not be empty", Prefix)
	check(c.LogFormat == "json" || c.LogFormat == "text", "%sLOG_FORMAT must be json or text, got %q", Prefix, c.LogFormat)
	_, levelErr := ParseLogLevel(c.LogLevel)
	check(levelErr == nil, "%sLOG_LEVEL must be debug, info, warn or error, got %q", Prefix, c.LogLevel)
	check(c.ShutdownGrace > 0, "%sSHUTDOWN_GRACE must be positive", Prefix)
	check(c.HTTPReadHeaderTimeout > 0, "%sHTTP_READ_HEADER_TIMEOUT must be positive", Prefix)
	check(c.HTTPReadTimeout >= c.HTTPReadHeaderTimeout,
		"%sHTTP_READ_TIMEOUT must be at least %sHTTP_READ_HEADER_TIMEOUT", Prefix, Prefix)
	check(c.HTTPIdleTimeout > 0, "%sHTTP_IDLE_TIMEOUT must be positive", Prefix)
	check(c.RequestTimeout > 0, "%sREQUEST_TIMEOUT must be positive", Prefix)
	// The write deadline runs from the end of the request headers: it must
	// leave room to send the 503 of a request that ran into its deadline.
	check(c.HTTPWriteTimeout > c.RequestTimeout,
		"%sHTTP_WRITE_TIMEOUT must be longer than %sREQUEST_TIMEOUT", Prefix, Prefix)
	check(c.MaxURLLength >= 256 && c.MaxURLLength <= MaxServerHeaderBytes,
		"%sMAX_URL_LENGTH must be between 256 and %d", Prefix, MaxServerHeaderBytes)
	check(c.MaxHeaderBytes >= 1024 && c.MaxHeaderBytes <= MaxServerHeaderBytes,
		"%sMAX_HEADER_BYTES must be between 1024 and %d", Prefix, MaxServerHeaderBytes)
	check(c.MaxBodyBytes >= 1024, "%sMAX_BODY_BYTES must be at least 1024", Prefix)
	check(c.GraphQLMaxBodyBytes >= 1024, "%sGRAPHQL_MAX_BODY_BYTES must be at least 1024", Prefix)
	check(c.RateLimit >= 0 && !math.IsInf(c.RateLimit, 0) && !math.IsNaN(c.RateLimit),
		"%sRATE_LIMIT must be a number of requests per second, 0 (off) or more", Prefix)
	check(c.RateBurst >= 1, "%sRATE_BURST must be at least 1", Prefix)
	check(c.CacheEntries >= 1, "%sCACHE_ENTRIES must be at least 1", Prefix)
	check(c.CacheMaxBytes >= 1024, "%sCACHE_MAX_BYTES must be at least 1024", Prefix)
	check(c.RedisTimeout > 0, "%sREDIS_TIMEOUT must be positive", Prefix)
	check(c.LivePollInterval >= 10*time.Millisecond, "%sLIVE_POLL_INTERVAL must be at least 10ms", Prefix)
	check(c.LiveMaxSubscriptions >= 1, "%sLIVE_MAX_SUBSCRIPTIONS must be at least 1", Prefix)
	check(c.LiveMaxPerConnection >= 1, "%sLIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION must be at least 1", Prefix)
	check(c.LiveBuffer >= 16, "%sLIVE_BUFFER must be at least 16", Prefix)
	check(c.LiveKeepAlive >= time.Second, "%sLIVE_KEEPALIVE must be at least 1s", Prefix)
	check(c.LiveWriteTimeout > 0, "%sLIVE_WRITE_TIMEOUT must be positive", Prefix)
	check(c.LiveOutage > 0, "%sLIVE_OUTAGE must be positive", Prefix)
	check(c.GraphQLWSInitTimeout > 0, "%sGRAPHQL_WS_INIT_TIMEOUT must be positive", Prefix)
	for _, o := range c.WSOrigins() {
		check(o == "*" || strings.HasPrefix(o, "http://") || strings.HasPrefix(o, "https://"),
			"%sGRAPHQL_WS_ORIGINS: %q is not an origin (scheme://host[:port]) or *", Prefix, o)
	}
	if c.LiveRedisURL != "" {
		_, err := redis.ParseURL(c.LiveRedisURL)
		check(err == nil, "%sLIVE_REDIS_URL: %v", Prefix, err)
	}
	if c.RedisURL != "" {
		_, err := redis.ParseURL(c.RedisURL)
		check(err == nil, "%sREDIS_URL: %v", Prefix, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("configuration: %s", strings.Join(problems, "; "))
	}
	return nil
}

// WSOrigins is MIRRORQL_GRAPHQL_WS_ORIGINS as a list (empty: any origin).
func (c Config) WSOrigins() []string {
	var out []string
	for o := range strings.SplitSeq(c.GraphQLWSOrigins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, o)
		}
	}
	return out
}

// ParseLogLevel reads MIRRORQL_LOG_LEVEL: debug, info, warn or error.
func ParseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("unknown log level %q", s)
}

// Redact returns a database (or any) URL fit to print, its password
// replaced by "xxxxx" (see package redact).
func Redact(raw string) string { return redact.URL(raw) }
