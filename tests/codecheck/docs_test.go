package codecheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../.."

// TestReferenceCopies: the copies in docs/reference are the files its README
// lists, with the hashes it lists, and the same as ../shared/reference when
// that folder is beside the repository — but for the pages the repository
// has made its own (ownReference).
func TestReferenceCopies(t *testing.T) {
	dir := filepath.Join(repoRoot, "docs", "reference")
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| \\[`([^`]+)`\\]\\([^)]+\\) \\|.*\\| `([0-9a-f]{64})` \\|$")
	rows := row.FindAllStringSubmatch(string(readme), -1)
	if len(rows) < 5 {
		t.Fatalf("docs/reference/README.md lists %d files", len(rows))
	}
	listed := map[string]bool{"README.md": true}
	shared := filepath.Join(repoRoot, "..", "shared", "reference")
	for _, r := range rows {
		name, want := r[1], r[2]
		listed[name] = true
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != want {
			t.Errorf("%s: sha256 %x, the README says %s", name, sum, want)
		}
		if orig, err := os.ReadFile(filepath.Join(shared, name)); err == nil && !ownReference[name] && !bytes.Equal(orig, b) {
			t.Errorf("%s differs from %s: copy it again and update the README", name, filepath.Join(shared, name))
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !listed[e.Name()] {
			t.Errorf("docs/reference/%s is not in its README's table", e.Name())
		}
	}
}

// ownReference are the pages of docs/reference this repository keeps
// itself (its README says since when and why): the decisions grow with the
// differential cases (tests/testdata/restdiff).
var ownReference = map[string]bool{"DECISIONS.md": true}

var (
	// A citation of a reference page, perhaps with a path before it.
	citation = regexp.MustCompile(`([\w./-]*/)?(behavior\.md|schema\.md|v2-layout\.md|live\.md|grpc\.md|DECISIONS\.md|DECISIONS #)`)
	// A relative Markdown link.
	mdLink = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	// sharedPage is a page of ../shared/reference named by its path there,
	// which a clone does not have.
	sharedPage = regexp.MustCompile(`\.\./shared/reference/([A-Za-z0-9_.-]+\.md)`)
)

// TestCitationsResolve: every citation of a reference page in the code and
// the docs names a file of this repository (docs/reference/…, from the root
// or from the citing file's folder), every relative link of the docs
// leads to a file, and no doc sends its reader to a reference page by its
// path beside the repository (../shared/reference/…) when a copy is here. The byte-identical copies under tests/testdata/conformance
// cite their own neighbours and are left alone.
func TestCitationsResolve(t *testing.T) {
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case rel == ".git", rel == "node_modules", rel == "bin", rel == "tests/testdata/conformance":
				return filepath.SkipDir
			}
			return nil
		}
		if rel == "tests/codecheck/docs_test.go" { // its patterns are not citations
			return nil
		}
		ext := filepath.Ext(path)
		if ext != ".go" && ext != ".md" && d.Name() != "Makefile" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		inReference := strings.HasPrefix(rel, "docs/reference/")
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range citation.FindAllStringSubmatch(line, -1) {
				prefix, name := m[1], strings.TrimSuffix(m[2], " #")
				if name == "DECISIONS" {
					name = "DECISIONS.md"
				}
				switch {
				case prefix == "" && inReference: // the pages cite each other by name
				case prefix == "" && (name == "live.md" || name == "grpc.md"):
					// Other files bear these names (bench/results/live.md); a
					// citation of the reference says docs/reference/.
				case prefix == "":
					t.Errorf("%s:%d: %q: cite docs/reference/%s", rel, i+1, m[0], name)
				case !exists(filepath.Join(repoRoot, prefix, name)) && !exists(filepath.Join(filepath.Dir(path), prefix, name)):
					if strings.Contains(prefix, "reference/") || prefix == "docs/" {
						t.Errorf("%s:%d: %q names no file", rel, i+1, m[0])
					}
				}
			}
			if ext != ".md" {
				continue
			}
			for _, m := range sharedPage.FindAllStringSubmatch(line, -1) {
				if exists(filepath.Join(repoRoot, "docs", "reference", m[1])) {
					t.Errorf("%s:%d: %q is not in a clone: cite docs/reference/%s", rel, i+1, m[0], m[1])
				}
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file := filepath.Join(filepath.Dir(path), target)
				if !exists(file) {
					t.Errorf("%s:%d: link %q leads nowhere", rel, i+1, target)
					continue
				}
				if anchor := strings.TrimPrefix(m[2], "#"); anchor != "" && strings.HasSuffix(file, ".md") && !anchors(t, file)[anchor] {
					t.Errorf("%s:%d: link %q: %s has no heading #%s", rel, i+1, target+m[2], target, anchor)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBenchmarksReportSize: BENCHMARKS.md is a report a reader can hold, at
// most 400 lines; the whole reports, history and figures of earlier runs
// belong in bench/results/ (the generated sections hand over the rest of
// each run's report there: publish and head in bench/cmd/bench).
func TestBenchmarksReportSize(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n > 400 {
		t.Errorf("BENCHMARKS.md has %d lines, more than 400: move the detail to bench/results/", n)
	}
}

// anchors are the fragments the headings of the Markdown file at path get
// (GitHub's: lower case, punctuation but - and _ dropped, spaces as -, a
// repeated one numbered), read once.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	if a, ok := anchorsOf[path]; ok {
		return a
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a, seen, fence := map[string]bool{}, map[string]int{}, false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		heading := strings.TrimLeft(line, "#")
		if fence || len(heading) == len(line) || len(line)-len(heading) > 6 || !strings.HasPrefix(heading, " ") {
			continue
		}
		var slug strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
			switch {
			case r == ' ':
				slug.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				slug.WriteRune(r)
			}
		}
		s := slug.String()
		if n := seen[s]; n > 0 {
			a[s+"-"+strconv.Itoa(n)] = true
		} else {
			a[s] = true
		}
		seen[s]++
	}
	anchorsOf[path] = a
	return a
}

var anchorsOf = map[string]map[string]bool{}
