package localstack

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// ToolsDirEnv overrides where the stack looks for its binaries.
const ToolsDirEnv = "ARCFLOW_TOOLS_BIN"

// ToolsDir finds the directory holding etcd, kube-apiserver, kwok and temporal:
// $ARCFLOW_TOOLS_BIN, or .tools/bin in the nearest parent of the working directory.
func ToolsDir() (string, error) {
	if dir := os.Getenv(ToolsDirEnv); dir != "" {
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find tools: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		candidate := filepath.Join(dir, ".tools", "bin")
		if st, err := os.Stat(candidate); err == nil && st.IsDir() {
			return candidate, nil
		}
		if dir == filepath.Dir(dir) {
			return "", errors.New("no .tools/bin above the working directory: run `make tools` first")
		}
	}
}

// tool returns the path of a named binary in the tools directory.
func tool(dir, name string) (string, error) {
	path := filepath.Join(dir, name)
	if _, err := exec.LookPath(path); err != nil {
		return "", fmt.Errorf("%s is missing from %s: run `make tools`: %w", name, dir, err)
	}
	return path, nil
}
