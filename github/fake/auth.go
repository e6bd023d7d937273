package fake

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
