package observe

import (
	"database/sql"
	"net/http"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric of the service.
const Namespace = "mirrorql"

// Version is the service version reported by mirrorql_build_info; release
// builds set it with -ldflags "-X mirrorql/observe.Version=v1.2.3". Empty
// means the module version from the build info.
var Version = ""

// Metrics is the service's Prometheus registry with the instruments of the
// HTTP middleware and the response cache.
type Metrics struct {
	Registry *prometheus.Registry

	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight *prometheus.GaugeVec
	cache    *prometheus.CounterVec
	cacheErr *prometheus.CounterVec
	plans    prometheus.Counter
}

// NewMetrics creates a registry with the Go runtime and process collectors,
// mirrorql_build_info and the HTTP and cache instruments.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "http", Name: "requests_total",
			Help: "HTTP requests answered, by face (rest, graphql, ops), route template, method and status.",
		}, []string{"face", "route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "http", Name: "request_duration_seconds",
			Help:    "Time from routing to the last byte handed to the connection, by face, route template and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"face", "route", "method"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "http", Name: "requests_in_flight",
			Help: "Requests being served, by face.",
		}, []string{"face"}),
		cache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "response_cache", Name: "requests_total",
			Help: "Response cache lookups by store (memory, redis) and result (hit, miss, error: the store failed and the database answered).",
		}, []string{"store", "result"}),
		cacheErr: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "response_cache", Name: "write_errors_total",
			Help: "Responses that could not be written to the cache store.",
		}, []string{"store"}),
		plans: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "graphql", Name: "plan_panics_total",
			Help: "Panics on the compiled GraphQL operations' path (gqlgen then answered the request).",
		}),
	}
	m.Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		buildInfo(),
		m.requests, m.duration, m.inFlight, m.cache, m.cacheErr, m.plans,
	)
	return m
}

// Handler serves the registry in the Prometheus exposition formats. It does
// not compress: the HTTP middleware chain does.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{DisableCompression: true})
}

// CacheResult counts one response cache lookup.
func (m *Metrics) CacheResult(store, result string) { m.cache.WithLabelValues(store, result).Inc() }

// PlanPanic counts a panic on the compiled GraphQL operations' path.
func (m *Metrics) PlanPanic() { m.plans.Inc() }

// CacheWriteError counts one failed cache write.
func (m *Metrics) CacheWriteError(store string) { m.cacheErr.WithLabelValues(store).Inc() }

// RegisterDBStats exports the pool's sql.DBStats as mirrorql_db_pool_*.
func (m *Metrics) RegisterDBStats(stats func() sql.DBStats) {
	m.Registry.MustRegister(&dbStatsCollector{stats: stats})
}

func buildInfo() prometheus.Collector {
	version, revision, modified := Version, "unknown", "false"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if version == "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
	}
	if version == "" {
		version = "unknown"
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "build_info",
		Help: "Always 1; the labels say which build is running.",
		ConstLabels: prometheus.Labels{
			"version": version, "revision": revision, "modified": modified, "go_version": runtime.Version(),
		},
	})
	g.Set(1)
	return g
}

// dbStatsCollector reads sql.DBStats at every scrape.
type dbStatsCollector struct{ stats func() sql.DBStats }

func poolDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "db_pool", name), help, nil, nil)
}

var (
	descMaxOpen   = poolDesc("max_open_connections", "Maximum number of open connections (MIRRORQL_DB_POOL_SIZE).")
	descOpen      = poolDesc("open_connections", "Established connections, in use and idle.")
	descInUse     = poolDesc("in_use_connections", "Connections in use.")
	descIdle      = poolDesc("idle_connections", "Idle connections.")
	descWaitCount = poolDesc("wait_count_total", "Times a query waited for a free connection.")
	descWaitTime  = poolDesc("wait_duration_seconds_total", "Total time spent waiting for a free connection.")
	descIdleClose = poolDesc("max_idle_closed_total", "Connections closed because the pool had too many idle ones.")
	descIdleTime  = poolDesc("max_idle_time_closed_total", "Connections closed for having been idle too long.")
	descLifetime  = poolDesc("max_lifetime_closed_total", "Connections closed for having reached their maximum lifetime.")
)

func (c *dbStatsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descMaxOpen, descOpen, descInUse, descIdle, descWaitCount, descWaitTime, descIdleClose, descIdleTime, descLifetime} {
		ch <- d
	}
}

func (c *dbStatsCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge(descMaxOpen, float64(s.MaxOpenConnections))
	gauge(descOpen, float64(s.OpenConnections))
	gauge(descInUse, float64(s.InUse))
	gauge(descIdle, float64(s.Idle))
	counter(descWaitCount, float64(s.WaitCount))
	counter(descWaitTime, s.WaitDuration.Seconds())
	counter(descIdleClose, float64(s.MaxIdleClosed))
	counter(descIdleTime, float64(s.MaxIdleTimeClosed))
	counter(descLifetime, float64(s.MaxLifetimeClosed))
}

// GRPC is the instruments of the SDKs' face (package consensus's
// Metrics), registered with m.
func (m *Metrics) GRPC() *GRPCMetrics {
	g := &GRPCMetrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "grpc", Name: "calls_total",
			Help: "Calls of the gRPC face ended, by procedure, protocol (grpc, grpcweb, connect) and status code (ok, invalid_argument, not_found, unavailable, …).",
		}, []string{"procedure", "protocol", "code"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "grpc", Name: "calls_in_flight",
			Help: "Calls of the gRPC face in progress (open subscribeTopic streams among them), by procedure and protocol.",
		}, []string{"procedure", "protocol"}),
	}
	m.Registry.MustRegister(g.calls, g.inFlight)
	return g
}

// GRPCMetrics are the gRPC face's instruments.
type GRPCMetrics struct {
	calls    *prometheus.CounterVec
	inFlight *prometheus.GaugeVec
}

func (g *GRPCMetrics) CallStarted(procedure, protocol string) {
	g.inFlight.WithLabelValues(procedure, protocol).Inc()
}

func (g *GRPCMetrics) CallEnded(procedure, protocol, code string) {
	g.inFlight.WithLabelValues(procedure, protocol).Dec()
	g.calls.WithLabelValues(procedure, protocol, code).Inc()
}

// Live is the instruments of the live topic messages (package live's
// Metrics), registered with m.
func (m *Metrics) Live() *LiveMetrics {
	l := &LiveMetrics{
		open: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "live", Name: "subscriptions",
			Help: "Open topic message subscriptions.",
		}),
		delivered: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "live", Name: "messages_delivered_total",
			Help: "Topic messages handed to subscribers.",
		}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "live", Name: "subscriptions_ended_total",
			Help: "Subscriptions ended, by reason (limit, end_time, client_gone, client_too_slow, gap, unavailable, shutdown).",
		}, []string{"reason"}),
		poll: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "live", Name: "poll_duration_seconds",
			Help:    "Time of the live poller's statement.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}),
		lag: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "live", Name: "lag_seconds",
			Help: "Wall clock minus the newest consensus timestamp the live poller has seen.",
		}),
	}
	m.Registry.MustRegister(l.open, l.delivered, l.ended, l.poll, l.lag)
	return l
}

// LiveMetrics are the live topic messages' instruments.
type LiveMetrics struct {
	open      prometheus.Gauge
	delivered prometheus.Counter
	ended     *prometheus.CounterVec
	poll      prometheus.Histogram
	lag       prometheus.Gauge
}

func (l *LiveMetrics) SubscriptionOpened() { l.open.Inc() }
func (l *LiveMetrics) SubscriptionEnded(reason string) {
	l.open.Dec()
	l.ended.WithLabelValues(reason).Inc()
}
func (l *LiveMetrics) Delivered()                { l.delivered.Inc() }
func (l *LiveMetrics) Polled(took time.Duration) { l.poll.Observe(took.Seconds()) }
func (l *LiveMetrics) Lag(d time.Duration)       { l.lag.Set(d.Seconds()) }

// RegisterLayout exports the database layout the query layer found
// (mirrorql_db_layout, 1 for the current one, with what it found as labels)
// and its reads on the v2 layout that fell back to bounds
// (mirrorql_db_partition_fallbacks_total by reason).
func (m *Metrics) RegisterLayout(layout func() map[string]string, reasons []string, fallbacks func(reason string) int64) {
	m.Registry.MustRegister(&layoutCollector{layout: layout})
	for _, r := range reasons {
		m.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: Namespace, Name: "db_partition_fallbacks_total",
			Help: "Reads on the partitioned (v2) layout that read the parent table by bounds where the topic's " +
				"partition map could not vouch, or read the partition catalog again, by reason.",
			ConstLabels: prometheus.Labels{"reason": r},
		}, func() float64 { return float64(fallbacks(r)) }))
	}
}

// layoutCollector reports the layout as it is at each scrape (it can change
// when the database is replaced behind the service).
type layoutCollector struct{ layout func() map[string]string }

var layoutDesc = prometheus.NewDesc(Namespace+"_db_layout",
	"1 for the database layout the service reads (v1 flat or v2 partitioned), with what it found.",
	[]string{"layout", "topic_message_partitioned", "transaction_partitioned", "lookup_rows", "use_lookup", "citus"}, nil)

func (c *layoutCollector) Describe(ch chan<- *prometheus.Desc) { ch <- layoutDesc }

func (c *layoutCollector) Collect(ch chan<- prometheus.Metric) {
	l := c.layout()
	ch <- prometheus.MustNewConstMetric(layoutDesc, prometheus.GaugeValue, 1, l["layout"],
		l["topic_message_partitioned"], l["transaction_partitioned"], l["lookup_rows"], l["use_lookup"], l["citus"])
}
