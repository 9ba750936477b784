//go:build unix && !linux

package pgcluster

import "syscall"

// sysProcAttr runs a server process as cred (nil: as ourselves), in its own
// process group. Without a parent-death signal here, a caller killed before
// Stop leaves its server running.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true}
}
