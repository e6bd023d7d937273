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
	set, err := s.setLocked(setID)
	if err != nil {
		return err
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

// DeleteScaleSet deletes a set as the service does to one offline for days
// (7; 1 for sets over a year old): its id answers 404
// RunnerScaleSetNotFoundException from then on, its session and queue are
// gone, and a set made again gets a new id.
func (s *Server) DeleteScaleSet(id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	set, err := s.setLocked(id)
	if err != nil {
		return err
	}
	s.dropSet(set)
	return nil
}

// setLocked is the set of that id, or an error for the test. Callers hold s.mu.
func (s *Server) setLocked(id int64) (*scaleSet, error) {
	set, ok := s.actions.sets[id]
	if !ok {
		return nil, fmt.Errorf("fake github: no scale set %d", id)
	}
	return set, nil
}

// SendForeignMessage puts a message of another messageType (empty:
// "RunnerScaleSetJobMessagesV2") in the set's queue after those made so far,
// as a newer service may send: a client must check the envelope's type, skip
// the message and delete it. Its body is a JSON object, not the array of job
// messages, so a client that decodes it as jobs fails. It returns its id.
func (s *Server) SendForeignMessage(setID int64, messageType string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	set, err := s.setLocked(setID)
	if err != nil {
		return 0, err
	}
	if messageType == "" {
		messageType = jobMessagesType + "V2"
	}
	for len(set.pending) > 0 {
		s.flushPending(set)
	}
	s.actions.nextMessageID++
	set.messages = append(set.messages, setMessage{ID: s.actions.nextMessageID, Type: messageType,
		Body: `{"kind":"` + messageType + `","jobs":{}}`, Statistics: s.statistics(set)})
	s.actions.wake()
	return s.actions.nextMessageID, nil
}

// AcquirableJobsNotFound makes the set's acquirablejobs answer 404 (plain,
// no typeName) while on, as a service without that endpoint would
// (unverified which GHES versions lack it): a client must carry on without it.
func (s *Server) AcquirableJobsNotFound(setID int64, on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	set, err := s.setLocked(setID)
	if err != nil {
		return err
	}
	set.acquirableNotFound = on
	return nil
}

// ScaleSetStatisticsOf are a set's statistics now.
func (s *Server) ScaleSetStatisticsOf(setID int64) (ScaleSetStatistics, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	set, err := s.setLocked(setID)
	if err != nil {
		return ScaleSetStatistics{}, err
	}
	return s.statistics(set), nil
}
