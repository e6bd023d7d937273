package fakegithub

import (
	"fmt"
	"time"
)

// The test controls of the Actions service: each reproduces a behaviour of
// the real service that a listener must survive.

// RefuseRegistrationNext answers the next n runner-registration calls with
// 401, which the real service sometimes does for a good token.
func (s *Server) RefuseRegistrationNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.actions.faults.registrationRefusals = n
}

// FailPollsNext answers the next n message polls with 503.
func (s *Server) FailPollsNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.actions.faults.serverErrors = n
}

// ThrottlePollsNext answers the next n message polls with 429 and Retry-After.
func (s *Server) ThrottlePollsNext(n int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.actions.faults.tooManyRequests, s.actions.faults.retryAfter = n, retryAfter
}

// EmptyPollsNext answers the next n message polls with 200 and no body.
func (s *Server) EmptyPollsNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.actions.faults.emptyOKs = n
}

// HoldMessageDeletes holds every message delete until the returned func is
// called: a listener that recorded a message and dies before it acknowledged
// it can be caught in between.
func (s *Server) HoldMessageDeletes() (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	held := make(chan struct{})
	s.actions.faults.deletesHeld = held
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.actions.faults.deletesHeld == held {
			s.actions.faults.deletesHeld = nil
			close(held)
		}
	}
}

// SetBOM starts every Actions service JSON body with a UTF-8 byte order mark.
func (s *Server) SetBOM(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.actions.faults.bom = on
}

// FreezeStatistics makes every message and session report the statistics of
// now until ThawStatistics: the stale assigned count the service sometimes
// sends.
func (s *Server) FreezeStatistics(setID int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	set, ok := s.actions.sets[setID]
	if !ok {
		return fmt.Errorf("fake github: no scale set %d", setID)
	}
	st := s.statistics(set)
	s.actions.staleStatistics = &st
	return nil
}

// ThawStatistics ends FreezeStatistics.
func (s *Server) ThawStatistics() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.actions.staleStatistics = nil
}

// DeleteScaleSet deletes a set as the service does to one offline for days:
// its id answers 404 from then on, and a set made again gets a new id.
func (s *Server) DeleteScaleSet(id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	set, ok := s.actions.sets[id]
	if !ok {
		return fmt.Errorf("fake github: no scale set %d", id)
	}
	s.dropSet(set)
	return nil
}

// OpenStaleSession gives a set a session owned by someone else, as a listener
// that died leaves one: creating a session answers 409 until it expires,
// SessionTTL after now.
func (s *Server) OpenStaleSession(setID int64, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	set, ok := s.actions.sets[setID]
	if !ok {
		return fmt.Errorf("fake github: no scale set %d", setID)
	}
	set.session = &setSession{ID: newToken()[5:37], Owner: owner, LastSeen: s.now()}
	s.newSessionToken(set.session)
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

// ScaleSetStatisticsOf are a set's statistics now.
func (s *Server) ScaleSetStatisticsOf(setID int64) (ScaleSetStatistics, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	set, ok := s.actions.sets[setID]
	if !ok {
		return ScaleSetStatistics{}, fmt.Errorf("fake github: no scale set %d", setID)
	}
	return s.statistics(set), nil
}
