package fakegithub

import "time"

// The test controls of message sessions: each reproduces what the real
// service did to a listener's session.

// EmptyQueueURLNext answers the next n session creates with 200 and a session
// (id, token, statistics) whose messageQueueUrl is "", as the service did in a
// broker incident (ARC issue #4370). The session is created all the same and
// holds the set (409 for others) until it is deleted or expires, so a client
// must delete it before it tries again.
func (s *Server) EmptyQueueURLNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.actions.faults.emptyQueueURLs = n
}

// HoldSetBy gives the set a session of another owner for d, as a listener
// that died without deleting its session leaves one: creating a session
// answers 409 RunnerScaleSetSessionConflictException naming owner until d has
// passed, then that session has expired. It replaces any session the set had.
func (s *Server) HoldSetBy(setID int64, owner string, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	set, err := s.setLocked(setID)
	if err != nil {
		return err
	}
	sess := s.openSession(set, owner)
	sess.Expires = s.now().Add(d)
	s.actions.wake()
	return nil
}

// ExpireSession ends the set's live session as if it expired, as the service
// evicts sessions: its refresh answers 404 RunnerScaleSetSessionNotFoundException,
// a poll of its queue (also one waiting now) 404 with the same typeName, its
// DELETE 400 RunnerScaleSetSessionExpiredException, and a new session may be
// created at once.
func (s *Server) ExpireSession(setID int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	set, err := s.setLocked(setID)
	if err != nil {
		return err
	}
	if set.session != nil {
		set.session.Expires = s.now()
	}
	s.actions.wake()
	return nil
}

// ExpireSessionTokens makes every session's queue token expired, so the next
// poll, delete or acquire answers 401 until the session is refreshed.
func (s *Server) ExpireSessionTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, set := range s.actions.sets {
		if set.session != nil {
			set.session.TokenExpires = s.now()
		}
	}
}
