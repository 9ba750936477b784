package vendored

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func sri(body string) string {
	sum := sha256.Sum256([]byte(body))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

const lib, mit = "console.log(1)\n", "MIT License\n\nCopyright (c) someone\n"

func readme(hash string) string {
	return "# Assets\n\nSome prose | with a bar.\n\n" +
		"| file | package | path in the package | sha256 (SRI) | licence |\n" +
		"|---|---|---|---|---|\n" +
		"| lib.min.js | lib@1.2.3 (the browser build) | `dist/lib.min.js` | `" + hash + "` | MIT, LICENSE.lib |\n" +
		"| LICENSE.lib | lib@1.2.3 | `LICENSE` | `" + sri(mit) + "` | MIT, LICENSE.lib |\n" +
		"\nMore prose.\n\n| another | table |\n|---|---|\n| a | b |\n"
}

func TestTable(t *testing.T) {
	got, err := Table(readme(sri(lib)))
	if err != nil {
		t.Fatal(err)
	}
	want := []File{
		{Name: "lib.min.js", Package: "lib@1.2.3 (the browser build)", SRI: sri(lib), Licence: "MIT", LicenceFile: "LICENSE.lib"},
		{Name: "LICENSE.lib", Package: "lib@1.2.3", SRI: sri(mit), Licence: "MIT", LicenceFile: "LICENSE.lib"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Table (-want +got):\n%s", d)
	}
	for name, text := range map[string]string{
		"no table":         "# Assets\n\nnothing here\n",
		"a column missing": "| file | package | licence |\n|---|---|---|\n| a | b | MIT, L |\n",
		"a cell missing":   "| file | package | sha256 (SRI) | licence |\n|---|---|---|---|\n| a | b | MIT, L |\n",
		"no licence file":  "| file | package | sha256 (SRI) | licence |\n|---|---|---|---|\n| a | b | `sha256-x` | MIT |\n",
	} {
		if _, err := Table(text); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestCheck(t *testing.T) {
	files := fstest.MapFS{
		"assets/lib.min.js":  {Data: []byte(lib)},
		"assets/LICENSE.lib": {Data: []byte(mit)},
		"assets/ours.js":     {Data: []byte("ours")},
	}
	rows, err := Table(readme(sri(lib)))
	if err != nil {
		t.Fatal(err)
	}
	if errs := Check(files, "assets", rows, "ours.js"); len(errs) != 0 {
		t.Errorf("a matching directory: %v", errs)
	}

	bad, err := Table(readme(sri("another build")))
	if err != nil {
		t.Fatal(err)
	}
	files["assets/stray.js"] = &fstest.MapFile{Data: []byte("stray")}
	files["assets/LICENSE.lib"] = &fstest.MapFile{Data: []byte("Apache License")}
	errs := fmt.Sprint(Check(files, "assets", bad, "ours.js", "missing.css"))
	for _, want := range []string{
		"lib.min.js: " + sri(lib) + ", the README says " + sri("another build"),
		"lib.min.js: LICENSE.lib is not an MIT licence",
		"assets/stray.js is embedded but neither ours nor in the README's table",
		"missing.css (ours)",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("the errors lack %q: %s", want, errs)
		}
	}
}

func TestVerify(t *testing.T) {
	files := fstest.MapFS{
		"assets/lib.min.js":  {Data: []byte(lib)},
		"assets/LICENSE.lib": {Data: []byte(mit)},
	}
	readmePath := filepath.Join(t.TempDir(), "README.md")
	if err := os.WriteFile(readmePath, []byte(readme(sri(lib))), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, errs := Verify(readmePath, files, "assets")
	if len(rows) != 2 || len(errs) != 0 {
		t.Errorf("Verify: %d rows, errors %v", len(rows), errs)
	}
	if _, errs := Verify(filepath.Join(t.TempDir(), "missing.md"), files, "assets"); len(errs) != 1 {
		t.Errorf("Verify of a missing README: %v", errs)
	}
}
