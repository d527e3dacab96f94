//go:build !linux && !darwin

package sidefile

import "syscall"

// renameNoReplace has no system call here: Rename falls back to a link.
func renameNoReplace(old, new string) error { return syscall.ENOSYS }
