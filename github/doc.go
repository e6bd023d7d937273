// Package github is arcflow's GitHub REST client, built on go-github: PAT and GitHub
// App auth, GitHub Enterprise Server URLs, an RFC 7234 HTTP cache per credential set, a
// shared registration-token cache and typed rate-limit errors.
package github
