package localstack

// PID is the process ID of the stack's running process called name, 0 when the
// stack runs none: "temporal" is the dev server, "temporal-server" and "postgres"
// (the postmaster) are the cluster's. The bench reads their CPU time and memory
// from /proc.
func (s *Stack) PID(name string) int {
	for _, p := range s.processes() {
		if p.name == name && p.exitedEarly() == nil {
			return p.cmd.Process.Pid
		}
	}
	return 0
}
