// Package credentials gives each githubAPICredentialsFrom Secret its own GitHub
// client, so one worker serves several organizations or GitHub Enterprise
// installations, each with its own HTTP cache and registration-token cache:
// GitHub calls grow with scopes per credential set, not with runners. A Secret
// (or the worker's own environment) that holds both a token and GitHub App keys
// is read as ARC reads it: the token is used, and the Secret gets an event
// saying so (tokenoverapp.go).
package credentials
