package main

import (
	"context"
	"errors"
	"io/fs"
	"log"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"mirrorql/tools/pgcluster"
)

// coldRestart makes the database of a throwaway cluster cold, as after a
// reboot: it stops the server (its shared_buffers go), drops the cluster's
// files from the OS page cache — only its own, so nothing else on the
// machine loses its cache — and starts the server again on the same port.
func coldRestart(ctx context.Context, c *pgcluster.Cluster) error {
	if c == nil {
		return errors.New("cold restart: no throwaway cluster")
	}
	if err := c.StopServer(); err != nil {
		return err
	}
	files, err := evict(c.Dir())
	if err != nil {
		return err
	}
	log.Printf("cold restart: server stopped, %d files dropped from the page cache", files)
	return c.StartServer(ctx)
}

// evict asks the kernel to drop the cached pages of every file under dir
// (written back first).
func evict(dir string) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		fh, err := os.Open(path)
		if err != nil {
			return err
		}
		defer fh.Close()
		if err := fh.Sync(); err != nil {
			return err
		}
		if err := unix.Fadvise(int(fh.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			return err
		}
		n++
		return nil
	})
	return n, err
}
