package fakegithub

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Server is a stateful fake of GitHub's REST API for self-hosted runners. Start it
// with New and point the real go-github client at URL.
type Server struct {
	mu     sync.Mutex
	now    func() time.Time
	nextID int64
	tokens map[string]issuedToken
	// ownerTokens: owner -> the only token that may act on it (RequireToken).
	ownerTokens map[string]string
	// jitCredentials: the credential inside each unused JIT configuration -> runner ID.
	jitCredentials map[string]int64
	runners        map[int64]*runner
	runs           map[int64]*run
	jobs           map[int64]*job
	groups         map[string][]*RunnerGroup // by organization
	reruns         []RerunInfo
	// noActionsWrite: credentials lack actions: write (SetActionsWrite).
	noActionsWrite bool
	// calls has its own lock: a call is logged while a handler may hold mu.
	callsMu sync.Mutex
	calls   []Call
	faults  faults
	// actions is the Actions service behind runner scale sets.
	actions *actionsService
	// listen hears job changes; it has its own lock so it can be set at any time.
	listenMu sync.Mutex
	listen   func(JobEvent)
	// ListMaxAge is the max-age GitHub sends on list endpoints (60 s).
	listMaxAge time.Duration
	rateLimit  int
	// window is the rate-limit window EnforceRateLimit set (zero: the limit
	// is only reported); windowStart and windowCalls track the current one.
	window      time.Duration
	windowStart time.Time
	windowCalls int

	mux      *http.ServeMux
	http     *http.Server
	listener net.Listener
	// URL is the server's base URL; clients use it as GITHUB_URL.
	URL string
}

// Options configure a Server.
type Options struct {
	// Now is the server's clock; nil means time.Now.
	Now func() time.Time
	// ListMaxAge overrides the Cache-Control max-age of list responses (default 60 s).
	ListMaxAge time.Duration
	// Addr is the listen address; empty means 127.0.0.1 on a free port.
	Addr string
	// Actions sets the timings and mode of the Actions service that runner
	// scale set listeners talk to.
	Actions ActionsOptions
}

// New starts a fake GitHub on loopback.
func New(opts Options) (*Server, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ListMaxAge == 0 {
		opts.ListMaxAge = 60 * time.Second
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	s := &Server{
		now:            opts.Now,
		nextID:         1000,
		tokens:         map[string]issuedToken{},
		jitCredentials: map[string]int64{},
		ownerTokens:    map[string]string{},
		runners:        map[int64]*runner{},
		runs:           map[int64]*run{},
		jobs:           map[int64]*job{},
		groups:         map[string][]*RunnerGroup{},
		listMaxAge:     opts.ListMaxAge,
		rateLimit:      5000,
		actions:        newActionsService(opts.Actions),
		mux:            http.NewServeMux(),
	}
	s.routes()
	l, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("fake github: listen: %w", err)
	}
	s.listener = l
	s.URL = "http://" + l.Addr().String() + "/"
	// Bodies are small JSON; a client that stalls one, or idles between
	// requests, gives its connection up, as with the real API. No write timeout:
	// a slow reader of a long list page is a test's own business.
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() { _ = s.http.Serve(l) }()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.http.Close() }

// ServeHTTP serves the API at / and, for GitHub Enterprise Server clients, at /api/v3/.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if rest, ok := strings.CutPrefix(r.URL.Path, "/api/v3"); ok {
		r = r.Clone(r.Context())
		r.URL.Path = rest
	}
	if r.URL.Path == "/actions/runner-registration" || strings.HasPrefix(r.URL.Path, actionsServicePrefix) {
		// The Actions service has its own credentials, faults and headers.
		s.stampActionsResponse(w, r)
		rec := &statusRecorder{ResponseWriter: w, onHeader: func(status int) { s.record(r, path, status) }}
		s.mux.ServeHTTP(rec, r)
		return
	}
	if s.applyFaults(w, r) {
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/_fake/") && !authenticated(r) {
		writeError(w, http.StatusUnauthorized, "Requires authentication")
		s.record(r, path, http.StatusUnauthorized)
		return
	}
	if !s.permitted(r) {
		writeError(w, http.StatusForbidden, "Resource not accessible by personal access token")
		s.record(r, path, http.StatusForbidden)
		return
	}
	// The call is logged when its status is written, before the client can see
	// the response, so a test that reads the log right after a call finds it.
	rec := &statusRecorder{ResponseWriter: w, onHeader: func(status int) { s.record(r, path, status) }}
	s.mux.ServeHTTP(rec, r)
	if !rec.wrote {
		rec.WriteHeader(http.StatusOK)
	}
}

// scopeRoutes registers a handler under the repository, organization and
// enterprise forms of a path suffix.
func (s *Server) scopeRoutes(method, suffix string, h func(http.ResponseWriter, *http.Request, string)) {
	for _, prefix := range []string{"/repos/{owner}/{repo}", "/orgs/{org}", "/enterprises/{enterprise}"} {
		s.mux.HandleFunc(method+" "+prefix+suffix, func(w http.ResponseWriter, r *http.Request) {
			h(w, r, scopeOf(r))
		})
	}
}

func (s *Server) routes() {
	s.scopeRoutes("POST", "/actions/runners/registration-token", s.createRegistrationToken)
	s.scopeRoutes("GET", "/actions/runners", s.listRunners)
	s.scopeRoutes("DELETE", "/actions/runners/{id}", s.removeRunner)
	s.scopeRoutes("POST", "/actions/runners/generate-jitconfig", s.generateJITConfig)
	s.mux.HandleFunc("GET /repos/{owner}/{repo}/actions/runs", s.listWorkflowRuns)
	s.mux.HandleFunc("GET /repos/{owner}/{repo}/actions/runs/{run}", s.getWorkflowRun)
	s.mux.HandleFunc("GET /repos/{owner}/{repo}/actions/runs/{run}/jobs", s.listWorkflowJobs)
	s.mux.HandleFunc("POST /repos/{owner}/{repo}/actions/jobs/{job}/rerun", s.rerunJob)
	s.mux.HandleFunc("GET /orgs/{org}/actions/runner-groups", s.listRunnerGroups)
	s.mux.HandleFunc("POST /app/installations/{id}/access_tokens", s.appInstallationToken)
	s.actionsRoutes()
	s.controlRoutes()
}

// scopeOf is the scope key of a request: repos/o/r, orgs/o or enterprises/e.
func scopeOf(r *http.Request) string {
	switch {
	case r.PathValue("repo") != "":
		return "repos/" + r.PathValue("owner") + "/" + r.PathValue("repo")
	case r.PathValue("org") != "":
		return "orgs/" + r.PathValue("org")
	default:
		return "enterprises/" + r.PathValue("enterprise")
	}
}

type statusRecorder struct {
	http.ResponseWriter
	onHeader func(status int)
	wrote    bool
}

func (r *statusRecorder) WriteHeader(status int) {
	if !r.wrote {
		r.wrote = true
		r.onHeader(status)
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if !r.wrote {
		r.WriteHeader(http.StatusOK)
	}
	return r.ResponseWriter.Write(b)
}
