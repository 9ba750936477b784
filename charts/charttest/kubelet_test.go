package charttest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"mirrorql/config"
	"mirrorql/redact"
	"mirrorql/tests/testpki"
	"mirrorql/tests/throwaway"
	"mirrorql/tools/pgcluster"
)

// The kubelet's side of the chart: the environment and the files a
// container of the rendered Deployment gets, made as the kubelet makes them
// (pkg/kubelet's makeEnvironmentVariables and Secret volumes, as the
// Kubernetes API documents them), then used to log in to a real server.

// expand is the kubelet's expansion of an env value (EnvVar.Value's
// documentation; third_party/forked/golang/expansion): $(NAME) is NAME's
// value when NAME is defined above, else stays as it is; $$ is $; a $
// before anything else is itself.
func expand(s string, lookup func(string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// serviceLinks are the Docker-link variables the kubelet gives a pod for
// each Service of its namespace unless enableServiceLinks is false, and for
// the API server's always.
func serviceLinks(pod corev1.PodSpec, services []corev1.Service) []corev1.EnvVar {
	api := corev1.Service{}
	api.Name, api.Spec.ClusterIP = "kubernetes", "10.96.0.1"
	api.Spec.Ports = []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP}}
	all := []corev1.Service{api}
	if pod.EnableServiceLinks == nil || *pod.EnableServiceLinks {
		all = append(all, services...)
	}
	var out []corev1.EnvVar
	for _, s := range all {
		name := strings.ToUpper(strings.ReplaceAll(s.Name, "-", "_"))
		ip := s.Spec.ClusterIP
		add := func(k, v string) { out = append(out, corev1.EnvVar{Name: name + k, Value: v}) }
		p := s.Spec.Ports[0]
		add("_SERVICE_HOST", ip)
		add("_SERVICE_PORT", strconv.Itoa(int(p.Port)))
		add("_PORT", fmt.Sprintf("%s://%s:%d", strings.ToLower(string(p.Protocol)), ip, p.Port))
		prefix := fmt.Sprintf("_PORT_%d_%s", p.Port, p.Protocol)
		add(prefix, fmt.Sprintf("%s://%s:%d", strings.ToLower(string(p.Protocol)), ip, p.Port))
		add(prefix+"_PROTO", strings.ToLower(string(p.Protocol)))
		add(prefix+"_PORT", strconv.Itoa(int(p.Port)))
		add(prefix+"_ADDR", ip)
	}
	return out
}

// kubeletEnv is container c's environment as the kubelet makes it: the
// service links, then each variable of c in order; a value expanded from the
// variables above it, a Secret's key its bytes as they are (never
// expanded), a resource field in units of its divisor. secrets are the
// namespace's Secrets by name.
func kubeletEnv(t *testing.T, pod corev1.PodSpec, c corev1.Container, services []corev1.Service, secrets map[string]map[string][]byte) []string {
	t.Helper()
	if len(c.EnvFrom) > 0 {
		t.Fatalf("envFrom %+v: not simulated", c.EnvFrom)
	}
	vars := map[string]string{}
	var order []string
	set := func(name, value string) {
		if _, ok := vars[name]; !ok {
			order = append(order, name)
		}
		vars[name] = value
	}
	for _, e := range serviceLinks(pod, services) {
		set(e.Name, e.Value)
	}
	lookup := func(name string) (string, bool) { v, ok := vars[name]; return v, ok }
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			set(e.Name, expand(e.Value, lookup))
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			v, ok := secrets[ref.Name][ref.Key]
			if !ok {
				t.Fatalf("%s: Secret %s has no key %s: the pod would not start (CreateContainerConfigError)", e.Name, ref.Name, ref.Key)
			}
			set(e.Name, string(v))
		case e.ValueFrom.ResourceFieldRef != nil:
			ref := e.ValueFrom.ResourceFieldRef
			name, _ := strings.CutPrefix(ref.Resource, "limits.")
			q := c.Resources.Limits[corev1.ResourceName(name)]
			divisor := ref.Divisor
			if divisor.IsZero() {
				divisor = resource.MustParse("1")
			}
			set(e.Name, strconv.FormatInt((q.Value()+divisor.Value()-1)/divisor.Value(), 10))
		default:
			t.Fatalf("%s: %+v not simulated", e.Name, e.ValueFrom)
		}
	}
	env := make([]string, 0, len(order))
	for _, name := range order {
		env = append(env, name+"="+vars[name])
	}
	return env
}

// mountSecrets writes each Secret volume c mounts into its mountPath, a
// file per key, with the volume's mode, as the kubelet projects them (the
// tests set mount paths in their own directories).
func mountSecrets(t *testing.T, pod corev1.PodSpec, c corev1.Container, secrets map[string]map[string][]byte) {
	t.Helper()
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name != m.Name || v.Secret == nil {
				continue
			}
			data, ok := secrets[v.Secret.SecretName]
			if !ok {
				t.Fatalf("volume %s: no Secret %s: the pod would not start", v.Name, v.Secret.SecretName)
			}
			mode := os.FileMode(0o644)
			if v.Secret.DefaultMode != nil {
				mode = os.FileMode(*v.Secret.DefaultMode)
			}
			if err := os.MkdirAll(m.MountPath, 0o755); err != nil {
				t.Fatal(err)
			}
			for key, b := range data {
				if err := os.WriteFile(filepath.Join(m.MountPath, key), b, mode); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// The expansion as the Kubernetes API documents it.
func TestKubeletExpansion(t *testing.T) {
	vars := map[string]string{"A": "a", "P": "p@ss$(A)"}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	for in, want := range map[string]string{
		"$(A)": "a", "x$(A)y": "xay", "$(B)": "$(B)", "$$(A)": "$(A)", "$$": "$", "$A": "$A", "$(A": "$(A",
		"$": "$", "a$": "a$", "$(P)": "p@ss$(A)", "$()": "$()", "$$$(A)": "$a",
	} {
		if got := expand(in, lookup); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

// chartPasswords are passwords an operator may set in the umbrella's
// rest.db.password, among them the issue's: each must reach the service as
// it is, though the kubelet expands $(…) in values and a URL gives @ : / ?
// # % meanings.
var chartPasswords = []string{
	"Abc123def456", "p@ss:w/rd#1?x%&y=z", `a space, a quote' " and a backslash\`, "pässwörd-€",
	"$(MIRRORQL_DB_HOST)", "$$(X)$", "",
}

// umbrellaSecret is mirror-passwords as the umbrella writes it for the REST
// module (no port key), with password.
func umbrellaSecret(host, user, password string) map[string][]byte {
	return map[string][]byte{
		"HIERO_MIRROR_REST_DB_HOST": []byte(host), "HIERO_MIRROR_REST_DB_NAME": []byte("mirror_node"),
		"HIERO_MIRROR_REST_DB_USERNAME": []byte(user), "HIERO_MIRROR_REST_DB_PASSWORD": []byte(password),
		"HIERO_MIRROR_GRPC_DB_PASSWORD": []byte("another module's"), "HIERO_MIRROR_IMPORTER_DB_HOST": []byte("primary"),
	}
}

// The pod's environment as the kubelet gives it, for every password, with
// a Service named mirrorql-db and the release named mirrorql beside it:
// the password is the Secret's bytes, the service loads it as they are, and
// no Service hands the pod a variable of mirrorql's.
func TestChartEnvAsTheKubeletGivesIt(t *testing.T) {
	services := []corev1.Service{{}, {}}
	services[0].Name, services[1].Name = "mirrorql", "mirrorql-db"
	for i := range services {
		services[i].Spec.ClusterIP = "10.0.0." + strconv.Itoa(10+i)
		services[i].Spec.Ports = []corev1.ServicePort{{Port: 5432, Protocol: corev1.ProtocolTCP}}
	}
	for _, pw := range chartPasswords {
		d := deployment(t, render(t, map[string]any{"fullnameOverride": "mirrorql"}))
		env := kubeletEnv(t, d.Spec.Template.Spec, d.Spec.Template.Spec.Containers[0], services,
			map[string]map[string][]byte{"mirror-passwords": umbrellaSecret("mirror-citus-reads", "mirror_rest", pw)})
		for _, kv := range env {
			if strings.HasPrefix(kv, "MIRRORQL_") && strings.Contains(kv, "10.0.0.") {
				t.Errorf("a Service's link variable reaches the pod: %s", kv)
			}
		}
		cfg, err := config.LoadEnv(env)
		if err != nil {
			t.Fatalf("%q: the service refuses the pod's environment: %v", pw, err)
		}
		cc, err := cfg.DBConnConfig()
		if err != nil {
			t.Fatal(err)
		}
		if cc.Password != pw || cc.Host != "mirror-citus-reads" || cc.User != "mirror_rest" || cc.Port != 5432 || cc.Database != "mirror_node" {
			t.Errorf("%q: logs in to %s:%d/%s as %s with password %q", pw, cc.Host, cc.Port, cc.Database, cc.User, cc.Password)
		}
	}
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// buildMirrorql builds mirrorql (the repository's module) once per test
// process; removeBinary, at the end of the tests, removes it.
func buildMirrorql() (string, error) {
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mirrorql-charttest-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "mirrorql")
		build := exec.Command("go", "build", "-o", binPath, ".")
		build.Dir = "../.."
		if out, err := build.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	return binPath, binErr
}

func mirrorqlBinary(t *testing.T) string {
	t.Helper()
	bin, err := buildMirrorql()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func removeBinary() {
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
}

// patience bounds a wait for a process or a server: a passing test never
// waits it out, however busy the machine.
const patience = 2 * time.Minute

// runPod runs `mirrorql serve` with env, the pod's environment exactly,
// but for the listen addresses (a free port, no gRPC listener), until its
// readiness answers 200, which it does once the database answers; then stops
// it and returns its log. pw is a password no log line may show.
func runPod(t *testing.T, env []string, pw string) string {
	t.Helper()
	cmd := exec.Command(mirrorqlBinary(t), "serve")
	cmd.Env = append(env, "MIRRORQL_LISTEN=127.0.0.1:0", "MIRRORQL_GRPC_LISTEN=", "MIRRORQL_DB_POOL_SIZE=1", "MIRRORQL_LOG_FLUSH=0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		log strings.Builder
	)
	addr := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			var l struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "listening" {
				addr <- l.Addr
			}
		}
	}()
	stop := func() string {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(patience):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = cmd.Wait()
		mu.Lock()
		defer mu.Unlock()
		return log.String()
	}
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-done:
		t.Fatalf("serve ended:\n%s", stop())
	case <-time.After(patience):
		t.Fatalf("serve did not listen:\n%s", stop())
	}
	for deadline := time.Now().Add(patience); ; {
		resp, err := http.Get(base + "/health/readiness")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready:\n%s", stop())
		}
		time.Sleep(50 * time.Millisecond)
	}
	out := stop()
	q, _ := json.Marshal(pw)
	// A password that names a variable shares pieces with the log's own
	// words (where each part came from): for it, the whole of it.
	pieces := !strings.Contains(pw, config.Prefix)
	for _, line := range strings.Split(out, "\n") {
		for _, p := range []string{pw, strings.Trim(string(q), `"`)} {
			if p != "" && strings.Contains(line, p) || pieces && redact.Fragments(line, p) != line {
				t.Errorf("a log line shows (a piece of) the password: %s", line)
			}
		}
	}
	return out
}

// startCluster starts a throwaway cluster with a login role per password
// (scram-sha-256 verifiers), then has it admit clients by access.
func startCluster(t *testing.T, roles map[string]string, access func(*pgcluster.Cluster) pgcluster.Access) *pgcluster.Cluster {
	t.Helper()
	ctx := context.Background()
	c, conn := throwaway.Cluster(t, pgcluster.Options{})
	names := make([]string, 0, len(roles))
	for role := range roles {
		names = append(names, role)
	}
	sort.Strings(names)
	for _, role := range names {
		stmt := "set password_encryption = 'scram-sha-256'; create role " + pgx.Identifier{role}.Sanitize() + " login"
		if pw := roles[role]; pw != "" {
			stmt += " password '" + strings.ReplaceAll(pw, "'", "''") + "'"
		}
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.SetAccess(ctx, access(c)); err != nil {
		t.Fatal(err)
	}
	return c
}

// The chart with its defaults, beside a mirror node: the pod's environment
// from the umbrella's Secret as the kubelet resolves it logs in to a server
// that checks scram-sha-256, whatever the password (the empty one: a role
// the server asks none of).
func TestChartLogsInAsTheKubeletSetsIt(t *testing.T) {
	t.Parallel()
	roles := map[string]string{}
	for i, pw := range chartPasswords {
		roles[fmt.Sprintf("rest %d", i)] = pw
	}
	c := startCluster(t, roles, func(*pgcluster.Cluster) pgcluster.Access {
		return pgcluster.Access{HBA: []string{
			"host all " + strconv.Quote(fmt.Sprintf("rest %d", len(chartPasswords)-1)) + " 127.0.0.1/32 trust",
			"host all all 127.0.0.1/32 scram-sha-256",
		}}
	})
	for i, pw := range chartPasswords {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			d := deployment(t, render(t, map[string]any{"database": map[string]any{"port": c.Port()}}))
			pod := d.Spec.Template.Spec
			env := kubeletEnv(t, pod, pod.Containers[0], nil,
				map[string]map[string][]byte{"mirror-passwords": umbrellaSecret("127.0.0.1", fmt.Sprintf("rest %d", i), pw)})
			log := runPod(t, env, pw)
			if !strings.Contains(log, `"password":"MIRRORQL_DB_PASSWORD"`) {
				t.Errorf("the log does not say where the password came from:\n%s", log)
			}
		})
	}
}

// With database.tls, the chart mounts the Secret's CA, certificate and key
// and asks verify-full: the pod logs in to a server that takes TLS alone and
// a client certificate of the user on top of its password.
func TestChartLogsInOverTLS(t *testing.T) {
	t.Parallel()
	const user, pw = "mirror_rest", `tls p@ss:w/rd'"\`
	ca := testpki.NewCA(t, "database CA")
	server, client := ca.Server(t, "127.0.0.1"), ca.Client(t, user)
	c := startCluster(t, map[string]string{user: pw}, func(*pgcluster.Cluster) pgcluster.Access {
		return pgcluster.Access{
			Files: map[string][]byte{"server.crt": server.Cert, "server.key": server.Key, "root.crt": ca.PEM},
			Settings: map[string]string{"ssl": "on", "ssl_cert_file": "server.crt", "ssl_key_file": "server.key",
				"ssl_ca_file": "root.crt"},
			HBA: []string{"hostssl all all 127.0.0.1/32 scram-sha-256 clientcert=verify-full"},
		}
	})
	mount := filepath.Join(t.TempDir(), "database-tls")
	d := deployment(t, render(t, map[string]any{"database": map[string]any{"port": c.Port(),
		"tls": map[string]any{"secret": "mirrorql-database-tls", "cert": "tls.crt", "key": "tls.key", "mountPath": mount}}}))
	pod := d.Spec.Template.Spec
	secrets := map[string]map[string][]byte{
		"mirror-passwords":      umbrellaSecret("127.0.0.1", user, pw),
		"mirrorql-database-tls": {"ca.crt": ca.PEM, "tls.crt": client.Cert, "tls.key": client.Key},
	}
	mountSecrets(t, pod, pod.Containers[0], secrets)
	env := kubeletEnv(t, pod, pod.Containers[0], nil, secrets)
	log := runPod(t, env, pw)
	if !strings.Contains(log, `"sslmode":"verify-full"`) || !strings.Contains(log, `"tls_cert":"`+mount+`/tls.crt"`) {
		t.Errorf("not verify-full with the mounted files:\n%s", log)
	}
}
