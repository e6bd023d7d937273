package fakegithub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxJobMessages is how many job messages the service puts in one message.
const maxJobMessages = 50

func (s *Server) sessionJSON(set *scaleSet) map[string]any {
	sess := set.session
	return map[string]any{
		"sessionId": sess.ID, "ownerName": sess.Owner,
		"messageQueueUrl":         strings.TrimSuffix(s.URL, "/") + actionsServicePrefix + "_queue/" + sess.ID,
		"messageQueueAccessToken": sess.Token,
		"statistics":              s.statistics(set),
		"runnerScaleSet":          set.json(),
	}
}

// live reports whether the set's session holds it now. Callers hold s.mu.
func (s *Server) live(set *scaleSet) bool {
	return set.session != nil && s.now().Before(set.session.LastSeen.Add(s.actions.opts.SessionTTL))
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request, set *scaleSet) {
	var req struct {
		OwnerName string `json:"ownerName"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	if s.live(set) {
		s.writeActionsErrorLocked(w, http.StatusConflict, "RunnerScaleSetSessionConflictException",
			fmt.Sprintf("runner scale set %s already has an active session for owner %s", set.Name, set.session.Owner))
		return
	}
	set.session = &setSession{ID: newToken()[5:37], Owner: req.OwnerName, LastSeen: s.now()}
	s.newSessionToken(set.session)
	s.writeActionsJSONLocked(w, http.StatusOK, s.sessionJSON(set))
}

func (s *Server) newSessionToken(sess *setSession) {
	sess.TokenExpires = s.now().Add(s.actions.opts.SessionTokenTTL)
	sess.Token = fakeJWT(sess.TokenExpires)
}

// sessionOf is the set's live session of that id, if there is one. Callers
// hold s.mu.
func (s *Server) sessionOf(set *scaleSet, id string) (*setSession, bool) {
	if !s.live(set) || set.session.ID != id {
		return nil, false
	}
	return set.session, true
}

func (s *Server) refreshSession(w http.ResponseWriter, r *http.Request, set *scaleSet) {
	sess, ok := s.sessionOf(set, r.PathValue("sid"))
	if !ok {
		s.writeActionsErrorLocked(w, http.StatusNotFound, "RunnerScaleSetSessionNotFoundException", "session not found")
		return
	}
	sess.LastSeen = s.now()
	s.newSessionToken(sess)
	s.writeActionsJSONLocked(w, http.StatusOK, s.sessionJSON(set))
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request, set *scaleSet) {
	if set.session != nil && set.session.ID == r.PathValue("sid") {
		set.session = nil
	}
	w.WriteHeader(http.StatusNoContent)
}

// sessionByToken finds the set and live session a queue request is for, by
// the session id in the path and the token it carries. Callers hold s.mu.
func (s *Server) sessionByToken(r *http.Request) (*scaleSet, *setSession, int) {
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	sid := r.PathValue("sid")
	for _, set := range s.actions.sets {
		if sess, ok := s.sessionOf(set, sid); ok {
			if sess.Token != token || !s.now().Before(sess.TokenExpires) {
				return nil, nil, http.StatusUnauthorized
			}
			sess.LastSeen = s.now()
			return set, sess, 0
		}
	}
	return nil, nil, http.StatusNotFound
}

// nextMessage is the message a poll with lastMessageId last gets: job events
// not yet sent become a new message first. Callers hold s.mu.
func (s *Server) nextMessage(set *scaleSet, last int64) (setMessage, bool) {
	if len(set.pending) > 0 {
		n := min(len(set.pending), maxJobMessages)
		body, _ := json.Marshal(set.pending[:n])
		set.pending = set.pending[n:]
		s.actions.nextMessageID++
		set.messages = append(set.messages, setMessage{ID: s.actions.nextMessageID, Body: string(body), Statistics: s.statistics(set)})
	}
	for _, m := range set.messages {
		if m.ID > last {
			return m, true
		}
	}
	return setMessage{}, false
}

// pollMessage is the long poll: the next message, or 202 after PollHold.
func (s *Server) pollMessage(w http.ResponseWriter, r *http.Request) {
	last, _ := strconv.ParseInt(r.URL.Query().Get("lastMessageId"), 10, 64)
	capacity, capErr := strconv.Atoi(r.Header.Get("X-ScaleSetMaxCapacity"))
	s.mu.Lock()
	if s.queueFault(w) {
		s.mu.Unlock()
		return
	}
	set, _, status := s.sessionByToken(r)
	if status != 0 {
		s.mu.Unlock()
		w.WriteHeader(status)
		return
	}
	if capErr == nil && capacity >= 0 && capacity != set.maxCapacity {
		set.maxCapacity = capacity
		s.assignToSets()
	}
	deadline := time.After(s.actions.opts.PollHold)
	for {
		if _, alive := s.actions.sets[set.ID]; !alive {
			s.mu.Unlock()
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if m, ok := s.nextMessage(set, last); ok {
			body := map[string]any{"messageId": m.ID, "messageType": "RunnerScaleSetJobMessages", "body": m.Body, "statistics": m.Statistics}
			s.writeActionsJSONLocked(w, http.StatusOK, body)
			s.mu.Unlock()
			return
		}
		changed := s.actions.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			w.WriteHeader(http.StatusAccepted)
			return
		case <-r.Context().Done():
			return
		}
		s.mu.Lock()
	}
}

// queueFault answers a poll with an injected fault. Callers hold s.mu.
func (s *Server) queueFault(w http.ResponseWriter) bool {
	f := &s.actions.faults
	switch {
	case f.serverErrors > 0:
		f.serverErrors--
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
	case f.tooManyRequests > 0:
		f.tooManyRequests--
		w.Header().Set("Retry-After", strconv.Itoa(int(f.retryAfter.Seconds())))
		http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
	case f.emptyOKs > 0:
		f.emptyOKs--
		w.WriteHeader(http.StatusOK)
	default:
		return false
	}
	return true
}

func (s *Server) deleteMessage(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("mid"), 10, 64)
	s.mu.Lock()
	if held := s.actions.faults.deletesHeld; held != nil {
		s.mu.Unlock()
		select {
		case <-held:
		case <-r.Context().Done():
			return
		}
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	set, _, status := s.sessionByToken(r)
	if status != 0 {
		w.WriteHeader(status)
		return
	}
	kept := set.messages[:0]
	for _, m := range set.messages {
		if m.ID != id {
			kept = append(kept, m)
		}
	}
	set.messages = kept
	w.WriteHeader(http.StatusNoContent)
}

// acquireJobs answers GHES's acquire: the listed request ids still available
// to the set are assigned to it; the answer lists those acquired (a subset
// when others took some or capacity ran out).
func (s *Server) acquireJobs(w http.ResponseWriter, r *http.Request) {
	var ids []int64
	if err := json.NewDecoder(r.Body).Decode(&ids); err != nil {
		http.Error(w, "a JSON array of request ids is required", http.StatusBadRequest)
		return
	}
	setID, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	defer s.mu.Unlock()
	set, ok := s.actions.sets[setID]
	if !ok {
		s.writeActionsErrorLocked(w, http.StatusNotFound, "RunnerScaleSetNotFoundException", fmt.Sprintf("runner scale set %d not found", setID))
		return
	}
	if !s.live(set) || set.session.Token != token || !s.now().Before(set.session.TokenExpires) {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	want := map[int64]bool{}
	for _, id := range ids {
		want[id] = true
	}
	acquired := []int64{}
	for _, j := range s.sortedJobs() {
		if !want[j.set.RequestID] || j.set.WantsSet != set.ID || j.set.ScaleSetID != 0 || j.Status != "queued" {
			continue
		}
		if set.maxCapacity >= 0 && s.assignedTo(set.ID) >= set.maxCapacity {
			break
		}
		s.assignJob(j, set)
		acquired = append(acquired, j.set.RequestID)
	}
	s.writeActionsJSONLocked(w, http.StatusOK, map[string]any{"count": len(acquired), "value": acquired})
}

// acquirableJobs lists the jobs announced to the set and not yet acquired;
// 204 when there are none.
func (s *Server) acquirableJobs(w http.ResponseWriter, _ *http.Request, set *scaleSet) {
	var found []setJobMessage
	for _, j := range s.sortedJobs() {
		if j.set.WantsSet == set.ID && j.set.ScaleSetID == 0 && j.set.Announced && j.Status == "queued" {
			found = append(found, s.jobMessage("JobAvailable", j))
		}
	}
	if len(found) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.writeActionsJSONLocked(w, http.StatusOK, map[string]any{"count": len(found), "value": found})
}
