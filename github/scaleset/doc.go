// Package scaleset is arcflow's client of GitHub's Actions service for runner
// scale sets: the service a scale-set listener long-polls, so that no inbound
// endpoint is needed. It trades a registration token for the service's admin
// token, finds or creates scale sets, holds sessions, reads and deletes their
// messages, acquires jobs (GitHub Enterprise Server) and makes JIT runner
// configurations.
//
// Tokens (registration, admin, session) and JIT configurations stay in the
// process: nothing this package returns or logs holds one, and its errors
// carry the service's typeName and message only.
package scaleset
