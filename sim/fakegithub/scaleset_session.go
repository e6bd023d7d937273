package fakegithub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// A set's one message session: who holds the set, its queue and the token
// that reads it.

// queueURL is the session's messageQueueUrl, in the real service's form: a
// path under the service with the session in the query. GitHub's client uses
// it as given, adding only lastMessageId to a GET's query and /{messageId} to
// a DELETE's path.
func (s *Server) queueURL(set *scaleSet, sess *setSession) string {
	return fmt.Sprintf("%s%s%s/%d/messages?sessionId=%s", strings.TrimSuffix(s.URL, "/"), actionsServicePrefix, setsPath, set.ID, sess.ID)
}

func (s *Server) sessionJSON(set *scaleSet, queueURL string) map[string]any {
	sess := set.session
	return map[string]any{
		"sessionId": sess.ID, "ownerName": sess.Owner,
		"messageQueueUrl":         queueURL,
		"messageQueueAccessToken": sess.Token,
		"statistics":              s.statistics(set),
		"runnerScaleSet":          set.json(),
	}
}

// live reports whether the set's session holds it now. Callers hold s.mu.
func (s *Server) live(set *scaleSet) bool {
	return set.session != nil && s.now().Before(set.session.Expires)
}

// touch keeps a session alive for SessionTTL more: a poll or a refresh.
func (s *Server) touch(sess *setSession) {
	if until := s.now().Add(s.actions.opts.SessionTTL); until.After(sess.Expires) {
		sess.Expires = until
	}
}

// openSession gives the set a new session of owner. Callers hold s.mu.
func (s *Server) openSession(set *scaleSet, owner string) *setSession {
	set.session = &setSession{ID: newActivityID(), Owner: owner}
	s.touch(set.session)
	s.newSessionToken(set.session)
	return set.session
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request, set *scaleSet) {
	var req struct {
		OwnerName string `json:"ownerName"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	if s.live(set) {
		s.writeActionsErrorLocked(w, http.StatusConflict, excSessionConflict,
			fmt.Sprintf("The actions runner scale set %s already has an active session for owner %s.", set.Name, set.session.Owner))
		return
	}
	sess := s.openSession(set, req.OwnerName)
	queue := s.queueURL(set, sess)
	if f := &s.actions.faults; f.emptyQueueURLs > 0 {
		f.emptyQueueURLs--
		queue = ""
	}
	s.writeActionsJSONLocked(w, http.StatusOK, s.sessionJSON(set, queue))
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

// refreshSession renews the session's token; 404 once it expired or was
// evicted.
func (s *Server) refreshSession(w http.ResponseWriter, r *http.Request, set *scaleSet) {
	sess, ok := s.sessionOf(set, r.PathValue("sid"))
	if !ok {
		s.writeActionsErrorLocked(w, http.StatusNotFound, excSessionNotFound, "No session found with id "+r.PathValue("sid"))
		return
	}
	s.touch(sess)
	s.newSessionToken(sess)
	s.writeActionsJSONLocked(w, http.StatusOK, s.sessionJSON(set, s.queueURL(set, sess)))
}

// deleteSession ends the live session (204). A session that expired, or is
// gone, answers 400 RunnerScaleSetSessionExpiredException, as the real
// service did in ARC issue #4285.
func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request, set *scaleSet) {
	if _, ok := s.sessionOf(set, r.PathValue("sid")); !ok {
		s.writeActionsErrorLocked(w, http.StatusBadRequest, excSessionExpired, "The session "+r.PathValue("sid")+" has expired.")
		return
	}
	set.session = nil
	w.WriteHeader(http.StatusNoContent)
}
