package pgcluster

import "syscall"

// sysProcAttr runs a server process as cred (nil: as ourselves), in its own
// process group, and has the kernel send it SIGQUIT (immediate shutdown) if
// the thread that started it dies, so a killed caller leaves no server behind.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGQUIT}
}
