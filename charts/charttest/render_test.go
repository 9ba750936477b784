package charttest

import (
	"bytes"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"sigs.k8s.io/yaml"
)

const (
	chartDir  = "../mirrorql"
	release   = "mirror"
	namespace = "mirror"
)

// valueSets are the values each test renders the chart with: the chart's
// defaults, and a mirror node's umbrella as it would set them (gateway,
// Traefik middleware, the operator's monitoring).
var valueSets = map[string]string{
	"default":     "",
	"mirror-node": "testdata/mirror-node-values.yaml",
}

func readValues(t *testing.T, file string) map[string]any {
	t.Helper()
	if file == "" {
		return map[string]any{}
	}
	v, err := chartutil.ReadValuesFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// object is one rendered manifest: its source template and its YAML.
type object struct {
	Template string
	Kind     string
	Name     string
	YAML     []byte
}

// render is `helm template` through Helm's own packages: the chart loaded,
// the values coalesced and checked as an install would, every template
// rendered, and each document split out.
func render(t *testing.T, values map[string]any) []object {
	t.Helper()
	files, err := tryRender(values)
	if err != nil {
		t.Fatal(err)
	}
	return objects(t, files, "mirrorql/templates/")
}

// objects splits the rendered files under dir (a chart's templates) into
// their documents, in the order of the file names, without NOTES.txt and
// templates that rendered nothing.
func objects(t *testing.T, files map[string]string, dir string) []object {
	t.Helper()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []object
	for _, name := range names {
		if !strings.HasPrefix(name, dir) || strings.HasSuffix(name, "NOTES.txt") || strings.HasSuffix(name, ".tpl") {
			continue
		}
		for _, doc := range bytes.Split([]byte(files[name]), []byte("\n---")) {
			var head struct {
				Kind     string
				Metadata struct{ Name string }
			}
			if err := yaml.Unmarshal(doc, &head); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, doc)
			}
			if head.Kind == "" {
				continue // a template that rendered nothing
			}
			out = append(out, object{Template: filepath.Base(name), Kind: head.Kind, Name: head.Metadata.Name, YAML: doc})
		}
	}
	return out
}

// tryRender renders the chart's templates with values, as an install would.
func tryRender(values map[string]any) (map[string]string, error) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		return nil, err
	}
	opts := chartutil.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true, Revision: 1}
	vals, err := chartutil.ToRenderValues(ch, values, opts, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	return engine.Render(ch, vals)
}

// renderSet renders one of valueSets.
func renderSet(t *testing.T, set string) []object {
	t.Helper()
	return render(t, readValues(t, valueSets[set]))
}

// find returns the rendered objects of kind.
func find(objs []object, kind string) []object {
	var out []object
	for _, o := range objs {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

// TestLint is `helm lint --strict` over each value set: a warning fails too.
func TestLint(t *testing.T) {
	for set, file := range valueSets {
		t.Run(set, func(t *testing.T) {
			l := lint.AllWithKubeVersion(chartDir, readValues(t, file), namespace, nil)
			for _, m := range l.Messages {
				if m.Severity >= support.WarningSev {
					t.Error(m)
				} else {
					t.Log(m)
				}
			}
		})
	}
}

// NOTES.txt tells the operator where the database login comes from.
func TestNotes(t *testing.T) {
	for want, values := range map[string]map[string]any{
		"from Secret mirror-passwords (keys HIERO_MIRROR_REST_DB_HOST": {},
		"from Secret mirrorql-database, key MIRRORQL_DATABASE_URL":     {"database": map[string]any{"urlSecret": map[string]any{"name": "mirrorql-database"}}},
	} {
		files, err := tryRender(values)
		if err != nil {
			t.Fatal(err)
		}
		if notes := files["mirrorql/templates/NOTES.txt"]; !strings.Contains(notes, want) || !strings.Contains(notes, "/mirrorql/openapi.yml") {
			t.Errorf("NOTES.txt:\n%s\nwants %q", notes, want)
		}
	}
}
