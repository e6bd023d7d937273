package fakegithub

import (
	"net/http"
	"strings"
	"time"
)

// appInstallationToken answers ghinstallation's token exchange: a JWT signed by
// the App's key buys an installation token.
func (s *Server) appInstallationToken(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		writeError(w, http.StatusUnauthorized, "A JSON web token could not be decoded")
		return
	}
	expires := s.now().Add(time.Hour).UTC().Truncate(time.Second)
	writeJSON(w, http.StatusCreated, map[string]any{"token": "ghs_" + newToken(), "expires_at": expires.Format(time.RFC3339)})
}

// authenticated refuses API calls that carry no credentials, as GitHub does for
// the runner endpoints.
func authenticated(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	return strings.HasPrefix(auth, "Bearer ") || strings.HasPrefix(auth, "token ")
}

// RequireToken makes every call for owner (an organization, a repository
// owner or an enterprise) need that token, as a PAT or an App installation of
// one organization cannot act on another: other credentials get 403.
func (s *Server) RequireToken(owner, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ownerTokens[owner] = token
}

// permitted reports whether the request's credentials may act on the owner its
// path names.
func (s *Server) permitted(r *http.Request) bool {
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
	if len(parts) < 2 || (parts[0] != "orgs" && parts[0] != "repos" && parts[0] != "enterprises") {
		return true
	}
	s.mu.Lock()
	want, restricted := s.ownerTokens[parts[1]]
	s.mu.Unlock()
	if !restricted {
		return true
	}
	auth := r.Header.Get("Authorization")
	return auth == "Bearer "+want || auth == "token "+want
}
