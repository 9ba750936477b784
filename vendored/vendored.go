// Package vendored checks the third-party files a package embeds against
// the table its assets README keeps of them: package, hash and licence of
// each, so that what ships is what the README says.
package vendored

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// File is one row of the table: a third-party file as the README lists it.
type File struct {
	Name    string // the file's name in the assets directory
	Package string // where it comes from: package@version, perhaps with a note
	SRI     string // its hash in Subresource Integrity form, sha256-<base64>
	Licence string // the licence, e.g. MIT
	// LicenceFile is the file beside it that holds the licence.
	LicenceFile string
}

// Table reads the rows of the first Markdown table in readme whose header
// has the columns file, package, sha256 (SRI) and licence (in any order,
// among others). A licence cell reads "<licence>, <licence file>"; the
// other cells may be `quoted`.
func Table(readme string) ([]File, error) {
	var (
		files  []File
		column map[string]int
	)
	for _, line := range strings.Split(readme, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") {
			if column != nil {
				break // the end of the table
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if column == nil {
			column = map[string]int{}
			for i, c := range cells {
				column[c] = i
			}
			for _, want := range []string{"file", "package", "sha256 (SRI)", "licence"} {
				if _, ok := column[want]; !ok {
					return nil, fmt.Errorf("the table's header %q has no column %q", line, want)
				}
			}
			continue
		}
		if strings.Trim(strings.Join(cells, ""), "-: ") == "" {
			continue // the header's underline
		}
		if len(cells) != len(column) {
			return nil, fmt.Errorf("row %q has %d cells, the header %d", line, len(cells), len(column))
		}
		cell := func(name string) string { return strings.Trim(cells[column[name]], "`") }
		licence, file, ok := strings.Cut(cell("licence"), ", ")
		if !ok {
			return nil, fmt.Errorf("row %q: the licence cell is not <licence>, <licence file>", line)
		}
		files = append(files, File{Name: cell("file"), Package: cell("package"), SRI: cell("sha256 (SRI)"),
			Licence: licence, LicenceFile: file})
	}
	if column == nil {
		return nil, fmt.Errorf("no table with the columns file, package, sha256 (SRI) and licence")
	}
	return files, nil
}

// Verify reads the table of the README at readmePath (Table) and Checks dir
// of fsys against it; it returns the rows, for the caller's own checks, and
// every mismatch.
func Verify(readmePath string, fsys fs.FS, dir string, ours ...string) ([]File, []error) {
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		return nil, []error{err}
	}
	files, err := Table(string(readme))
	if err != nil {
		return nil, []error{fmt.Errorf("%s: %w", readmePath, err)}
	}
	return files, Check(fsys, dir, files, ours...)
}

// Check compares the files of dir in fsys with the table's rows: each row's
// file is there with the hash the row gives, beside its licence file (an MIT
// licence says so), and every other file of dir is either one of those
// licence files or one of ours. It returns every mismatch.
func Check(fsys fs.FS, dir string, files []File, ours ...string) []error {
	var errs []error
	known := map[string]bool{}
	for _, name := range ours {
		known[name] = true
	}
	for _, f := range files {
		known[f.Name], known[f.LicenceFile] = true, true
		body, err := fs.ReadFile(fsys, path.Join(dir, f.Name))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s is not embedded: %w", f.Name, err))
			continue
		}
		sum := sha256.Sum256(body)
		if got := "sha256-" + base64.StdEncoding.EncodeToString(sum[:]); got != f.SRI {
			errs = append(errs, fmt.Errorf("%s: %s, the README says %s", f.Name, got, f.SRI))
		}
		lic, err := fs.ReadFile(fsys, path.Join(dir, f.LicenceFile))
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: licence %s: %w", f.Name, f.LicenceFile, err))
		case f.Licence == "MIT" && !strings.Contains(string(lic), "MIT License"):
			errs = append(errs, fmt.Errorf("%s: %s is not an MIT licence", f.Name, f.LicenceFile))
		}
	}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return append(errs, err)
	}
	for _, e := range entries {
		if !e.IsDir() && !known[e.Name()] {
			errs = append(errs, fmt.Errorf("%s is embedded but neither ours nor in the README's table", path.Join(dir, e.Name())))
		}
	}
	for _, name := range ours {
		if _, err := fs.Stat(fsys, path.Join(dir, name)); err != nil {
			errs = append(errs, fmt.Errorf("%s (ours): %w", name, err))
		}
	}
	return errs
}
