package fakegithub

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// actionsServicePrefix is the path of the fake Actions service's base URL.
const actionsServicePrefix = "/actions-service/"

// fakeJWT makes a token shaped as a JWT whose claims a client may read
// without verifying it, as scale set clients read the admin token's exp.
func fakeJWT(expires time.Time) string {
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))
	claims, _ := json.Marshal(map[string]any{"exp": expires.Unix(), "nbf": expires.Add(-time.Hour).Unix(), "jti": newToken()})
	return header + "." + enc.EncodeToString(claims) + "." + enc.EncodeToString([]byte(newToken()))
}

// jwtExpiry reads a fake JWT's exp.
func jwtExpiry(token string) (time.Time, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		Exp int64 `json:"exp"`
	}
	if json.Unmarshal(raw, &claims) != nil || claims.Exp == 0 {
		return time.Time{}, false
	}
	return time.Unix(claims.Exp, 0), true
}

// runnerRegistration answers POST /actions/runner-registration: a registration
// token (RemoteAuth) of the configuration URL's scope buys the Actions
// service's URL and an admin token for that scope.
func (s *Server) runnerRegistration(w http.ResponseWriter, r *http.Request) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "RemoteAuth ")
	var req struct {
		URL         string `json:"url"`
		RunnerEvent string `json:"runner_event"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.URL == "" {
		writeError(w, http.StatusBadRequest, "url is required")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.actions
	if a.faults.registrationRefusals > 0 {
		a.faults.registrationRefusals--
		writeError(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	issued, known := s.tokens[token]
	if !ok || !known || !s.now().Before(issued.expiresAt) {
		writeError(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	if scope, ok := scopeOfConfigURL(req.URL); !ok || scope != issued.scope {
		writeError(w, http.StatusForbidden, "the registration token is not for "+req.URL)
		return
	}
	admin := fakeJWT(s.now().Add(a.opts.AdminTokenTTL))
	a.adminTokens[admin] = issued.scope
	writeJSON(w, http.StatusOK, map[string]string{"url": strings.TrimSuffix(s.URL, "/") + actionsServicePrefix, "token": admin, "token_schema": "OAuthAccessToken"})
}

// scopeOfConfigURL is the scope (orgs/o, repos/o/r, enterprises/e) of a
// configuration URL: https://host/org, https://host/owner/repo or
// https://host/enterprises/ent.
func scopeOfConfigURL(raw string) (string, bool) {
	rest := raw
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	switch {
	case len(parts) == 3 && parts[1] == "enterprises":
		return "enterprises/" + parts[2], true
	case len(parts) == 3:
		return "repos/" + parts[1] + "/" + parts[2], true
	case len(parts) == 2:
		return "orgs/" + parts[1], true
	}
	return "", false
}

// adminScope is the scope of the request's admin token, or false when it has
// none that is live. Callers hold s.mu.
func (s *Server) adminScope(r *http.Request) (string, bool) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return "", false
	}
	scope, ok := s.actions.adminTokens[token]
	if !ok {
		return "", false
	}
	if exp, ok := jwtExpiry(token); !ok || !s.now().Before(exp) {
		return "", false
	}
	return scope, true
}
