package registry

import (
	"fmt"
	"strings"
)

// Scope is where runners register: one repository, organization or enterprise.
type Scope struct {
	Enterprise   string `json:"enterprise,omitempty"`
	Organization string `json:"organization,omitempty"`
	// Repository is owner/name.
	Repository string `json:"repository,omitempty"`
	// Credentials is the githubAPICredentialsFrom Secret, as namespace/name,
	// whose credentials act on the scope; empty means the worker's own. It is
	// a reference: the Secret is read in activities, never in a workflow.
	Credentials string `json:"credentials,omitempty"`
}

// String is the scope's REST path prefix: repos/o/r, orgs/o or enterprises/e. It is
// also the key of per-scope caches and the value of the scope search attribute.
func (s Scope) String() string {
	switch {
	case s.Repository != "":
		return "repos/" + s.Repository
	case s.Organization != "":
		return "orgs/" + s.Organization
	case s.Enterprise != "":
		return "enterprises/" + s.Enterprise
	}
	return ""
}

// Validate checks that exactly one field is set and the repository is owner/name.
func (s Scope) Validate() error {
	n := 0
	for _, v := range []string{s.Enterprise, s.Organization, s.Repository} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("scope %+v: exactly one of enterprise, organization and repository must be set", s)
	}
	if s.Repository != "" {
		if owner, name, ok := strings.Cut(s.Repository, "/"); !ok || owner == "" || name == "" || strings.Contains(name, "/") {
			return fmt.Errorf("scope: repository %q must be owner/name", s.Repository)
		}
	}
	return nil
}
