package fakegithub

// JobEvent is a change of a workflow job, the source of a workflow_job webhook:
// Action is queued, in_progress or completed.
type JobEvent struct {
	Action string
	Job    JobInfo
	// Runner is the runner that took the job (in_progress, completed).
	Runner RunnerInfo
}

// OnJobEvent sets the function that hears every job change, as GitHub's webhook
// sender would. It is called after the change, without the server's lock held, so
// it may call back into the server; it must not block for long.
func (s *Server) OnJobEvent(listen func(JobEvent)) {
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	s.listen = listen
}

func (s *Server) emit(events ...JobEvent) {
	s.listenMu.Lock()
	listen := s.listen
	s.listenMu.Unlock()
	if listen == nil {
		return
	}
	for _, e := range events {
		listen(e)
	}
}
