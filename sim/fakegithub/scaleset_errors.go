package fakegithub

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// actionsException is an error of the Actions service, by its short name.
// Handlers pass one of the values below and writeActionsErrorLocked writes its
// full .NET form; a struct, so no string literal can stand for one and no
// answer carries a short name: a client that compares typeName to a short
// name fails against the fake as it would against the service.
type actionsException struct{ short string }

var (
	excSetNotFound     = actionsException{"RunnerScaleSetNotFoundException"}
	excSetExists       = actionsException{"RunnerScaleSetExistsException"}
	excSessionConflict = actionsException{"RunnerScaleSetSessionConflictException"}
	excSessionNotFound = actionsException{"RunnerScaleSetSessionNotFoundException"}
	excSessionExpired  = actionsException{"RunnerScaleSetSessionExpiredException"}
	excAgentExists     = actionsException{"AgentExistsException"}
	excAgentNotFound   = actionsException{"AgentNotFoundException"}
	excJobStillRunning = actionsException{"JobStillRunningException"}
	excArgument        = actionsException{"ArgumentException"}
)

// The assemblies (and namespaces) of the service's exceptions.
const (
	runtimeWebAPI         = "GitHub.Actions.Runtime.WebApi"
	distributedTaskWebAPI = "GitHub.DistributedTask.WebApi"
)

// typeName is the exception's name as the service sends it, namespace and
// assembly included, e.g. "GitHub.Actions.Runtime.WebApi.
// RunnerScaleSetSessionConflictException, GitHub.Actions.Runtime.WebApi"
// (quoted from a real answer in ARC issue #4285). Scale set errors live in
// the runtime assembly, agent and job errors in the distributed task one.
func (e actionsException) typeName() string {
	assembly := distributedTaskWebAPI
	if strings.HasPrefix(e.short, "RunnerScaleSet") {
		assembly = runtimeWebAPI
	}
	return assembly + "." + e.short + ", " + assembly
}

// writeActionsErrorLocked answers with the Actions service's error shape,
// which clients branch on by typeName; writeActionsJSONLocked writes a JSON
// body, with a UTF-8 BOM in front when the test asked for one. Callers hold s.mu.
func (s *Server) writeActionsErrorLocked(w http.ResponseWriter, status int, exc actionsException, message string) {
	s.writeActionsJSONLocked(w, status, map[string]string{"typeName": exc.typeName(), "message": message})
}

func (s *Server) writeActionsJSONLocked(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	if s.actions.faults.bom {
		_, _ = w.Write([]byte("\xef\xbb\xbf"))
	}
	_ = json.NewEncoder(w).Encode(v)
}

// stampActionsResponse gives an answer of the Actions service (URL under
// actionsServicePrefix) the ids the real one sends, which clients keep in
// their errors because GitHub support asks for them, and records the
// request's User-Agent. runner-registration, on the REST API's host, gets
// only X-GitHub-Request-Id.
func (s *Server) stampActionsResponse(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-GitHub-Request-Id", newRequestID())
	if !strings.HasPrefix(r.URL.Path, actionsServicePrefix) {
		return
	}
	w.Header().Set("ActivityId", newActivityID())
	a := s.actions
	a.userAgentsMu.Lock()
	defer a.userAgentsMu.Unlock()
	ua := r.Header.Get("User-Agent")
	a.lastUserAgent = ua
	for _, seen := range a.userAgents {
		if seen == ua {
			return
		}
	}
	a.userAgents = append(a.userAgents, ua)
}

// ActionsUserAgents are the distinct User-Agent headers of Actions service
// requests, in the order first seen: GitHub's clients name themselves, their
// version and the set there, and a test checks that ours does too.
func (s *Server) ActionsUserAgents() []string {
	s.actions.userAgentsMu.Lock()
	defer s.actions.userAgentsMu.Unlock()
	return append([]string(nil), s.actions.userAgents...)
}

// LastActionsUserAgent is the User-Agent of the latest Actions service request.
func (s *Server) LastActionsUserAgent() string {
	s.actions.userAgentsMu.Lock()
	defer s.actions.userAgentsMu.Unlock()
	return s.actions.lastUserAgent
}

// newActivityID is a random UUID (version 4), the form of the service's
// ActivityId.
func newActivityID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// newRequestID is shaped as GitHub's X-GitHub-Request-Id, e.g.
// "C0DE:1A2B:3C4D5E:6F7A8B:65F0A1B2".
func newRequestID() string {
	var b [18]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%04X:%04X:%06X:%06X:%08X", binary.BigEndian.Uint16(b[0:2]), binary.BigEndian.Uint16(b[2:4]),
		binary.BigEndian.Uint32(b[4:8])&0xffffff, binary.BigEndian.Uint32(b[8:12])&0xffffff, binary.BigEndian.Uint32(b[12:16]))
}
