package localstack

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// scratchDir is where a temporary stack keeps its state: /dev/shm when the
// machine has it, so that etcd's and Temporal's writes never wait on the
// disk that the rest of a loaded machine (builds, test logs) shares; else the
// system's temporary directory.
func scratchDir() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() && unix.Access("/dev/shm", unix.W_OK) == nil {
		return "/dev/shm"
	}
	return ""
}

// ownerFile, in a directory MakeScratchDir made, names the process that made
// it: its PID and its start time, which tell it from a later process that got
// the same PID.
const ownerFile = ".arcflow-owner"

// MakeScratchDir makes a new directory in parent (the system's temporary
// directory when "") named prefix and a random suffix, marked as this
// process's. It first removes the directories of the same prefix whose
// process is gone: a test binary killed at its timeout never stops its stack,
// and a machine that ran CI again and again kept every such stack's files
// (and every build the e2e tests made, 100 MB each) until its disk was full.
func MakeScratchDir(parent, prefix string) (string, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	removeOrphans(parent, prefix)
	dir, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return "", err
	}
	self, err := processIdentity(os.Getpid())
	if err != nil {
		return dir, nil // no /proc: nothing can tell an orphan later, and nothing is swept
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), self, 0o644); err != nil {
		return "", errors.Join(fmt.Errorf("mark %s as this process's: %w", dir, err), os.RemoveAll(dir))
	}
	return dir, nil
}

// removeOrphans removes parent's directories named prefix* whose owner file
// names a process that is gone. A directory without one is left alone.
func removeOrphans(parent, prefix string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		owner, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		if pid, ok := ownerPID(owner); ok {
			if now, err := processIdentity(pid); err == nil && bytes.Equal(now, owner) {
				continue // its process runs
			}
			_ = os.RemoveAll(dir)
		}
	}
}

// processIdentity is "pid starttime" of a running process, from /proc.
func processIdentity(pid int) ([]byte, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	// The command name, in parentheses, may hold spaces; the fields after it
	// are plain. The start time is field 22 of the line, the 20th after it.
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: %w", pid, fs.ErrInvalid)
	}
	fields := strings.Fields(string(stat[end+1:]))
	if len(fields) < 20 {
		return nil, fmt.Errorf("/proc/%d/stat: %w", pid, fs.ErrInvalid)
	}
	return fmt.Appendf(nil, "%d %s", pid, fields[19]), nil
}

// ownerPID reads the PID of an owner file.
func ownerPID(owner []byte) (int, bool) {
	var pid int
	var start string
	if _, err := fmt.Sscanf(string(owner), "%d %s", &pid, &start); err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}
