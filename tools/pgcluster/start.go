package pgcluster

import (
	"bytes"
	"os/exec"
	"runtime"
)

// StartKept starts cmd from a goroutine that keeps its OS thread until cmd
// exits, and returns a channel that receives cmd.Wait's result and is then
// closed. The kernel sends a child's parent-death signal (Pdeathsig) when
// the thread that started it ends, not the process, and the Go runtime
// retires idle threads: a child started from any other thread can be
// signalled mid-run. (Returning while locked then retires the thread.)
func StartKept(cmd *exec.Cmd) (<-chan error, error) {
	exited := make(chan error, 1)
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		exited <- cmd.Wait()
		close(exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return exited, nil
}

// RunKept runs cmd to its end as StartKept starts it, and returns its
// combined output, as cmd.CombinedOutput does. For a short-lived child with
// a parent-death signal (initdb): run from any thread, it caught SIGQUIT
// midway when the thread was retired under it.
func RunKept(cmd *exec.Cmd) ([]byte, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	exited, err := StartKept(cmd)
	if err == nil {
		err = <-exited
	}
	return out.Bytes(), err
}
