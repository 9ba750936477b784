package pgcluster

import (
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// retireThreads ends n OS threads, as a StartKept goroutine does when its
// command exits: locked goroutines that return.
func retireThreads(n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			time.Sleep(time.Millisecond)
		}()
	}
	wg.Wait()
}

// TestRunKeptSurvivesRetiredThreads: a command run with a parent-death
// signal by RunKept lives to its end while the process retires threads
// around it (initdb, run as a plain exec.Cmd, once caught SIGQUIT midway when
// a stopped server's goroutine retired the thread that had started it).
func TestRunKeptSurvivesRetiredThreads(t *testing.T) {
	for i := range 20 {
		cmd := exec.Command("sh", "-c", "sleep 0.2; echo done")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGQUIT}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range 10 {
				retireThreads(20)
			}
		}()
		out, err := RunKept(cmd)
		<-done
		if err != nil || strings.TrimSpace(string(out)) != "done" {
			t.Fatalf("run %d: %v, %q", i, err, out)
		}
	}
}

// TestRetiredThreadSignalsChild: what RunKept guards against does happen,
// so the test above can fail: a child started with a parent-death signal
// from a thread that is then retired gets the signal.
func TestRetiredThreadSignalsChild(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGQUIT}
	started := make(chan error)
	go func() {
		runtime.LockOSThread() // returns locked: the thread that forked ends
		started <- cmd.Start()
	}()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGQUIT {
		t.Fatalf("sleep ended with %v, want killed by SIGQUIT", err)
	}
}
