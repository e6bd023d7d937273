// Package credentials gives each githubAPICredentialsFrom Secret its own GitHub
// client, so one worker serves several organizations or GitHub Enterprise
// installations, each with its own HTTP cache and registration-token cache:
// GitHub calls grow with scopes per credential set, not with runners.
package credentials
