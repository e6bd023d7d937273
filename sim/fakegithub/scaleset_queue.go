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

// jobMessagesType is the messageType of the envelope of job messages.
const jobMessagesType = "RunnerScaleSetJobMessages"

// queueSession finds the set and live session a queue request (GET or
// DELETE on messageQueueUrl) is for, or answers for it: 400 when the query
// carries more than the service put in the URL and lastMessageId (a client
// that adds api-version to it, say), 404 when the session expired or was
// evicted, 401 when the session token is wrong or expired. Callers hold s.mu.
func (s *Server) queueSession(w http.ResponseWriter, r *http.Request) (*scaleSet, *setSession, bool) {
	query := r.URL.Query()
	for key := range query {
		if key != "sessionId" && key != "lastMessageId" {
			s.writeActionsErrorLocked(w, http.StatusBadRequest, excArgument,
				fmt.Sprintf("The message queue URL takes no parameter %q: use it as the session gave it.", key))
			return nil, nil, false
		}
	}
	sid := query.Get("sessionId")
	if sid == "" {
		s.writeActionsErrorLocked(w, http.StatusBadRequest, excArgument, "sessionId is required.")
		return nil, nil, false
	}
	setID, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	set, ok := s.actions.sets[setID]
	var sess *setSession
	if ok {
		sess, ok = s.sessionOf(set, sid)
	}
	if !ok {
		s.writeActionsErrorLocked(w, http.StatusNotFound, excSessionNotFound, "No session found with id "+sid)
		return nil, nil, false
	}
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if sess.Token != token || !s.now().Before(sess.TokenExpires) {
		w.WriteHeader(http.StatusUnauthorized)
		return nil, nil, false
	}
	s.touch(sess)
	return set, sess, true
}

// nextMessage is the message a poll with lastMessageId last gets: job events
// not yet sent become a new message first. Callers hold s.mu.
func (s *Server) nextMessage(set *scaleSet, last int64) (setMessage, bool) {
	s.flushPending(set)
	for _, m := range set.messages {
		if m.ID > last {
			return m, true
		}
	}
	return setMessage{}, false
}

// flushPending puts the job events not yet sent into a new message, at most
// maxJobMessages of them. Callers hold s.mu.
func (s *Server) flushPending(set *scaleSet) {
	if len(set.pending) == 0 {
		return
	}
	n := min(len(set.pending), maxJobMessages)
	body, _ := json.Marshal(set.pending[:n])
	set.pending = set.pending[n:]
	s.actions.nextMessageID++
	set.messages = append(set.messages, setMessage{ID: s.actions.nextMessageID, Body: string(body), Statistics: s.statistics(set)})
}

// pollMessage is the long poll: the next message, or 202 after PollHold. A
// session that ends while the poll waits gets 404, as a new poll would.
func (s *Server) pollMessage(w http.ResponseWriter, r *http.Request) {
	last, _ := strconv.ParseInt(r.URL.Query().Get("lastMessageId"), 10, 64)
	capacity, capErr := strconv.Atoi(r.Header.Get("X-ScaleSetMaxCapacity"))
	s.mu.Lock()
	set, sess, ok := s.queueSession(w, r)
	if !ok || s.queueFault(w) {
		s.mu.Unlock()
		return
	}
	if capErr == nil && capacity >= 0 && capacity != set.maxCapacity {
		set.maxCapacity = capacity
		s.assignToSets()
	}
	deadline := time.After(s.actions.opts.PollHold)
	for {
		if _, held := s.sessionOf(set, sess.ID); !held || s.actions.sets[set.ID] != set {
			s.writeActionsErrorLocked(w, http.StatusNotFound, excSessionNotFound, "No session found with id "+sess.ID)
			s.mu.Unlock()
			return
		}
		if m, ok := s.nextMessage(set, last); ok {
			kind := m.Type
			if kind == "" {
				kind = jobMessagesType
			}
			body := map[string]any{"messageId": m.ID, "messageType": kind, "body": m.Body, "statistics": m.Statistics}
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

// deleteMessage acknowledges a message: 204, or 404 when the id is not (or
// no more) in the queue, as on a second delete of the same message.
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
	set, _, ok := s.queueSession(w, r)
	if !ok {
		return
	}
	for i, m := range set.messages {
		if m.ID == id {
			set.messages = append(set.messages[:i], set.messages[i+1:]...)
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	http.Error(w, fmt.Sprintf("message %d is not in the queue", id), http.StatusNotFound)
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
		s.writeActionsErrorLocked(w, http.StatusNotFound, excSetNotFound, fmt.Sprintf("runner scale set %d not found", setID))
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
func (s *Server) acquirableJobs(w http.ResponseWriter, r *http.Request, set *scaleSet) {
	if set.acquirableNotFound {
		http.NotFound(w, r)
		return
	}
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
